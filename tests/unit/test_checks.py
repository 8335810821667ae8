"""memory_lens.core.checks: duplicate, redundant, over-budget and unreadable findings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.checks import (
    Severity,
    budget_finding,
    check_content,
    check_entries,
    check_file,
    index_entries,
)
from memory_lens.core.agents.budget import check_targets
from memory_lens.core.discovery import Scope, TargetError
from memory_lens.core.merge import Source
from memory_lens.core.settings import Settings


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = Path(os.path.realpath(tmp_path))
    monkeypatch.setenv("HOME", str(root / "home"))
    (root / "home").mkdir()
    return root


def codes(findings) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in findings]


def test_duplicate_is_reported_on_each_later_line() -> None:
    own = index_entries(Path("/f.md"), "- a\n- b\n- A.\n```\n- a\n```\n- a!\n")
    findings = check_entries(own, [])
    assert codes(findings) == [(3, "duplicate"), (7, "duplicate")]
    assert all(f.severity is Severity.WARNING and f.column == 1 for f in findings)
    assert "line 1" in findings[0].message
    assert findings[0].related[0].line == 1


def test_redundant_points_at_the_first_general_file_holding_it() -> None:
    g = index_entries(Path("/g.md"), "- x\n- Use pnpm\n")
    r = index_entries(Path("/r.md"), "- use pnpm.\n")
    own = index_entries(Path("/own.md"), "- other\n- USE PNPM\n")
    (finding,) = check_entries(own, [g, r])
    assert (finding.line, finding.code, finding.severity) == (2, "redundant", Severity.INFORMATION)
    assert "/g.md:2" in finding.message
    assert finding.related[0].path == Path("/g.md")


def test_a_duplicate_is_not_also_reported_redundant() -> None:
    g = index_entries(Path("/g.md"), "- a\n")
    own = index_entries(Path("/own.md"), "- a\n- a\n")
    assert codes(check_entries(own, [g])) == [(1, "redundant"), (2, "duplicate")]


def test_multi_line_entry_end_line() -> None:
    own = index_entries(Path("/f.md"), "- a\n  b\n- A\n  b.\n")
    (finding,) = check_entries(own, [])
    assert (finding.line, finding.end_line) == (3, 4)


def test_budget_finding() -> None:
    settings = Settings(budget_bytes=10)
    assert budget_finding(Path("/f"), 10, 3, settings) is None
    over = budget_finding(Path("/f"), 11, 3, settings)
    assert over is not None and (over.line, over.column, over.code) == (1, 1, "over-budget")
    assert over.severity is Severity.WARNING and "11 bytes" in over.message and "10-byte" in over.message
    tokens = Settings(budget_bytes=None, budget_tokens=2)
    assert budget_finding(Path("/f"), 10**6, 2, tokens) is None
    assert "2-token" in budget_finding(Path("/f"), 1, 3, tokens).message


def test_check_content_counts_merged_bytes_of_the_general_files() -> None:
    general = [Source(Path("/g"), Scope.GLOBAL, True, 6, 1, text=" 12345\n"),
               Source(Path("/bad"), Scope.PROJECT, False, 99, 0, reason="x")]
    settings = Settings(budget_bytes=12)
    assert check_content(Path("/f"), "\n12345\n", general, settings) == []  # "12345\n\n12345"
    assert codes(check_content(Path("/f"), "123456", general, settings)) == [(1, "over-budget")]


def test_to_json_has_exactly_the_contract_keys() -> None:
    (finding,) = check_entries(index_entries(Path("/f.md"), "- a\n- a\n"), [])
    assert finding.to_json() == {"path": "/f.md", "line": 2, "column": 1, "severity": "warning",
                                 "code": "duplicate", "message": finding.message}
    assert list(finding.to_json()) == ["path", "line", "column", "severity", "code", "message"]


def _tree(base: Path) -> tuple[Path, Path, Settings]:
    g = base / "g"
    g.mkdir()
    (g / "GEMINI.md").write_text("- shared\n")
    project = base / "p"
    (project / ".git").mkdir(parents=True)
    (project / "GEMINI.md").write_text("- shared\n- mine\n- mine\n")
    (project / "sub").mkdir()
    (project / "sub" / "GEMINI.md").write_text("- mine\n- sub\n- sub\n")
    return g, project, Settings(global_dir=g)


def test_check_file_only_looks_at_more_general_files(base: Path) -> None:
    g, project, settings = _tree(base)
    assert codes(check_file(project / "GEMINI.md", settings)) == [(1, "redundant"), (3, "duplicate")]
    assert check_file(g / "GEMINI.md", settings) == []
    assert codes(check_file(project / "sub" / "GEMINI.md", settings)) == [(1, "redundant"), (3, "duplicate")]


def test_check_file_outside_the_chain_uses_the_whole_chain(base: Path) -> None:
    _, project, settings = _tree(base)
    notes = project / "notes.md"
    notes.write_text("- shared\n- mine\n")
    findings = check_file(notes, settings)
    assert codes(findings) == [(1, "redundant"), (2, "redundant")]


def test_check_targets_directory_covers_the_chain(base: Path) -> None:
    _, project, settings = _tree(base)
    findings = check_targets([project / "sub"], settings).findings
    assert [(f.path.name, f.path.parent.name, f.line, f.code) for f in findings] == [
        ("GEMINI.md", "p", 1, "redundant"), ("GEMINI.md", "p", 3, "duplicate"),
        ("GEMINI.md", "sub", 1, "redundant"), ("GEMINI.md", "sub", 3, "duplicate")]


def test_check_targets_defaults_to_the_cwd_and_reports_each_finding_once(
        base: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, project, settings = _tree(base)
    monkeypatch.chdir(project / "sub")
    once = check_targets([], settings).findings
    again = check_targets(["GEMINI.md", ".", project / "sub" / "GEMINI.md", "../GEMINI.md"], settings).findings
    as_json = [f.to_json() for f in once]
    assert len(as_json) == 4
    # The file given first reports first; the directory then adds only what is new.
    assert [f.to_json() for f in again] == as_json[2:] + as_json[:2]
    assert all(f.path.is_absolute() for f in again)


def test_check_targets_unreadable_and_missing(base: Path) -> None:
    _, project, settings = _tree(base)
    (project / "sub" / "GEMINI.md").unlink()
    (project / "sub" / "GEMINI.md").symlink_to("gone.md")
    (finding,) = [f for f in check_targets([project / "sub"], settings).findings if f.code == "unreadable"]
    assert (finding.line, finding.column, finding.severity) == (1, 1, Severity.ERROR)
    assert "dangling" in finding.message
    with pytest.raises(TargetError):
        check_targets([project / "nope.md"], settings).findings


def test_check_json_is_what_json_dumps_writes_byte_for_byte() -> None:
    import json

    from memory_lens.cli import findings_json
    from memory_lens.core.checks import Finding

    odd = 'quote " backslash \\ tab \t nul \x00 line sep \u2028 é 中 😀 \ud800'
    findings = [Finding(Path("/p/GEMINI.md"), 3, 1, "duplicate", "plain"),
                Finding(Path(f"/p/{odd}/GEMINI.md"), 10**9, 7, "secret", odd, 12)]
    for given in (findings, findings[:1], []):
        assert findings_json(given) == json.dumps([f.to_json() for f in given], ensure_ascii=False, indent=2)
