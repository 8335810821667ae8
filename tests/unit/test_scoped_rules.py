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
    ("x" * 5000, "characters long"), ("[z-a].ts", "is not a valid glob"),
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
    paths = [f"f{i}.txt" for i in range(5)]
    assert nothing_matched([_rule(tmp_path / "r.mdc", tmp_path, "q*")], tmp_path, paths) == []  # 5 tries: past 2
    # A glob with a literal tail is tried only on the paths ending with it: none here, so no try.
    assert [f.code for f in nothing_matched([_rule(tmp_path / "r.mdc", tmp_path, "*.go")], tmp_path, paths)] == [
        "rule-matches-nothing"]


@pytest.mark.parametrize(("glob", "tail"), [
    ("**/*.ts", ".ts"), ("src/**", ""), ("{a,b}/x*.py", ".py"), ("lib/*.{ts,tsx}", ""), ("foo.md", "foo.md"),
    ("docs/", ""), ("x[ab]c", "c"),
])
def test_the_literal_tail_a_matching_path_ends_with(glob: str, tail: str) -> None:
    assert scoped._literal_tail(glob) == tail


def test_claude_paths_match_through_a_directory_entry(tmp_path: Path) -> None:
    from memory_lens.core.agents.claude_rules import scoped_rule

    rule, _ = scoped_rule(tmp_path / ".claude" / "rules" / "r.md", "---\npaths: docs, lib/\n---\nx\n")
    assert rule is not None
    assert nothing_matched([rule], tmp_path, ["docs", "docs/a.md", "lib", "lib/b.py"]) == []
    assert len(nothing_matched([rule], tmp_path, ["doc", "src/lib.py"])) == 1


def test_a_walk_for_the_globs_tails_yields_directories_and_those_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for name in ("a.ts", "b.py", "c.md"):
        (tmp_path / "src" / name).write_text("x")
    rules = [_rule(tmp_path / "r.mdc", tmp_path, "src/**/*.ts")]
    assert scoped.name_patterns(rules) == ["*.ts"]
    files, complete = workspace_files(tmp_path, patterns=scoped.name_patterns(rules))
    assert complete and "src/a.ts" in files and "src" in files
    if scoped_walk_filters():
        assert sorted(files) == ["src", "src/a.ts"]
    assert nothing_matched(rules, tmp_path, files) == []
    assert scoped.name_patterns([_rule(tmp_path / "r.mdc", tmp_path, "src/**")]) is None  # no tail: every file


def scoped_walk_filters() -> bool:
    from memory_lens.core.scan import rignore_available

    return rignore_available()  # the pure-Python walker gives every path (a superset)


def test_claude_paths_anchored_at_the_base_match_its_files(tmp_path: Path) -> None:
    from memory_lens.core.agents.claude_rules import scoped_rule

    rule, _ = scoped_rule(tmp_path / ".claude" / "rules" / "r.md", "---\npaths: /x.py\n---\nx\n")
    assert rule is not None
    assert nothing_matched([rule], tmp_path, ["x.py"]) == []


def test_claude_md_excludes_take_picomatch_braces_and_classes() -> None:
    from memory_lens.core.agents.claude_rules import glob_matcher

    match = glob_matcher(["/home/**/{a,b}.md", "/x/[cd].md", "{q,r}" * 20])
    assert match("/home/me/p/a.md") and match("/x/d.md")
    assert not match("/home/me/p/c.md") and not match("/x/e.md")


@pytest.mark.parametrize(("glob", "path", "minimatch", "spanning"), [
    ("a**/b", "ax/y/b", False, True), ("**/*.ts", "a/b.ts", True, True), ("src/**", "src/a/b", True, True),
])
def test_one_translation_two_dialects_of_a_star_star_inside_a_name(glob: str, path: str, minimatch: bool,
                                                                   spanning: bool) -> None:
    assert bool(scoped.compile_glob(glob).fullmatch(path)) is minimatch
    assert bool(scoped.compile_glob(glob, star_star_in_names=True).fullmatch(path)) is spanning


def test_claude_paths_globs_compile_without_a_deprecation_warning() -> None:
    """`paths:` globs compile with pathspec's GitIgnoreSpecPattern, not its deprecated
    `gitwildmatch` name (the same class since pathspec 1.0: the real-agent trees are unchanged)."""
    import warnings

    from memory_lens.core.agents.claude_rules import rule_matches

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rule_matches(("no-warning/**/*.ts",), Path("/p/no-warning/a/b.ts"), Path("/p")) == "no-warning/**/*.ts"
