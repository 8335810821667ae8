"""core/explain.py: the matrix of which agent loads which instruction file for a path, and why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lens.core import explain as explain_mod
from memory_lens.core.agents import AGENTS
from memory_lens.core.discovery import TargetError
from memory_lens.core.explain import explain
from memory_lens.core.settings import Settings


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.fixture()
def tree(tmp_path: Path, home: Path) -> Path:
    """A project with a file for every agent, a shadowed AGENTS.md and two scoped rules."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / "GEMINI.md", "gemini\n")
    write(root / "CLAUDE.md", "claude\n")
    write(root / "AGENTS.md", "agents\n")
    write(root / "pkg" / "AGENTS.override.md", "override\n")
    write(root / "pkg" / "AGENTS.md", "shadowed\n")
    write(root / ".claude" / "rules" / "py.md", "---\npaths: \"**/*.py\"\n---\npython\n")
    write(root / ".claude" / "rules" / "ts.md", "---\npaths: src/**/*.ts\n---\nts\n")
    write(root / "pkg" / "mod.py", "")
    return root


def statuses(matrix, agent: str) -> dict[str, dict]:
    """AGENT's status of each file, by its path from the project (its name for a file outside)."""
    root = matrix.path.parent if matrix.path.is_file() else matrix.path
    while not (root / ".git").exists():
        root = root.parent
    return {(f.path.relative_to(root).as_posix() if root in f.path.parents else f.path.name): f.statuses[agent].to_json()
            for f in matrix.files}


def test_each_file_and_agent_gets_one_status_with_the_reason(tree: Path) -> None:
    matrix = explain(tree / "pkg" / "mod.py", Settings())
    assert matrix.agents == AGENTS and matrix.path == tree / "pkg" / "mod.py"
    assert [f.path.relative_to(tree).as_posix() for f in matrix.files] == [
        "GEMINI.md", "CLAUDE.md", ".claude/rules/py.md", "AGENTS.md", "pkg/AGENTS.override.md",  # as loaded
        "pkg/AGENTS.md", ".claude/rules/ts.md"]  # (Wave loads pkg/AGENTS.md), then what is left out
    codex, claude, gemini = statuses(matrix, "codex"), statuses(matrix, "claude"), statuses(matrix, "gemini")
    assert codex["pkg/AGENTS.override.md"] == {"status": "loaded"}
    assert codex["pkg/AGENTS.md"] == {"status": "not-loaded",
                                  "reason": "Codex reads AGENTS.override.md in this directory instead"}
    assert codex["CLAUDE.md"] == {"status": "not-loaded", "reason": "Codex does not read CLAUDE.md"}
    assert claude[".claude/rules/py.md"] == {"status": "on-read", "matchedBy": "**/*.py"}
    assert claude[".claude/rules/ts.md"]["status"] == "not-loaded"
    assert claude[".claude/rules/ts.md"]["reason"] == f"Claude Code: paths: src/**/*.ts does not match {tree / 'pkg' / 'mod.py'}"
    root_agents = matrix.files[3].statuses
    assert root_agents["claude"].reason.startswith("Claude Code: this project has a CLAUDE.md, so AGENTS.md is off")
    assert root_agents["codex"].status == "loaded"
    assert gemini["GEMINI.md"] == {"status": "loaded"}
    assert gemini["AGENTS.md"] == {"status": "not-loaded",
                                   "reason": "Gemini CLI: AGENTS.md is not in context.fileName (GEMINI.md)"}
    for f in matrix.files:
        for status in f.statuses.values():
            assert status.status in explain_mod.STATUSES and (status.status != "not-loaded" or status.reason)


def test_started_above_the_file_claude_names_the_directory_that_brings_a_file_in(tree: Path) -> None:
    write(tree / "pkg" / "CLAUDE.md", "pkg notes\n")
    matrix = explain(tree / "pkg" / "mod.py", Settings(), ["claude"], start=tree)
    by_path = {f.path: f.statuses["claude"].to_json() for f in matrix.files}
    assert by_path[tree / "pkg" / "CLAUDE.md"] == {"status": "on-read", "matchedBy": str(tree / "pkg")}
    assert by_path[tree / "CLAUDE.md"] == {"status": "loaded"}
    assert explain(tree / "pkg" / "mod.py", Settings(), ["claude"], start=tree / "elsewhere").files[0].path == \
        tree / "CLAUDE.md"  # a start that does not hold PATH: PATH's directory


def test_codex_budget_cut_and_unread_files(tree: Path) -> None:
    write(tree / "AGENTS.md", "a" * 40000)
    matrix = explain(tree / "pkg", Settings(), ["codex"])
    codex = statuses(matrix, "codex")
    assert codex["AGENTS.md"] == {"status": "loaded", "cutAt": 32768}
    assert codex["pkg/AGENTS.override.md"]["status"] == "not-loaded"
    assert "budget is used up" in codex["pkg/AGENTS.override.md"]["reason"]
    assert codex["pkg/AGENTS.override.md"]["reason"].startswith("Codex: ")


def test_an_agent_that_fails_gives_its_reason_and_the_rest_still_shows(tree: Path, home: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    write(home / ".codex" / "AGENTS.md", b"\xff\xfe bad")
    write(home / ".claude.json", "{not json")
    matrix = explain(tree / "pkg" / "mod.py", Settings(), ["codex", "claude"])
    user = next(f for f in matrix.files if f.path == home / ".codex" / "AGENTS.md")
    assert user.statuses["codex"].status == "not-loaded" and "not valid UTF-8" in user.statuses["codex"].reason
    assert statuses(matrix, "claude")["CLAUDE.md"] == {"status": "loaded"}

    real = explain_mod.agent_view

    def broken(agent, *args, **kwargs):
        if agent == "codex":
            raise OSError("config vanished")
        return real(agent, *args, **kwargs)

    monkeypatch.setattr(explain_mod, "agent_view", broken)
    matrix = explain(tree / "pkg" / "mod.py", Settings(), ["codex", "claude"])
    assert statuses(matrix, "claude")["CLAUDE.md"] == {"status": "loaded"}
    assert all(f.statuses["codex"].reason == "Codex: Memory Lens could not work out what it loads: config vanished"
               for f in matrix.files)


def test_bad_input(tree: Path) -> None:
    with pytest.raises(TargetError):
        explain(tree / "missing.py", Settings())
    unsaved = explain(tree / "pkg" / "new.py", Settings(), ["claude", "claude"], nearest_existing=True)
    assert unsaved.agents == ("claude",)
    assert statuses(unsaved, "claude")[".claude/rules/py.md"] == {"status": "on-read", "matchedBy": "**/*.py"}
    with pytest.raises(ValueError):
        explain(tree, Settings(), ["bob"])


def test_the_json_shape(tree: Path) -> None:
    data = explain(tree / "pkg" / "mod.py", Settings(), ["codex"]).to_json()
    assert set(data) == {"path", "agents", "files"} and data["agents"] == ["codex"]
    assert all(set(f) == {"path", "statuses"} and set(f["statuses"]) == {"codex"} for f in data["files"])


def test_copilot_scoped_instructions_are_requestable_with_the_glob_or_why_not(tmp_path: Path, home: Path) -> None:
    root = tmp_path / "repo"
    write(root / ".git" / "HEAD", "ref: refs/heads/main\n")
    (root / ".git" / "objects").mkdir()
    (root / ".git" / "refs").mkdir()
    write(root / "AGENTS.md", "agents\n")
    ts = write(root / ".github" / "instructions" / "ts.instructions.md", "---\napplyTo: 'src/**/*.ts'\n---\nts\n")
    env = {"HOME": str(home)}
    for name, expected in (("src/a.ts", {"status": "requestable", "matchedBy": "src/**/*.ts"}),
                           ("src/a.py", {"status": "requestable",
                                         "reason": f"applyTo `src/**/*.ts` does not match {root / 'src' / 'a.py'}"})):
        target = write(root / name, "")
        matrix = explain(target, Settings(), ["copilot"], start=root, environ=env).to_json()
        rows = {Path(f["path"]).name: f["statuses"]["copilot"] for f in matrix["files"]}
        assert rows[ts.name] == expected
        assert rows["AGENTS.md"] == {"status": "loaded"}
