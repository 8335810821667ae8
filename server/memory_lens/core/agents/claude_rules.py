"""Claude Code's rules files: their front matter (`paths:` globs) and how a glob matches a file.

A `paths:` entry is a gitignore-style pattern (Claude Code matches it with the `ignore` package,
as `pathspec`'s `GitIgnoreSpecPattern` does: the class its deprecated `gitwildmatch` name stands
for since pathspec 1.0, so the same regexes) against the file's path relative to the folder that holds
`.claude/` (for the user's rules: the start directory); a trailing `/**` is dropped, and a list
of nothing but `**` means no `paths:` at all. `claudeMdExcludes` entries are globs (picomatch,
dot files included) against a file's absolute path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import pathspec
from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from memory_lens.core.agents.scoped import GlobError, ScopedRule, compile_glob

_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)


@dataclass(frozen=True)
class FrontMatter:
    body: str  # the text after the front matter (all of it when there is none)
    globs: tuple[str, ...] = ()  # the `paths:` globs ((): loads at start)
    problem: str = ""  # why the front matter could not be read


def front_matter(text: str) -> FrontMatter:
    """TEXT's `---` front matter, read as Claude Code reads the `paths:` key of a rules file."""
    opened = _OPEN.match(text)
    if not opened:
        return FrontMatter(text)
    closed = _CLOSE.search(text, opened.end())
    if not closed:
        return FrontMatter(text)
    head, body = text[opened.end():closed.start()], text[closed.end():]
    try:
        paths = _paths_value(head)
    except ValueError as err:
        return FrontMatter(body, ("\0invalid",), f"front matter is not valid YAML ({err}): Claude Code does "
                                                   "not load this file at start")
    globs = tuple(g[:-3] if g.endswith("/**") else g for g in paths)
    globs = tuple(g for g in globs if g)
    if not globs or all(g == "**" for g in globs):
        return FrontMatter(body)
    return FrontMatter(body, globs)


def _paths_value(head: str) -> list[str]:
    """The `paths:` value of the YAML HEAD: a string (comma separated), a flow or a block list."""
    lines = head.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"paths[ \t]*:(.*)$", line)
        if not m:
            continue
        value = m.group(1).strip()
        if value.startswith("["):
            if not value.endswith("]"):
                raise ValueError("a list opened with [ is not closed")
            return [_scalar(v) for v in _split(value[1:-1])]
        if value:
            return [_scalar(v) for v in _split(value)]
        items = []
        for item in lines[i + 1:]:
            mm = re.match(r"[ \t]*-[ \t]+(.*)$", item)
            if not mm:
                break
            items.append(_scalar(mm.group(1)))
        return items
    return []


def _split(value: str) -> list[str]:
    return [v for v in (p.strip() for p in value.split(",")) if v]


def _scalar(value: str) -> str:
    value = value.strip()
    if value[:1] in "\"'":
        if len(value) < 2 or value[-1] != value[0]:
            raise ValueError(f"the string {value} is not closed")
        return value[1:-1]
    return value


def rule_matches(globs: tuple[str, ...], file: Path, base: Path) -> str | None:
    """The first of GLOBS matching FILE, relative to BASE (the folder holding `.claude/`); None
    when none does, FILE is not below BASE, or the globs are invalid."""
    rel = _relative(file, base)
    if rel is None:
        return None
    for glob in globs:
        spec = _spec(glob)
        if spec is not None and spec.match_file(rel):
            return glob
    return None


@lru_cache(maxsize=256)
def _relative(file: Path, base: Path) -> str | None:
    """FILE relative to BASE, with `/`; None when it is not below BASE. Kept: one request matches
    the same file against every rule of a folder."""
    try:
        rel = Path(os.path.relpath(file, base)).as_posix()
    except ValueError:
        return None
    return None if rel.startswith("..") or os.path.isabs(rel) else rel


@lru_cache(maxsize=4096)
def _spec(glob: str) -> pathspec.PathSpec | None:
    """GLOB compiled (None: invalid: it matches nothing, as in Claude Code); kept, as the same
    rules are matched against every file the editor opens."""
    try:
        return pathspec.PathSpec.from_lines(GitIgnoreSpecPattern, [glob])
    except Exception:
        return None


def invalid_globs(globs: tuple[str, ...]) -> list[str]:
    """The globs of GLOBS that are not valid patterns."""
    return [glob for glob in globs if _spec(glob) is None]


def glob_matcher(patterns: list[str]) -> Callable[[str], bool]:
    """A test of an absolute path against picomatch-style PATTERNS (`**`, `*`, `?`, `[...]`,
    `{a,b}`, dot files; the shared dialect of core/agents/scoped.py, where a `**` inside a name
    spans directories too). A pattern past the shared bounds matches nothing."""
    regexes = []
    for p in patterns:
        if not p.startswith("!"):
            try:
                regexes.append(compile_glob(p, star_star_in_names=True))
            except GlobError:
                pass
    return lambda path: any(r.fullmatch(path) for r in regexes)


def scoped_rule(path: Path, text: str) -> tuple[ScopedRule | None, str]:
    """Rules file PATH (with TEXT) as a scoped rule, for the checks of core/agents/scoped.py (None:
    it has no `paths:`, so it loads at start); and the `frontmatter` problem, if any."""
    fm = front_matter(text)
    if fm.problem or not fm.globs:
        return None, fm.problem
    line = next((i for i, ln in enumerate(text.splitlines()[:1000], 1) if re.match(r"paths[ \t]*:", ln)), 1)
    text_path = str(path)
    at = text_path.rfind(f"{os.sep}.claude{os.sep}")
    base = Path(text_path[:at]) if at > 0 else path.parent
    valid = tuple((g, spec.match_file) for g in fm.globs if (spec := _spec(g)) is not None)
    bad = tuple((g, "is not a valid gitignore-style pattern: Claude Code matches nothing with it")
                for g in fm.globs if _spec(g) is None)
    return ScopedRule(path, "claude", "Claude Code", "paths", line, base, valid, bad), ""
