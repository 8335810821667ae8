"""Gemini CLI's settings.json (core/gemini_settings.py) and the one layering of settings
(core/settings.resolve_settings): defaults < settings.json < environment < flags / LSP settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_lens.core.gemini_settings import (
    GeminiSettings,
    context_filenames,
    expand_env,
    read_gemini_settings,
    settings_paths,
    strip_json_comments,
)
from memory_lens.core.imports import expand_imports
from memory_lens.core.settings import (
    SettingsError,
    parse_count,
    parse_dir,
    parse_filenames,
    resolve_settings,
    with_agent_settings,
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home" / ".gemini").mkdir(parents=True)
    (tmp_path / "proj" / ".gemini").mkdir(parents=True)
    return tmp_path / "home"


def user(home: Path, data: object) -> Path:
    path = home / ".gemini" / "settings.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def project(home: Path, data: object) -> Path:
    path = home.parent / "proj" / ".gemini" / "settings.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def trust(home: Path, rules: dict) -> None:
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps(rules))


def read(home: Path, environ: dict | None = None) -> GeminiSettings:
    return read_gemini_settings(home.parent / "proj", home, environ or {})


# context.fileName as Gemini's setGeminiMdFilename applies it ---------------------------------------

def test_file_name_string_keeps_gemini_md_after_it(home: Path) -> None:
    user(home, {"context": {"fileName": "AGENTS.md"}})
    assert read(home).filenames == ("AGENTS.md", "GEMINI.md")


def test_file_name_list_trimmed_normalised_once_each() -> None:
    assert context_filenames([" CLAUDE.md ", "./AGENTS.md", "CLAUDE.md", "", "GEMINI.md"]) == (
        "CLAUDE.md", "AGENTS.md", "GEMINI.md")
    assert context_filenames([]) == ("GEMINI.md",)


def test_no_settings_file_gives_nothing(home: Path) -> None:
    loaded = read(home)
    assert (loaded.filenames, loaded.boundary_markers, loaded.import_format, loaded.files, loaded.warnings) == (
        None, None, None, (), ())


# Which files, which wins ---------------------------------------------------------------------------

def test_trusted_project_wins_key_by_key_and_lists_replace(home: Path) -> None:
    user(home, {"context": {"fileName": ["CLAUDE.md"], "importFormat": "flat",
                            "memoryBoundaryMarkers": [".git", "package.json"]}})
    project(home, {"context": {"fileName": "AGENTS.md", "memoryBoundaryMarkers": [".hg"]}})
    trust(home, {str(home.parent / "proj"): "TRUST_FOLDER"})
    loaded = read(home)
    assert loaded.filenames == ("AGENTS.md", "GEMINI.md")
    assert loaded.boundary_markers == (".hg",)
    assert loaded.import_format == "flat"
    assert len(loaded.files) == 2


@pytest.mark.parametrize("rules, environ, user_data, trusted", [
    ({}, {}, {}, False),  # folder trust is on by default and no rule names the folder
    ({}, {"GEMINI_CLI_TRUST_WORKSPACE": "true"}, {}, True),
    ({}, {}, {"security": {"folderTrust": {"enabled": False}}}, True),
    ({"{proj}": "TRUST_FOLDER"}, {"GEMINI_RESTRICTED_MODE": "true"}, {}, False),
    ({"{proj}/x": "TRUST_PARENT"}, {}, {}, True),
    ({"{root}": "TRUST_FOLDER", "{proj}": "DO_NOT_TRUST"}, {}, {}, False),  # the longest rule wins
    ({"{root}": "TRUST_FOLDER"}, {}, {}, True),
])
def test_project_file_only_in_a_folder_gemini_trusts(home: Path, rules: dict, environ: dict, user_data: dict,
                                                     trusted: bool) -> None:
    user(home, user_data)
    project(home, {"context": {"fileName": "AGENTS.md"}})
    trust(home, {k.format(proj=home.parent / "proj", root=home.parent): v for k, v in rules.items()})
    assert (read(home, environ).filenames is not None) is trusted


def test_home_as_working_directory_reads_the_user_file_once(home: Path) -> None:
    user(home, {"context": {"importFormat": "flat"}})
    loaded = read_gemini_settings(home, home, {"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert loaded.files == (home / ".gemini" / "settings.json",)


def test_comments_and_environment_variables(home: Path) -> None:
    user(home, '{\n // a comment\n "context": {"fileName": ["$NAME", "${OTHER:-CLAUDE.md}"], /* x */\n'
               ' "importFormat": "fl//at"}}')
    loaded = read(home, {"NAME": "AGENTS.md"})
    assert loaded.filenames == ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
    assert loaded.import_format == "tree" and "neither" in loaded.warnings[0]  # "fl//at" is a string, kept whole
    assert strip_json_comments('{"a": "//x"} // y') == '{"a": "//x"}  '
    assert expand_env("$MISSING ${A}", {"A": "1"}) == "$MISSING 1"


# Unusable files: one warning naming the file, and ignored -----------------------------------------

@pytest.mark.parametrize("content, why", [
    ("{", "not valid JSON"),
    ("[1]", "expected a JSON object"),
    ('{"context": []}', '"context" must be an object'),
    ('{"context": {"fileName": ["a", 1]}}', "context.fileName must be a string or a list of strings"),
    ('{"context": {"memoryBoundaryMarkers": ".git"}}', "context.memoryBoundaryMarkers must be a list"),
    ('{"context": {"importFormat": 1}}', "context.importFormat must be"),
])
def test_malformed_file_is_one_warning_and_the_other_file_still_counts(home: Path, content: str, why: str) -> None:
    bad = user(home, content)
    project(home, {"context": {"fileName": "AGENTS.md"}})
    trust(home, {str(home.parent / "proj"): "TRUST_FOLDER"})
    loaded = read(home)
    assert len(loaded.warnings) == 1 and loaded.warnings[0].startswith(f"ignoring {bad}: ") and why in loaded.warnings[0]
    assert loaded.filenames == ("AGENTS.md", "GEMINI.md")


# The layering --------------------------------------------------------------------------------------

AGENT = GeminiSettings(filenames=("AGENTS.md", "GEMINI.md"), boundary_markers=("package.json",),
                       import_format="flat")


def test_layering_defaults_then_settings_json_then_environment_then_flags() -> None:
    assert resolve_settings(environ={}).filenames == ("GEMINI.md",)
    resolved = resolve_settings(environ={}, agent=AGENT)
    assert (resolved.filenames, resolved.boundary_markers, resolved.import_format) == (
        ("AGENTS.md", "GEMINI.md"), ("package.json",), "flat")
    assert resolve_settings(environ={"MEMORY_LENS_FILENAMES": "CLAUDE.md"}, agent=AGENT).filenames == ("CLAUDE.md",)
    assert resolve_settings(["X.md"], environ={"MEMORY_LENS_FILENAMES": "CLAUDE.md"}, agent=AGENT).filenames == (
        "X.md",)


def test_defaults_without_settings_json() -> None:
    resolved = resolve_settings(environ={})
    assert (resolved.boundary_markers, resolved.import_format, resolved.warnings) == ((".git",), "tree", ())


def test_empty_marker_list_is_kept() -> None:
    assert resolve_settings(environ={}, agent=GeminiSettings(boundary_markers=())).boundary_markers == ()


def test_settings_json_name_memory_lens_cannot_use_is_a_warning() -> None:
    resolved = resolve_settings(environ={}, agent=GeminiSettings(filenames=("docs/AGENTS.md", "GEMINI.md")))
    assert resolved.filenames == ("GEMINI.md",)
    assert resolved.warnings and "context.fileName" in resolved.warnings[0]


def test_shared_parsing() -> None:
    assert parse_filenames("AGENTS.md, GEMINI.md,,") == ("AGENTS.md", "GEMINI.md")
    assert parse_filenames(["A.md", "A.md"]) == ("A.md",)
    with pytest.raises(SettingsError):
        parse_filenames([1])
    assert parse_dir("~/x") == Path.home() / "x"
    for bad in ("", " ", "a\0b", 3):
        with pytest.raises(SettingsError):
            parse_dir(bad)
    assert parse_count(0, 0, "tokens") == 0
    for bad in (True, -1, 1.5, "3"):
        with pytest.raises(SettingsError):
            parse_count(bad, 0, "tokens")


# importFormat flat, offline (the differential suite checks it against Gemini CLI itself) ---------

def test_flat_format_as_gemini_writes_it(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.md").write_text(" A @./c.md and @./b.md \n")
    (tmp_path / "b.md").write_text("B @./a.md\n")
    (tmp_path / "c.md").write_text("C\n")
    text = "root @./a.md `@./c.md` @./b.md @./missing.md @../out.md\n"
    expanded = expand_imports(text, tmp_path / "GEMINI.md", import_format="flat")
    block = lambda key, body: f"--- File: {key} ---\n{body}\n--- End of File: {key} ---"  # noqa: E731
    # The first block is named after the file's directory; mentions are followed last to first.
    assert expanded.text == "\n\n".join([
        block(tmp_path, text.strip()),
        block(tmp_path / "b.md", "B @./a.md"),
        block(tmp_path / "a.md", "A @./c.md and @./b.md"),
        block(tmp_path / "c.md", "C"),
    ])
    # ./a.md came in through b.md first: a file already included is not listed again.
    assert [(n.target, n.status) for n in expanded.imports] == [
        ("./b.md", "imported"), ("./missing.md", "not-found"), ("../out.md", "outside-root")]
    assert [(n.target, n.status) for n in expanded.imports[0].children] == [("./a.md", "imported")]


def test_lsp_settings_win_over_settings_json_and_keep_the_rest() -> None:
    from memory_lens.lsp.config import ServerConfig, parse_config, to_settings

    base = resolve_settings(environ={}, agent=AGENT)  # what `memory-lens serve` starts with
    warnings: list[str] = []
    cfg = parse_config({"memoryLens": {"filenames": "CLAUDE.md, GEMINI.md", "globalDir": "~/g"}}, ServerConfig(),
                       warnings.append)
    resolved = to_settings(cfg, base)
    assert (resolved.filenames, resolved.global_dir) == (("CLAUDE.md", "GEMINI.md"), Path.home() / "g")
    assert (resolved.boundary_markers, resolved.import_format) == (("package.json",), "flat")
    assert to_settings(ServerConfig(), base).filenames == ("AGENTS.md", "GEMINI.md")
    bad = parse_config({"filenames": ["a/b.md"], "globalDir": " ", "tokenBudget": True}, ServerConfig(),
                       warnings.append)
    assert bad == ServerConfig() and len(warnings) == 3


def test_another_directory_s_layer_replaces_the_first_and_explicit_names_stay() -> None:
    """What the language server does per directory: the settings.json layer of one working
    directory replaced by another's, over the same explicit values."""
    from memory_lens.lsp.config import ServerConfig, parse_config, to_settings

    started = resolve_settings(environ={}, agent=AGENT)  # `serve` started in a project with AGENT
    assert not started.filenames_explicit
    other = with_agent_settings(started, GeminiSettings(filenames=("CLAUDE.md", "GEMINI.md")))
    assert (other.filenames, other.boundary_markers, other.import_format) == (
        ("CLAUDE.md", "GEMINI.md"), (".git",), "tree")
    assert with_agent_settings(started, GeminiSettings()) == resolve_settings(environ={})
    flagged = resolve_settings(["X.md"], environ={}, agent=AGENT)
    assert with_agent_settings(flagged, GeminiSettings(filenames=("CLAUDE.md",), import_format="flat")).filenames == (
        "X.md",)
    editor = to_settings(parse_config({"filenames": ["Y.md"]}, ServerConfig(), print), started)
    assert with_agent_settings(editor, GeminiSettings(filenames=("CLAUDE.md",))).filenames == ("Y.md",)


def test_settings_paths_are_what_read_gemini_settings_reads(home: Path) -> None:
    assert settings_paths(home / "p", environ={"GEMINI_CLI_HOME": str(home)}) == (
        home / ".gemini" / "settings.json", home / ".gemini" / "trustedFolders.json", home / "p" / ".gemini" /
        "settings.json")
    assert settings_paths(None, environ={"GEMINI_CLI_HOME": "/elsewhere"})[0] == Path("/elsewhere/.gemini/settings.json")


@pytest.mark.parametrize("user_data", [{"security": "x"}, {"security": {"folderTrust": 1}}, {"security": None}])
def test_odd_security_values_leave_the_folder_untrusted(home: Path, user_data: dict) -> None:
    user(home, user_data)
    project(home, {"context": {"fileName": "AGENTS.md"}})
    assert read(home).filenames is None


def test_a_fifo_or_huge_settings_file_is_a_warning_not_a_hang(home: Path) -> None:
    import os

    os.mkfifo(home / ".gemini" / "settings.json")
    loaded = read(home)
    assert len(loaded.warnings) == 1 and "not a regular file" in loaded.warnings[0]
    os.unlink(home / ".gemini" / "settings.json")
    user(home, "{" + " " * (1 << 20) + "}")
    loaded = read(home)
    assert len(loaded.warnings) == 1 and "over 1048576 bytes" in loaded.warnings[0]


def test_gemini_cli_home_moves_the_user_file(home: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    (other / ".gemini").mkdir(parents=True)
    (other / ".gemini" / "settings.json").write_text('{"context": {"importFormat": "flat"}}')
    user(home, {"context": {"importFormat": "tree"}})
    loaded = read_gemini_settings(tmp_path / "proj", None, {"GEMINI_CLI_HOME": str(other)})
    assert loaded.import_format == "flat" and loaded.files == (other / ".gemini" / "settings.json",)
