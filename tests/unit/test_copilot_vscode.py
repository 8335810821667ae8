"""Copilot Chat in VS Code, as its documentation and source give it (core/agents/copilot_vscode.py;
docs/agents.md#copilot-chat-in-vs-code): each always-on file and the setting that turns it off,
`*.instructions.md` by `applyTo`, `.claude/rules` by `paths`, nested AGENTS.md, the settings
VS Code sends or `.vscode/settings.json` holds, and bad input (one reason each, the rest shown)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.agents import AGENTS, agent_view, copilot_vscode
from memory_lens.core.explain import explain
from memory_lens.core.settings import Settings

AGENT = "copilot-vscode"


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    return tmp_path / "ws"


def view(root: Path, home: Path, file: Path | None = None, chat: dict | None = None, start: Path | None = None):
    return agent_view(AGENT, start or root, Settings(), environ={"HOME": str(home)}, file=file, chat_settings=chat)


def got(v) -> dict[str, tuple]:
    return {s.path.relative_to(s.path.parents[1]).as_posix() if s.path.name == "AGENTS.md" else s.path.name:
            (s.loaded, s.when, s.matched_by, s.reason) for s in v.sources}


def instructions(root: Path, name: str, head: str | None, folder: str = ".github/instructions") -> Path:
    front = f"---\n{head}\n---\n" if head is not None else ""
    return write(root / folder / name, f"{front}{name} body\n")


def test_registered_as_an_agent() -> None:
    assert AGENT in AGENTS


def test_always_on_files_by_default_in_order(root: Path, home: Path) -> None:
    write(root / ".github" / "copilot-instructions.md", "ci\n")
    write(root / "AGENTS.md", "agents\n")
    write(root / "CLAUDE.md", "claude\n")
    v = view(root, home)
    assert [s.path for s in v.sources] == [root / ".github" / "copilot-instructions.md", root / "AGENTS.md",
                                           root / "CLAUDE.md"]
    assert all(s.loaded and s.when == "start" for s in v.sources)
    assert v.text == "ci\n\nagents\n\nclaude"


def test_use_instruction_files_off_leaves_copilot_instructions_out(root: Path, home: Path) -> None:
    write(root / ".github" / "copilot-instructions.md", "ci\n")
    v = view(root, home, chat={"github.copilot.chat.codeGeneration.useInstructionFiles": False})
    assert got(v)["copilot-instructions.md"] == (
        False, "", "", "github.copilot.chat.codeGeneration.useInstructionFiles is off")
    assert v.text == ""


def test_use_agents_md_off_leaves_agents_md_out(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "agents\n")
    assert got(view(root, home, chat={"chat.useAgentsMdFile": False}))["ws/AGENTS.md"] == (
        False, "", "", "chat.useAgentsMdFile is off")


def test_claude_md_files_every_place_sorted_by_path(root: Path, home: Path) -> None:
    write(root / "CLAUDE.md", "a\n")
    write(root / "CLAUDE.local.md", "b\n")
    write(root / ".claude" / "CLAUDE.md", "c\n")
    write(home / ".claude" / "CLAUDE.md", "d\n")
    v = view(root, home)
    paths = [s.path for s in v.sources]
    assert paths == sorted(paths, key=lambda p: p.as_posix())
    assert len(paths) == 4 and all(s.loaded for s in v.sources)
    assert {s.tier for s in v.sources if s.path.is_relative_to(home)} == {"user"}
    off = view(root, home, chat={"chat.useClaudeMdFile": False})
    assert [s.reason for s in off.sources] == ["chat.useClaudeMdFile is off"] * 4


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_link_to_an_attached_file_is_attached_once(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "same\n")
    (root / "CLAUDE.md").symlink_to(root / "AGENTS.md")
    g = got(view(root, home))
    assert g["ws/AGENTS.md"][0] is True
    assert g["CLAUDE.md"][0] is False and g["CLAUDE.md"][3].startswith("a link to ")


def test_apply_to_matching_the_file_attaches_it_on_read(root: Path, home: Path) -> None:
    instructions(root, "ts.instructions.md", 'applyTo: "src/**/*.ts"')
    ts = write(root / "src" / "a.ts", "x")
    assert got(view(root, home, ts))["ts.instructions.md"] == (True, "on-read", "src/**/*.ts", "")
    py = write(root / "src" / "b.py", "x")
    loaded, when, _, reason = got(view(root, home, py))["ts.instructions.md"]
    assert (loaded, when) == (False, "requestable")
    assert reason == f"applyTo `src/**/*.ts` does not match {py}; listed for the model, which may read it"


def test_apply_to_all_files_is_attached_at_start(root: Path, home: Path) -> None:
    for i, pattern in enumerate(("**", "**/*", "*")):
        instructions(root, f"all{i}.instructions.md", f"applyTo: '{pattern}'")
    v = view(root, home)  # no file asked about: still attached
    assert [(s.loaded, s.when) for s in v.sources] == [(True, "start")] * 3


def test_no_apply_to_is_never_attached_by_itself(root: Path, home: Path) -> None:
    instructions(root, "plain.instructions.md", None)
    instructions(root, "desc.instructions.md", "description: Database rules")
    g = got(view(root, home, write(root / "a.py", "x")))
    for name in ("plain.instructions.md", "desc.instructions.md"):
        assert g[name][:2] == (False, "requestable")
        assert g[name][3].startswith("no applyTo: never attached by itself")


def test_apply_to_dialect_any_depth_commas_braces_case(root: Path, home: Path) -> None:
    cases = {"name.instructions.md": "'*.py'", "dir.instructions.md": "'src/*.py'",
             "list.instructions.md": "'**/*.md, **/*.PY'", "brace.instructions.md": "'**/*.{ts,py}'",
             "anchored.instructions.md": "'/nowhere/**'", "other.instructions.md": "'**/*.go'"}
    for name, pattern in cases.items():
        instructions(root, name, f"applyTo: {pattern}")
    g = got(view(root, home, write(root / "pkg" / "src" / "m.py", "x")))
    assert g["name.instructions.md"][2] == "*.py"
    assert g["dir.instructions.md"][2] == "src/*.py"  # `**/` is put in front: any depth
    assert g["list.instructions.md"][2] == "**/*.PY"  # case aside
    assert g["brace.instructions.md"][2] == "**/*.{ts,py}"
    assert g["anchored.instructions.md"][:2] == (False, "requestable")  # a leading / is the whole path
    assert g["other.instructions.md"][:2] == (False, "requestable")


def test_apply_to_as_a_yaml_list(root: Path, home: Path) -> None:
    instructions(root, "list.instructions.md", "applyTo:\n  - '**/*.ts'\n  - '**/*.py'")
    assert got(view(root, home, write(root / "a.py", "x")))["list.instructions.md"][:3] == (
        True, "on-read", "**/*.py")


def test_include_applying_instructions_off_lists_matching_files_only(root: Path, home: Path) -> None:
    instructions(root, "ts.instructions.md", "applyTo: '**/*.ts'")
    g = got(view(root, home, write(root / "a.ts", "x"), chat={"chat.includeApplyingInstructions": False}))
    assert g["ts.instructions.md"] == (False, "requestable", "**/*.ts",
                                       "chat.includeApplyingInstructions is off: listed for the model, which may "
                                       "read it")


def test_instructions_folders_are_searched_recursively_in_order(root: Path, home: Path) -> None:
    instructions(root, "b.instructions.md", "applyTo: '**'", ".github/instructions/team")
    instructions(root, "a.instructions.md", "applyTo: '**'")
    instructions(home, "u.instructions.md", "applyTo: '**'", ".copilot/instructions")
    write(root / ".github" / "instructions" / "notes.md", "not an instructions file")
    names = [s.path.name for s in view(root, home).sources]
    assert names == ["a.instructions.md", "b.instructions.md", "u.instructions.md"]
    assert [s.tier for s in view(root, home).sources] == ["workspace", "workspace", "user"]


def test_claude_rules_use_paths_and_default_to_every_file(root: Path, home: Path) -> None:
    write(root / ".claude" / "rules" / "all.md", "no front matter\n")
    write(root / ".claude" / "rules" / "py.md", "---\npaths:\n  - '**/*.py'\n---\npy\n")
    g = got(view(root, home, write(root / "x.ts", "x")))
    assert g["all.md"][:2] == (True, "start")
    assert g["py.md"][:2] == (False, "requestable") and g["py.md"][3].startswith("paths `**/*.py` does not match")


def test_user_claude_rules_are_off_by_default(root: Path, home: Path) -> None:
    write(home / ".claude" / "rules" / "r.md", "rule\n")
    assert view(root, home).sources == ()
    on = view(root, home, chat={"chat.instructionsFilesLocations": {"~/.claude/rules": True}})
    assert [s.path.name for s in on.sources] == ["r.md"]


def test_instructions_files_locations_turns_folders_off_and_adds_others(root: Path, home: Path) -> None:
    instructions(root, "a.instructions.md", "applyTo: '**'")
    instructions(root, "extra.instructions.md", "applyTo: '**'", "docs/rules")
    chat = {"chat.instructionsFilesLocations": {".github/instructions": False, "docs/rules": True}}
    assert [s.path.name for s in view(root, home, chat=chat).sources] == ["extra.instructions.md"]


def test_nested_agents_md_off_by_default_with_the_setting_named(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    write(root / "pkg" / "AGENTS.md", "pkg\n")
    write(root / "other" / "AGENTS.md", "other\n")
    g = got(view(root, home, write(root / "pkg" / "a.py", "x")))
    assert g["ws/AGENTS.md"][:2] == (True, "start")
    assert g["pkg/AGENTS.md"] == (False, "", "", "chat.useNestedAgentsMdFiles is off")
    assert "other/AGENTS.md" not in g  # off: the workspace is not walked


def test_nested_agents_md_on_are_listed_for_the_model(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    write(root / "pkg" / "AGENTS.md", "pkg\n")
    write(root / "other" / "AGENTS.md", "other\n")
    v = view(root, home, write(root / "pkg" / "a.py", "x"), chat={"chat.useNestedAgentsMdFiles": True})
    g = got(v)
    assert g["pkg/AGENTS.md"] == (False, "requestable", "pkg/", "")
    assert g["other/AGENTS.md"][:2] == (False, "requestable")
    assert "is not under other/" in g["other/AGENTS.md"][3]
    assert v.text == "root"  # listed files are not attached
    both_off = got(view(root, home, write(root / "pkg" / "b.py", "x"),
                        chat={"chat.useNestedAgentsMdFiles": True, "chat.useAgentsMdFile": False}))
    assert both_off["pkg/AGENTS.md"][3] == "chat.useAgentsMdFile is off"


def test_workspace_folder_is_the_project_root(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    sub = root / "deep" / "er"
    sub.mkdir(parents=True)
    v = view(root, home, start=sub)
    assert v.project_root == root and [s.path for s in v.sources] == [root / "AGENTS.md"]


def test_editor_folders_are_the_workspace_not_the_git_root(root: Path, home: Path) -> None:
    """A folder opened below the repository root is the workspace (its own files, not the root's);
    in a multi-root window every folder's files count, whichever folder the file is in, each
    instructions folder and nested AGENTS.md relative to its own workspace folder, the settings
    read from the `.vscode/settings.json` of the folder holding the file (VS Code's
    promptFilesLocator: `getWorkspace().folders`)."""
    app, lib = root / "app", root / "lib"
    for top in (root, app, lib):
        write(top / ".github" / "copilot-instructions.md", f"{top.name} ci\n")
        write(top / "AGENTS.md", f"{top.name} agents\n")
    write(lib / ".github" / "instructions" / "py.instructions.md", "---\napplyTo: '**/*.py'\n---\nlib py\n")
    write(lib / "sub" / "AGENTS.md", "lib sub\n")
    write(app / ".vscode" / "settings.json", '{"chat.useNestedAgentsMdFiles": true}')
    file = write(app / "m.py", "")
    one = agent_view(AGENT, app, Settings(), environ={"HOME": str(home)}, file=file, folders=[app])
    assert [s.path for s in one.sources if s.loaded] == [app / ".github" / "copilot-instructions.md",
                                                         app / "AGENTS.md"]
    assert one.project_root == app and one.text == "app ci\n\napp agents"
    both = agent_view(AGENT, app, Settings(), environ={"HOME": str(home)}, file=file, folders=[app, lib])
    assert [s.path for s in both.sources if s.loaded] == [
        lib / ".github" / "instructions" / "py.instructions.md", app / ".github" / "copilot-instructions.md",
        lib / ".github" / "copilot-instructions.md", app / "AGENTS.md", lib / "AGENTS.md"]
    nested = next(s for s in both.sources if s.path == lib / "sub" / "AGENTS.md")
    assert (nested.when, nested.reason) == ("requestable", f"{file} is not under sub/; listed for the model as "
                                                           "the instructions for folder 'sub'")
    assert [t for t in both.trace if t.startswith("workspace folder")] == [f"workspace folder: {app}",
                                                                            f"workspace folder: {lib}"]
    cli = agent_view(AGENT, app, Settings(), environ={"HOME": str(home)}, file=file)  # no editor: the git root
    assert cli.project_root == root and root / "AGENTS.md" in [s.path for s in cli.sources if s.loaded]


def test_settings_json_with_comments_and_trailing_commas_is_read(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    write(root / ".vscode" / "settings.json",
          '{\n  // off\n  "chat.useAgentsMdFile": false, /* really */\n  "x.url": "http://a//b",\n}\n')
    v = view(root, home)
    assert got(v)["ws/AGENTS.md"][3] == "chat.useAgentsMdFile is off" and v.warnings == ()
    sent = view(root, home, chat={})  # what the client sends wins over the file
    assert got(sent)["ws/AGENTS.md"][0] is True


def test_unreadable_settings_json_falls_back_to_defaults_with_a_warning(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    write(root / ".vscode" / "settings.json", '{"chat.useAgentsMdFile": fals')
    v = view(root, home)
    assert got(v)["ws/AGENTS.md"][0] is True
    assert len(v.warnings) == 1 and "not JSON" in v.warnings[0] and "defaults are used" in v.warnings[0]


def test_a_malformed_setting_value_is_one_warning_and_its_default(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    write(root / "CLAUDE.md", "claude\n")
    v = view(root, home, chat={"chat.useAgentsMdFile": "no", "chat.instructionsFilesLocations": ["x"],
                               "chat.useClaudeMdFile": False, "unknown.setting": 3})
    assert got(v)["ws/AGENTS.md"][0] is True  # its default
    assert got(v)["CLAUDE.md"][3] == "chat.useClaudeMdFile is off"  # the rest still honoured
    assert v.warnings == ('chat.useAgentsMdFile is "no", not true or false: Memory Lens takes VS Code\'s default '
                          '(true)',
                          'chat.instructionsFilesLocations is ["x"], not an object of folder: true/false: Memory '
                          'Lens takes VS Code\'s default ({".github/instructions": true, ".claude/rules": true, '
                          '"~/.copilot/instructions": true, "~/.claude/rules": false})')


def test_bad_files_are_one_reason_each(root: Path, home: Path) -> None:
    instructions(root, "ok.instructions.md", "applyTo: '**'")
    write(root / ".github" / "instructions" / "bin.instructions.md", b"\0\1\2")
    instructions(root, "open.instructions.md", "applyTo: '**'").write_text("---\napplyTo: '**'\nbody never closed\n")
    v = view(root, home)
    g = got(v)
    assert g["ok.instructions.md"][0] is True
    assert g["bin.instructions.md"] == (False, "", "", "a binary file (NUL bytes), not text")
    assert g["open.instructions.md"][:2] == (False, "requestable")  # no front matter read: no applyTo
    assert v.warnings == (f"{root / '.github' / 'instructions' / 'bin.instructions.md'}: a binary file (NUL bytes), "
                          "not text",)


def test_explain_statuses_and_reasons(root: Path, home: Path) -> None:
    write(root / "AGENTS.md", "root\n")
    instructions(root, "py.instructions.md", "applyTo: '**/*.py'")
    f = write(root / "a.py", "x")
    m = explain(f, Settings(), [AGENT], environ={"HOME": str(home)}, chat_settings={"chat.useAgentsMdFile": False})
    st = {e.path.name: e.statuses[AGENT].to_json() for e in m.files}
    assert st["py.instructions.md"] == {"status": "on-read", "matchedBy": "**/*.py"}
    assert st["AGENTS.md"] == {"status": "not-loaded", "reason": "Copilot Chat: chat.useAgentsMdFile is off"}


def test_read_settings_file_keeps_only_known_settings(tmp_path: Path) -> None:
    p = write(tmp_path / "settings.json", '{"chat.useClaudeMdFile": false, "editor.fontSize": 3}')
    assert copilot_vscode.read_settings_file(p) == ({"chat.useClaudeMdFile": False}, "")
    assert copilot_vscode.read_settings_file(tmp_path / "absent.json") == ({}, "")


def test_not_loaded_diagnostic_takes_the_editors_chat_settings_and_folders(root: Path, home: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The `not-loaded` finding of an open file judges Copilot Chat by the chat settings and the
    workspace folders the editor gave the server (`Editor`), as memory/explain does."""
    from memory_lens.lsp.diagnostics import not_loaded
    from memory_lens.lsp.store import Editor, MemoryStore

    monkeypatch.setenv("HOME", str(home))
    nested = write(root / "pkg" / "AGENTS.md", "pkg\n")
    settings = Settings(agents=(AGENT,))
    assert "chat.useNestedAgentsMdFiles is off" in not_loaded(MemoryStore(settings), nested)[0].message
    editor = Editor(lambda: [root], {"chat.useNestedAgentsMdFiles": True})
    assert not_loaded(MemoryStore(settings, editor=editor), nested) == []
    app = root / "pkg"  # a folder opened below the repository: its AGENTS.md is the workspace's own
    assert not_loaded(MemoryStore(settings, editor=Editor(lambda: [app])), nested) == []
