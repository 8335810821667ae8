"""Claude Code's findings on its own files (core/agents/claude_checks.py), through `check_targets`
as `memory-lens check --agent claude` runs them: imports it does not follow, settings that stop
it, an AGENTS.md a CLAUDE.md turns off, the auto memory's cut."""

from __future__ import annotations

import re
from pathlib import Path

from memory_lens.core.agents import claude
from memory_lens.core.agents.budget import check_targets, file_agent_findings
from memory_lens.core.settings import Settings


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def repo(tmp_path: Path) -> Path:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    return tmp_path / "repo"


def found(paths: list[Path]) -> list[tuple[str, int, str, str]]:
    report = check_targets([str(p) for p in paths], Settings(budget_bytes=10**9), agents=["claude"])
    return [(f.path.name, f.line, f.code, f.message) for f in report.findings]


def test_an_import_past_four_hops_is_import_depth_on_the_mention(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "# rules\n@l1.md\n")
    for i in range(1, 5):
        write(root / f"l{i}.md", f"level {i}\n@l{i + 1}.md\n")
    write(root / "l5.md", "too deep\n")
    got = found([root / "CLAUDE.md"])
    assert [(n, line, code) for n, line, code, _ in got] == [("CLAUDE.md", 2, "import-depth")]
    assert "imports @l5.md, 5 hops away: Claude Code follows imports 4 hops deep at most" in got[0][3]
    (root / "l5.md").unlink()  # nothing there to load: not a depth problem (a missing import, as before)
    assert [code for _, _, code, _ in found([root / "CLAUDE.md"])] == ["import-not-found"]


def test_an_external_import_awaits_approval(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(home / "notes.md", "my notes")
    write(root / "CLAUDE.md", "see @~/notes.md\n")
    got = found([root / "CLAUDE.md"])
    assert [(n, line, code) for n, line, code, _ in got] == [("CLAUDE.md", 1, "import-outside-root")]
    assert got[0][3].startswith("claude: @~/notes.md: ") and ".claude.json" in got[0][3]
    write(home / ".claude.json", '{"projects": {"%s": {"hasClaudeMdExternalIncludesApproved": true}}}' % root)
    assert found([root / "CLAUDE.md"]) == []


def test_an_import_loop_is_one_finding_and_bounded(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "@a.md\n")
    write(root / "a.md", "@b.md\n")
    write(root / "b.md", "@a.md\n" * 3000)
    got = found([root / "CLAUDE.md"])
    assert [(n, line, code) for n, line, code, _ in got] == [("CLAUDE.md", 1, "import-cycle")]


def test_settings_that_are_not_json_stop_claude_code(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "- rule\n")
    write(home / ".claude.json", "{not json")
    got = found([root / "CLAUDE.md"])
    assert [(n, line, code) for n, line, code, _ in got] == [("CLAUDE.md", 1, "not-loaded")]
    assert "not valid JSON" in got[0][3] and "refuses to start" in got[0][3] and "\n" not in got[0][3]


def test_a_claude_md_turning_off_an_agents_md_with_more_in_it(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "- use pnpm\n")
    write(root / "AGENTS.md", "- use pnpm\n- run the tests first\n")
    got = found([root])
    assert [(n, line, code) for n, line, code, _ in got] == [("AGENTS.md", 1, "not-loaded")]
    assert "so AGENTS.md is off" in got[0][3] and "1 of its lines is in no file" in got[0][3] and "line 2" in got[0][3]
    write(root / "AGENTS.md", "- use pnpm\n- run the tests first\n- and the linter\n")
    assert "2 of its lines are in no file" in found([root])[0][3]
    write(root / "AGENTS.md", "- use pnpm\n- run the tests first\n")
    write(root / "CLAUDE.md", "- use pnpm\n- run the tests first\n")  # nothing lost: nothing to say
    assert found([root]) == []
    write(root / "CLAUDE.md", "@AGENTS.md\n")  # imported: loaded after all
    assert found([root]) == []


def test_auto_memory_over_its_cut_names_the_first_line_never_seen(tmp_path: Path, home: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "- rule\n")
    memory = claude.auto_memory_file(root, home / ".claude")
    write(memory, "".join(f"- note {i}\n" for i in range(1, 251)))
    got = found([root])
    assert [(n, line, code) for n, line, code, _ in got] == [("MEMORY.md", 201, "over-budget")]
    assert "never sees line 201 onward" in got[0][3]
    assert [f.line for f in file_agent_findings(memory, Settings())] == [201]  # the editor, once opened
    write(memory, "- short\n")
    assert found([root]) == []
