"""The agent views of `core/agents`: Codex's rules from the examples of its own tests
(`codex-rs/core/src/agents_md.rs` and its tests), Claude Code's from its memory documentation,
Wave's from seed 003, and the dispatch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_lens.core.agents import AGENTS, UnknownAgentError, agent_view, check_agent
from memory_lens.core.agents import claude, codex, wave
from memory_lens.core.agents.common import rust_trim
from memory_lens.core.settings import resolve_settings


def repo(tmp_path: Path, name: str = "repo") -> Path:
    root = tmp_path / name
    (root / ".git").mkdir(parents=True)
    return root


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


# Codex ------------------------------------------------------------------------------------

def codex_view(cwd: Path, home: Path, config: str | None = None):
    if config is not None:
        write(home / ".codex" / "config.toml", config)
    return codex.load_view(cwd, {})


def test_codex_small_doc_is_returned_verbatim(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "hello world")
    view = codex_view(root, home)
    assert view.text == "hello world"
    assert [(s.tier, s.loaded, s.cut_at) for s in view.sources] == [("project", True, None)]


def test_codex_doc_larger_than_limit_is_cut_bytewise(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "A" * 2048)
    view = codex_view(root, home, "project_doc_max_bytes = 1024\n")
    assert view.text == "A" * 1024
    assert view.sources[0].cut_at == 1024 and view.sources[0].bytes == 2048
    assert any("cuts this file at byte 1024 of 2048" in w for w in view.warnings)


def test_codex_finds_doc_in_repo_root_from_a_nested_directory(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    write(root / ".git", "gitdir: /path/to/actual/git/dir\n")  # .git may be a file
    write(root / "AGENTS.md", "root level doc")
    nested = root / "workspace" / "crate_a"
    nested.mkdir(parents=True)
    view = codex_view(nested, home)
    assert view.text == "root level doc" and view.project_root == root


def test_codex_zero_byte_limit_disables_docs(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "something")
    assert codex_view(root, home, "project_doc_max_bytes = 0\n").text == ""


def test_codex_user_instructions_and_project_doc_are_joined_with_the_marker(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "proj doc")
    write(home / ".codex" / "AGENTS.md", "  base instructions \n")
    assert codex_view(root, home).text == "base instructions\n\n--- project-doc ---\n\nproj doc"


def test_codex_user_override_wins_and_codex_home_is_honoured(tmp_path: Path, home: Path) -> None:
    chome = tmp_path / "ch"
    write(chome / "AGENTS.md", "plain")
    write(chome / "AGENTS.override.md", "override")
    view = codex.load_view(repo(tmp_path), {"CODEX_HOME": str(chome)})
    assert view.text == "override"
    assert [s.path.name for s in view.sources] == ["AGENTS.override.md"]


def test_codex_concatenates_root_and_cwd_docs_unchanged(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "root doc\n")
    write(root / "sub" / "AGENTS.md", "crate doc\n")
    assert codex_view(root / "sub", home).text == "root doc\n\n\ncrate doc\n"  # not trimmed


def test_codex_override_then_agents_then_fallback_per_directory(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "versioned")
    write(root / "AGENTS.override.md", "local")
    write(root / "a" / "EXAMPLE.md", "example")
    write(root / "a" / "b" / ".keep", "")
    config = 'project_doc_fallback_filenames = ["EXAMPLE.md"]\n'
    view = codex_view(root / "a" / "b", home, config)
    assert view.text == "local\n\nexample"
    assert [s.path.name for s in view.sources] == ["AGENTS.override.md", "EXAMPLE.md"]


def test_codex_budget_is_shared_root_first(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "0123456789")
    write(root / "sub" / "AGENTS.md", "abcdefghij")
    write(root / "sub" / "deeper" / "AGENTS.md", "never")
    view = codex_view(root / "sub" / "deeper", home, "project_doc_max_bytes = 14\n")
    assert view.text == "0123456789\n\nabcd"
    cut = view.sources[1]
    assert (cut.cut_at, cut.cut_line, cut.loaded) == (4, 1, True)
    assert not view.sources[2].loaded and "budget is used up" in view.sources[2].reason


def test_codex_cut_inside_a_character_is_decoded_with_replacement(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "ab\u00e9cd")  # é is two bytes: the cut falls between them
    view = codex_view(root, home, "project_doc_max_bytes = 3\n")
    assert view.text == "ab\ufffd" and view.sources[0].cut_at == 3


def test_codex_blank_doc_costs_no_budget_and_no_git_means_cwd_only(tmp_path: Path, home: Path) -> None:
    top = tmp_path / "plain"
    write(top / "AGENTS.md", "parent, not loaded without a root")
    write(top / "here" / "AGENTS.md", " \n\t\n")
    view = codex_view(top / "here", home)
    assert view.text == "" and view.project_root is None
    assert [s.reason for s in view.sources] == ["blank"]


def test_codex_configured_root_markers(tmp_path: Path, home: Path) -> None:
    top = tmp_path / "mono"
    write(top / ".hg" / "x", "")
    write(top / "AGENTS.md", "mono root")
    write(top / "pkg" / "AGENTS.md", "pkg")
    assert codex_view(top / "pkg", home, 'project_root_markers = [".hg"]\n').text == "mono root\n\npkg"


def test_codex_bad_config_falls_back_to_defaults_with_a_warning(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "doc")
    view = codex_view(root, home, "project_doc_max_bytes = 'lots'\n")
    assert view.text == "doc" and "project_doc_max_bytes" in view.warnings[0]


def test_rust_trim_keeps_what_rust_keeps() -> None:
    assert rust_trim("\u001c x \u3000\u0085") == "\u001c x"
    assert rust_trim("\ufeffx") == "\ufeffx"


# Claude Code -----------------------------------------------------------------------------

def claude_view(cwd: Path):
    return claude.load_view(cwd, {}, managed=cwd / "no-managed-file")


def test_claude_tiers_in_load_order(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(home / ".claude" / "CLAUDE.md", "user prefs")
    write(root / "CLAUDE.md", "project rules")
    write(root / "foo" / "CLAUDE.md", "foo rules")
    write(root / "foo" / ".claude" / "CLAUDE.md", "dot claude")
    write(root / "foo" / "bar" / "CLAUDE.local.md", "mine")
    write(root / "foo" / "bar" / "baz" / "CLAUDE.md", "below the cwd: loaded on demand only")
    view = claude_view(root / "foo" / "bar")
    assert [(s.path.relative_to(tmp_path).as_posix(), s.tier) for s in view.sources] == [
        ("home/.claude/CLAUDE.md", "user"), ("repo/CLAUDE.md", "project"), ("repo/foo/CLAUDE.md", "project"),
        ("repo/foo/.claude/CLAUDE.md", "project"), ("repo/foo/bar/CLAUDE.local.md", "local")]
    assert view.text.startswith(f"Contents of {home / '.claude' / 'CLAUDE.md'} "
                                "(user's private global instructions for all projects):\n\nuser prefs\n\n")
    assert view.text.endswith(f"Contents of {root / 'foo' / 'bar' / 'CLAUDE.local.md'} (user's private project "
                              "instructions, not checked in):\n\nmine")
    assert {s.when for s in view.sources} == {"start"}


def test_claude_import_of_agents_md_loads_the_imported_text(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "@AGENTS.md\n")
    write(root / "AGENTS.md", "- Use pnpm\n")
    view = claude_view(root)
    assert [(s.path.name, s.tier, s.imported_from) for s in view.sources] == [
        ("CLAUDE.md", "project", None), ("AGENTS.md", "import", root / "CLAUDE.md")]
    assert view.text.endswith(f"Contents of {root / 'AGENTS.md'} (project instructions, checked into the "
                              "codebase):\n\n- Use pnpm")


def test_claude_agents_md_is_per_project_a_claude_md_in_the_chain_turns_every_one_off(tmp_path: Path,
                                                                                       home: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "root agents")
    write(root / "a" / ".claude" / "AGENTS.md", "a dot agents")
    write(root / "a" / "below" / "CLAUDE.md", "below the start: does not count")
    write(home / ".claude" / "CLAUDE.md", "a user CLAUDE.md does not count")
    view = claude_view(root / "a")
    assert [(s.path.relative_to(tmp_path).as_posix(), s.loaded) for s in view.sources] == [
        ("home/.claude/CLAUDE.md", True), ("repo/AGENTS.md", True), ("repo/a/.claude/AGENTS.md", True)]
    write(root / "a" / "CLAUDE.md", "a claude")
    view = claude_view(root / "a")
    assert [(s.path.relative_to(tmp_path).as_posix(), s.loaded) for s in view.sources] == [
        ("home/.claude/CLAUDE.md", True), ("repo/a/CLAUDE.md", True), ("repo/AGENTS.md", False),
        ("repo/a/.claude/AGENTS.md", False)]
    assert "so AGENTS.md is off" in view.sources[2].reason and "root agents" not in view.text


def test_claude_agents_md_modes_from_the_user_settings(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "c")
    write(root / "AGENTS.md", "agents")
    settings = home / ".claude" / "settings.json"
    for mode, names in (("claude-md-and-agents-md", ["CLAUDE.md", "AGENTS.md"]), ("claude-md", ["CLAUDE.md"]),
                        ("managed-only", [])):
        write(settings, '{"pluginConfigs": {"cc-plugin-agents-md@builtin": {"options": {"instructionFiles": "%s"}}}}'
              % mode)
        assert [s.path.name for s in claude_view(root).sources if s.loaded] == names, mode


def test_claude_bad_settings_files_give_one_warning_each_and_the_rest_shows(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "@../out.md\nc")
    write(tmp_path / "out.md", "outside")
    write(home / ".claude.json", "{not json")
    write(home / ".claude" / "settings.json", "[1]")
    write(root / ".claude" / "rules" / "r.md", "---\npaths: [open\n---\nrule")
    view = claude_view(root)
    assert [s.path.name for s in view.sources] == ["CLAUDE.md"]
    assert len(view.warnings) == 4 and all("\n" not in w for w in view.warnings)
    assert "not valid JSON" in view.warnings[0] and "not a JSON object" in view.warnings[1]
    assert "needs approval in Claude Code" in " ".join(view.warnings)
    assert "front matter is not valid YAML" in " ".join(view.warnings)


def test_claude_rules_with_paths_load_on_read_of_a_matching_file(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / ".claude" / "rules" / "py.md", "---\npaths:\n  - \"src/**/*.py\"\n---\npython rule")
    write(root / ".claude" / "rules" / "all.md", "always")
    write(root / "src" / "CLAUDE.md", "src notes")
    on_read = [s for s in claude.load_view(root, file=root / "src" / "a" / "x.py").sources if s.when == "on-read"]
    assert [(s.path.relative_to(root).as_posix(), s.matched_by) for s in on_read] == [
        ("src/CLAUDE.md", ""), (".claude/rules/py.md", "src/**/*.py")]
    other = claude.load_view(root, file=root / "x.md").sources
    assert [(s.path.name, s.when, s.loaded) for s in other] == [("all.md", "start", True), ("py.md", "on-read", False)]
    assert other[1].reason == f"paths: src/**/*.py does not match {root / 'x.md'}"


def test_claude_view_follows_a_rules_file_edited_between_views(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    rule, x = root / ".claude" / "rules" / "py.md", root / "src" / "x.py"
    write(rule, "---\npaths: src/*.py\n---\nrule one")
    write(x, "")
    assert [(s.when, s.matched_by) for s in claude.load_view(root, file=x).sources] == [("on-read", "src/*.py")]
    write(rule, "---\npaths: lib/*.py\n---\nrule two")  # the same size: the file's identity still changes
    assert [s.loaded for s in claude.load_view(root, file=x).sources] == [False]
    write(rule, "rule 3 @other.md")
    write(root / ".claude" / "rules" / "other.md", "imported")
    view = claude.load_view(root, file=x)
    assert "rule 3 @other.md" in view.text and "imported" in view.text


def test_claude_view_kept_between_requests_sees_new_files_and_folders(tmp_path: Path, home: Path,
                                                                     settle_at_once: None) -> None:
    root = repo(tmp_path)
    x = write(root / "src" / "x.py", "")
    write(root / ".claude" / "rules" / "a.md", "rule a")
    assert claude.load_view(root, file=x).text.endswith("rule a")
    write(root / ".claude" / "rules" / "deep" / "b.md", "rule b")  # a new folder and file in the rules
    write(home / ".claude" / "CLAUDE.md", "mine")
    write(root / "CLAUDE.local.md", "local")
    view = claude.load_view(root, file=x)
    assert sorted(s.path.name for s in view.sources) == ["CLAUDE.local.md", "CLAUDE.md", "a.md", "b.md"]
    (root / ".claude" / "rules" / "a.md").unlink()
    write(home / ".claude" / "settings.json", '{"claudeMdExcludes": ["**/CLAUDE.local.md"]}')
    assert [s.path.name for s in claude.load_view(root, file=x).sources] == ["CLAUDE.md", "b.md"]


def test_claude_view_kept_between_requests_follows_git_imports_outside_and_approval(tmp_path: Path, home: Path,
                                                                                   settle_at_once: None) -> None:
    """What a kept view depends on beyond its files: the `.git` that makes the project root, an
    import outside the start directory that appears (warned about until approved), the approval."""
    root = repo(tmp_path)
    start = write(root / "app" / "CLAUDE.md", "app @../shared.md").parent
    assert claude_view(start).project_root == root and not claude_view(start).warnings
    (root / ".git").rmdir()
    assert claude_view(start).project_root is None
    write(root / ".git", "gitdir: elsewhere")
    assert claude_view(start).project_root == root
    write(root / "shared.md", "shared")
    assert "outside the start directory" in claude_view(start).warnings[0]
    write(home / ".claude.json", json.dumps({"projects": {str(start): {"hasClaudeMdExternalIncludesApproved": True}}}))
    view = claude_view(start)
    assert view.text.endswith("shared") and not view.warnings


@pytest.fixture
def settle_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Identities relied on however recent they are (`common.SETTLE_NS`), as on a file system
    whose timestamps tell every change: what is kept between requests is then the most."""
    from memory_lens.core.agents import common

    monkeypatch.setattr(common, "SETTLE_NS", 0)


def test_claude_view_kept_sees_a_name_in_a_folder_made_after_it(tmp_path: Path, home: Path, settle_at_once: None) -> None:
    """A name with nothing there is vouched for by the nearest folder above it that exists: a
    `.claude` folder made below it, then a `CLAUDE.md` in that folder, each show at once."""
    root = repo(tmp_path)
    x = write(root / "src" / "deep" / "x.py", "")
    assert claude.load_view(root, file=x).sources == ()
    (root / "src" / ".claude").mkdir()
    assert claude.load_view(root, file=x).sources == ()
    write(root / "src" / ".claude" / "CLAUDE.md", "src rules")
    assert [s.path for s in claude.load_view(root, file=x).sources] == [root / "src" / ".claude" / "CLAUDE.md"]
    write(tmp_path / ".claude" / "CLAUDE.md", "above the start")
    assert [s.path for s in claude.load_view(root, file=x).sources] == [
        tmp_path / ".claude" / "CLAUDE.md", root / "src" / ".claude" / "CLAUDE.md"]


def test_claude_view_kept_sees_the_target_of_a_dangling_link_appear(tmp_path: Path, home: Path,
                                                                   settle_at_once: None) -> None:
    """A `CLAUDE.md` that is a link to nothing yet: its folder does not change when the target
    appears elsewhere, so the link itself is looked at."""
    root = repo(tmp_path)
    try:
        (root / "CLAUDE.md").symlink_to(tmp_path / "shared" / "CLAUDE.md")
    except OSError:
        pytest.skip("no symbolic links here")
    assert claude_view(root).text == ""
    write(tmp_path / "shared" / "CLAUDE.md", "shared rules")
    assert claude_view(root).text.endswith("shared rules")


def test_kept_answers_rely_on_no_identity_changed_within_the_settle_time(tmp_path: Path, home: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system whose timestamps have a coarse tick leaves a file's or folder's identity as
    it was after a change within the same tick: an answer that looked at something changed that
    recently is worked out again on the next request, and such a file is read again."""
    from memory_lens.core.agents import common

    kept, works = common.Kept(4), []
    path = write(tmp_path / "f.md", "x")

    def work() -> None:
        common.look(path)
        common.look(tmp_path / "missing.md")
        works.append(1)

    kept.get("k", work)
    kept.get("k", work)
    assert len(works) == 2
    monkeypatch.setattr(common, "SETTLE_NS", 0)
    kept.get("k", work)
    kept.get("k", work)
    assert len(works) == 3
    monkeypatch.undo()
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "rules")
    reads: list[Path] = []
    real_read = claude.read_raw
    monkeypatch.setattr(claude, "read_raw", lambda path, limit, **kw: reads.append(path) or real_read(path, limit, **kw))
    claude_view(root)
    claude_view(root)
    assert reads.count(root / "CLAUDE.md") == 2


def test_claude_imports_not_in_code_relative_to_the_file_and_home(tmp_path: Path, home: Path) -> None:
    assert claude.import_targets("See @README for more and @docs/git-instructions.md.\n"
                                 "`@not/this` nor ``@this``\n```\n@nor/this\n```\nmail a@b.c\n- @~/.claude/my-project.md\n") == [
        "README", "docs/git-instructions.md.", "~/.claude/my-project.md"]
    assert claude.resolve_import("../x.md", Path("/p/docs/CLAUDE.md"), home) == Path("/p/x.md")
    assert claude.resolve_import("~/.claude/mine.md", Path("/p/CLAUDE.md"), home) == home / ".claude/mine.md"


def test_claude_import_depth_is_four_hops_and_cycles_load_once(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "@d1.md\n@CLAUDE.md\n")
    for i in range(1, 7):
        write(root / f"d{i}.md", f"level {i}\n@d{i + 1}.md\n")
    view = claude_view(root)
    assert [s.path.name for s in view.sources] == ["CLAUDE.md", "d1.md", "d2.md", "d3.md", "d4.md"]
    assert any("@d5.md is not imported" in w and "4 hops" in w for w in view.warnings)


def test_claude_imports_stop_at_one_bound_on_mentions(tmp_path: Path, home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23 item 1 for Claude Code's loader: every mention was followed, however many (each a
    path resolved and a file looked for). Each file is read once, and the mentions stop at Memory
    Lens's bound, with one warning."""
    from memory_lens.core import imports

    root = repo(tmp_path)
    write(root / "CLAUDE.md", "@a.md\n" * 3000 + "".join(f"@m{i}.md\n" for i in range(3000)))
    write(root / "a.md", "@a.md\n@CLAUDE.md\n" * 2000)
    reads: list[Path] = []
    real_read = claude.read_raw
    monkeypatch.setattr(claude, "read_raw", lambda path, limit, **kw: reads.append(path) or real_read(path, limit, **kw))
    view = claude_view(root)
    assert reads.count(root / "a.md") == 1 and reads.count(root / "CLAUDE.md") == 1
    assert len(reads) < imports.MAX_IMPORT_MENTIONS
    (warning,) = [w for w in view.warnings if "Memory Lens follows at most" in w]
    assert warning.startswith(f"{root / 'CLAUDE.md'}: @a.md is not imported, nor any mention after it") and "Claude Code has no such bound" in warning


def test_claude_large_file_warning_past_40k_characters(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "x" * 40_000)
    assert not claude_view(root).warnings
    write(root / "CLAUDE.md", "x" * 40_001)
    assert "40001 characters, over Claude Code's 40000-character" in claude_view(root).warnings[0]


# Wave and the dispatch --------------------------------------------------------------------

def test_wave_combines_user_then_project_memory_of_the_working_directory(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(home / ".wave" / "memory.md", "- My name is Alice\n")
    write(root / "AGENTS.md", "- root, not the working directory\n")
    write(root / "sub" / "AGENTS.md", "\n- Use pnpm instead of npm\n")
    view = wave.load_view(root / "sub", 1 << 20)
    assert view.text == "- My name is Alice\n\n- Use pnpm instead of npm"
    assert [s.tier for s in view.sources] == ["user", "project"]


def test_wave_bullet_plan_appends_refuses_duplicates_and_open_fences() -> None:
    plan = wave.plan_bullet("# Rules\n- a", "# Use pnpm")
    assert plan.content == "# Rules\n- a\n- Use pnpm\n" and plan.line == 2
    assert wave.plan_bullet("- use PNPM.\n", "Use pnpm").content is None
    with pytest.raises(wave.UnsafeEntryError):
        wave.plan_bullet("```\ncode\n", "Use pnpm")


def test_dispatch_names_and_unknown_agent(tmp_path: Path, home: Path) -> None:
    assert AGENTS[:4] == ("gemini", "claude", "codex", "wave") and {"cursor", "copilot"} <= set(AGENTS)
    assert check_agent(None) == "gemini"
    with pytest.raises(UnknownAgentError, match="use one of gemini, claude, codex, wave"):
        check_agent("nobody")
    root = repo(tmp_path)
    write(root / "GEMINI.md", "- gemini rule\n")
    view = agent_view(None, root, resolve_settings())
    assert view.agent == "gemini" and view.memory is not None and view.text == "- gemini rule"
