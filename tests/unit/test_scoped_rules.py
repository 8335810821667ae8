"""Scoped rules (core/agents/scoped.py): the brace-glob dialect, the bounds on matching, and a
rule matching nothing found with one walk for all rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lens.core.agents import scoped
from memory_lens.core.agents.scoped import GlobError, ScopedRule, brace_glob, nothing_matched, workspace_files


@pytest.mark.parametrize(("glob", "path", "hit"), [
    ("**/*.ts", "a.ts", True), ("**/*.ts", "src/deep/a.ts", True), ("*.ts", "src/a.ts", False),
    ("*.ts", "a.ts", True), ("src/**", "src/a/b.ts", True), ("src/**/*.ts", "src/a.ts", True),
    ("a/**/b", "a/b", True), ("**/*.{ts,tsx}", "x/a.tsx", True), ("**/*.{ts,tsx}", "x/a.js", False),
    ("{src,lib}/**/*.py", "lib/x.py", True), ("{a}.ts", "{a}.ts", True), ("{a,b.ts", "{a,b.ts", True),
    ("[!x].ts", "a.ts", True), ("[!x].ts", "x.ts", False), ("a?.md", "ab.md", True), ("a?.md", "a/.md", False),
    ("**", "any/thing", True), ("{a,{b,c}}.md", "c.md", True),
])
def test_brace_glob_matches_as_minimatch_does(glob: str, path: str, hit: bool) -> None:
    assert bool(brace_glob(glob).fullmatch(path)) is hit


@pytest.mark.parametrize(("glob", "why"), [
    ("", "is empty"), ("  ", "is empty"), ("/src/*.ts", "is absolute"), ("C:/x/*.ts", "is absolute"),
    ("{a,b}" * 20, "expands to 1,048,576 patterns"), ("{a,b,c,d}" * 6, "expands to 4,096 patterns"),
    ("x" * 5000, "characters long"),
])
def test_globs_the_agent_rejects_or_that_explode(glob: str, why: str) -> None:
    with pytest.raises(GlobError, match=why):
        brace_glob(glob)


def test_nested_braces_that_explode_are_counted_without_expanding() -> None:
    with pytest.raises(GlobError, match="expands to"):
        brace_glob("{a,{b,c}}" * 200)  # 3^200 patterns: counted, bounded, never expanded


def _rule(path: Path, base: Path, *globs: str) -> ScopedRule:
    return ScopedRule(path, "cursor", "Cursor", "globs", 2, base,
                      tuple((g, brace_glob(g).fullmatch) for g in globs))


def test_one_pass_over_the_workspace_finds_every_rule_matching_nothing(tmp_path: Path) -> None:
    (tmp_path / "sub" / "src").mkdir(parents=True)
    (tmp_path / "sub" / "src" / "a.ts").write_text("x")
    (tmp_path / "b.py").write_text("x")
    files, complete = workspace_files(tmp_path)
    assert complete and sorted(files) == ["b.py", "sub", "sub/src", "sub/src/a.ts"]
    rules = [_rule(tmp_path / "r1.mdc", tmp_path, "**/*.ts"), _rule(tmp_path / "r2.mdc", tmp_path, "*.go"),
             _rule(tmp_path / "r3.mdc", tmp_path / "sub", "src/*.ts"),  # relative to its own folder
             _rule(tmp_path / "r4.mdc", tmp_path / "sub", "*.py")]  # b.py is not under sub/
    found = nothing_matched(rules, tmp_path, files)
    assert [(f.path.name, f.code, f.line) for f in found] == [("r2.mdc", "rule-matches-nothing", 2),
                                                               ("r4.mdc", "rule-matches-nothing", 2)]


def test_past_the_bounds_nothing_is_claimed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("x")
    files, complete = workspace_files(tmp_path, limit=3)
    assert len(files) == 3 and not complete
    monkeypatch.setattr(scoped, "MAX_TESTS", 2)
    assert nothing_matched([_rule(tmp_path / "r.mdc", tmp_path, "*.go")], tmp_path, [f"f{i}.txt" for i in range(5)]) == []
