"""Scoped rules: rules files that apply only to the files their globs match, checked alike for
every agent (Claude Code's `.claude/rules` with `paths:`, Cursor's `.cursor/rules` with `globs`,
Copilot CLI's `.github/instructions/**/*.instructions.md` with `applyTo`).

Each agent reads its own rules files into `ScopedRule`s (its globs compiled in its own dialect,
with the globs it would reject); this module turns them into findings:

- `invalid-glob` (warning): a glob the agent rejects, or one whose braces expand to more than
  `MAX_EXPANSIONS` patterns (the agent expands them all; Memory Lens matches it without expanding);
- `rule-matches-nothing` (information): no file of the workspace matches any of the rule's globs.
  The rules files of a workspace are found in the memory scan's own walk (`RULE_HOLDERS`, then
  `rules_below`); one walk of the workspace serves every rule (`workspace_files`, at most `MAX_WALK_FILES` paths);
  a glob is tried only on the paths ending with its literal tail, at most `MAX_TESTS` tries in
  all: past either bound, no rule is said to match nothing (Memory Lens cannot tell).
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from memory_lens.core.checks import INVALID_GLOB, RULE_MATCHES_NOTHING, Finding

MAX_EXPANSIONS = 1024  # brace expansions of one glob past which it "explodes"
MAX_GLOB_CHARS = 4096
MAX_WALK_FILES = 200_000
MAX_TESTS = 1_000_000

# The rules folders: (folder holding them, its subfolder, name endings, agent, label); each agent's
# parser: rule_files.py. Copilot CLI matches the ending without regard to case.
RULE_FOLDERS = ((".claude", "rules", (".md",), "claude", "Claude Code"),
                (".cursor", "rules", (".mdc", ".md"), "cursor", "Cursor"),
                (".github", "instructions", (".instructions.md",), "copilot", "Copilot CLI"))

RULE_HOLDERS = tuple(dict.fromkeys(holder for holder, *_ in RULE_FOLDERS))  # the scan reports these directories
RULE_NAME_PATTERNS = ("*.md", "*.mdc")  # what a rules file is named

Matcher = Callable[[str], bool]  # a path relative to the rule's base, with `/`


@dataclass(frozen=True)
class ScopedRule:
    """One rules file scoped by globs, as its agent reads it."""

    path: Path
    agent: str  # the agent's name, which starts each message ("cursor")
    label: str  # the agent as people name it ("Cursor")
    key: str  # the front matter key of the globs ("globs", "paths", "applyTo")
    line: int  # the 1-based line of that key
    base: Path  # the directory the globs are relative to
    matchers: tuple[tuple[str, Matcher], ...]  # each valid glob and its test
    problems: tuple[tuple[str, str], ...] = ()  # each glob the agent rejects, and why


def rule_folder(path: Path) -> tuple[Path, str, str] | None:
    """For a rules file PATH (`<base>/.claude/rules/**/*.md`, `<base>/.cursor/rules/**/*.mdc`,
    `<base>/.github/instructions/**/*.instructions.md`): its base directory, agent and label;
    None for any other path."""
    parts = path.parts
    for holder, sub, exts, agent, label in RULE_FOLDERS:
        if not (path.name.lower() if agent == "copilot" else path.name).endswith(exts):
            continue
        for i in range(len(parts) - 3, -1, -1):
            if parts[i] == holder and parts[i + 1] == sub:
                return Path(*parts[:i]) if i else Path(parts[0]), agent, label
    return None


def glob_findings(rule: ScopedRule) -> list[Finding]:
    """One `invalid-glob` finding per glob of RULE its agent rejects or that explodes."""
    return [Finding(rule.path, rule.line, 1, INVALID_GLOB,
                    f"{rule.agent}: the glob {_show(glob)} of {rule.key} {why}", rule.line)
            for glob, why in rule.problems]


def nothing_matched(rules: Sequence[ScopedRule], root: Path, paths: Iterable[str]) -> list[Finding]:
    """`rule-matches-nothing` for each of RULES with valid globs that none of PATHS (relative to
    ROOT, with `/`; the workspace's files and directories) matches. A glob is tried only on the
    paths ending with its literal tail (found by bisection in the paths sorted backwards: a path
    a glob matches ends so, or lies below a directory that does), at most `MAX_TESTS` tries in
    all: past that, no rule is said to match nothing."""
    listed = list(paths)
    indexes: dict[str, list[str]] = {}  # base -> the paths below it, relative to it, reversed and sorted
    tests = 0
    out: list[Finding] = []
    for rule in rules:
        base = _relative(rule.base, root) if rule.matchers else None
        if base is None:
            continue
        if base not in indexes:
            indexes[base] = sorted(p[len(base):][::-1] for p in listed if p.startswith(base))
        index = indexes[base]
        hit = False
        for glob, match in rule.matchers:
            tail = _literal_tail(glob)[::-1]
            lo = bisect_left(index, tail)
            hi = bisect_left(index, tail + "\U0010ffff") if tail else len(index)
            for rev in index[lo:hi]:
                tests += 1
                if tests > MAX_TESTS:
                    return []
                if match(rev[::-1]):
                    hit = True
                    break
            if hit:
                break
        if not hit:
            out.append(Finding(rule.path, rule.line, 1, RULE_MATCHES_NOTHING,
                               f"{rule.agent}: no file in the workspace matches {rule.key} "
                               f"{', '.join(_show(g) for g, _ in rule.matchers)}: {rule.label} never applies this rule",
                               rule.line))
    return out


def name_patterns(rules: Sequence[ScopedRule]) -> list[str] | None:
    """The file-name patterns a walk needs to yield for `nothing_matched` to judge RULES: `*TAIL`
    for each glob's literal tail (its last name's part); None (every file) when a glob has none."""
    out = set()
    for rule in rules:
        for glob, _ in rule.matchers:
            last = _literal_tail(glob).rsplit("/", 1)[-1]
            if not last:
                return None
            out.add("*" + last)
    return sorted(out)


def _literal_tail(glob: str) -> str:
    """The text GLOB ends with after its last wildcard (`*`, `?`, a class, braces, an escape):
    every path it matches ends so, or is below a directory that does ("" when that cannot be
    said: a glob of directories only, `dir/`)."""
    tail = re.split(r"[*?\]}\\]", glob.lstrip("/"))[-1]  # a leading `/` anchors (Claude Code, Copilot)
    return "" if "[" in tail or "{" in tail or tail.endswith("/") else tail


def _relative(base: Path, root: Path) -> str | None:
    """BASE relative to ROOT as a prefix of walked paths ("" or "sub/dir/"); None outside ROOT."""
    try:
        rel = Path(os.path.relpath(base, root)).as_posix()
    except ValueError:
        return None
    if rel == ".":
        return ""
    return None if rel.startswith("../") or rel == ".." else rel + "/"


def workspace_files(root: Path, limit: int = MAX_WALK_FILES, patterns: Iterable[str] | None = None
                    ) -> tuple[list[str], bool]:
    """The paths under ROOT (relative, with `/`): its directories and the files matching PATTERNS
    (None: all), as the memory scan walks them (ignored paths pruned, `.git` never entered), at
    most LIMIT of them; and whether that is all of them."""
    from memory_lens.core.scan import walk_everything

    out: list[str] = []
    prefix = len(str(root).rstrip(os.sep)) + 1
    for path in walk_everything(root, patterns):
        text = str(path)[prefix:]
        if not text:
            continue
        if len(out) >= limit:
            return out, False
        out.append(text if os.sep == "/" else text.replace(os.sep, "/"))
    return out, True


def rules_below(holders: Iterable[Path]) -> list[Path]:
    """The rules files (`rule_folder`) in HOLDERS, the `RULE_HOLDERS` directories the memory scan
    found (core/scan.py `scan_tree`), sorted: each walked as the whole workspace's walk would
    (ignored paths pruned), so the workspace is not walked a second time for them."""
    from memory_lens.core.scan import walk_everything

    found = {p for holder in holders if os.path.isdir(holder) and not os.path.islink(holder)
             for p in walk_everything(holder, RULE_NAME_PATTERNS) if rule_folder(p) is not None}
    return sorted(found)


def _show(glob: str) -> str:
    return f"`{glob}`" if len(glob) <= 80 else f"`{glob[:77]}...`"


# Brace globs (minimatch and VS Code: Cursor's `globs`, Copilot's `applyTo`) ----------------------


class GlobError(ValueError):
    """Why an agent rejects a glob, or why it would explode."""


def brace_glob(glob: str) -> re.Pattern[str]:
    """GLOB in Cursor's dialect (minimatch, as VS Code matches `globs`): `compile_glob`, and
    GlobError for an empty or absolute glob."""
    if not glob.strip():
        raise GlobError("is empty: it matches nothing")
    if glob.startswith("/") or re.match(r"[A-Za-z]:[\\/]", glob):
        raise GlobError("is absolute: globs are relative to the project, so it matches nothing")
    return compile_glob(glob)


def compile_glob(glob: str, star_star_in_names: bool = False, prefix: str = "") -> re.Pattern[str]:
    """GLOB as one regular expression over a relative path with `/` (PREFIX before it): `**` any
    directories, `*` and `?` within one name, `[...]` a class, `{a,b}` alternatives (nested too;
    one without a comma is literal), a `{` or `[` not closed is literal. The dialects differ in
    one point: a `**` inside a name (`a**`) is `*` (minimatch), or with STAR_STAR_IN_NAMES spans
    directories (Copilot's `applyTo` as Memory Lens reads it, picomatch for `claudeMdExcludes`).
    GlobError for a glob over MAX_GLOB_CHARS, one that expands to more than MAX_EXPANSIONS
    patterns (counted, never expanded), or a class no regular expression takes (`[z-a]`)."""
    if len(glob) > MAX_GLOB_CHARS:
        raise GlobError(f"is {len(glob)} characters long: Memory Lens reads globs of at most {MAX_GLOB_CHARS}")
    regex, count, _ = _translate(glob, 0, False, star_star_in_names)
    if count > MAX_EXPANSIONS:
        raise GlobError(f"expands to {count:,} patterns (over {MAX_EXPANSIONS:,}): braces multiply; "
                        "write fewer alternatives")
    try:
        return re.compile(prefix + regex, re.S)
    except re.error as err:
        raise GlobError(f"is not a valid glob ({err.msg}): it matches nothing") from None


def split_commas(value: str) -> list[str]:
    """VALUE split at the commas outside braces, each part trimmed, empty ones left out (a
    comma-separated `globs` or `applyTo`)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(value):
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        elif c == "," and not depth:
            out.append(value[start:i])
            start = i + 1
    out.append(value[start:])
    return [v for v in (p.strip() for p in out) if v]


def _translate(glob: str, i: int, nested: bool, star_star_in_names: bool) -> tuple[str, int, int]:
    """The regex of GLOB from I up to its end, or (NESTED) to a `,` or `}` at this level; how many
    patterns it expands to; where it stopped."""
    out: list[str] = []
    count = 1
    n = len(glob)
    while i < n:
        c = glob[i]
        if nested and c in ",}":
            break
        if c == "*" and glob.startswith("**", i):
            j = i + 2
            while j < n and glob[j] == "*":
                j += 1
            at_start = star_star_in_names or i == 0 or glob[i - 1] == "/"
            if at_start and glob.startswith("/", j):
                out.append("(?:[^/]*/)*")
                i = j + 1
            else:
                out.append(".*" if at_start else "[^/]*")
                i = j
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = glob.find("]", i + 2)
            if end < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = glob[i + 1:end]
                neg = body[:1] in "!^" and len(body) > 1
                body = body[1:] if neg else body
                out.append("[" + ("^" if neg else "") + body.replace("\\", "\\\\").replace("[", "\\[") + "]")
                i = end + 1
        elif c == "{":
            alts, total, j, closed = [], 0, i + 1, False
            while j < n:
                regex, k, j = _translate(glob, j, True, star_star_in_names)
                alts.append(regex)
                total += k
                if j < n and glob[j] == ",":
                    j += 1
                    continue
                closed = j < n and glob[j] == "}"
                break
            if closed and len(alts) > 1:
                out.append("(?:" + "|".join(alts) + ")")
                count *= total
                i = j + 1
            else:
                out.append(re.escape(c))
                i += 1
            if count > MAX_EXPANSIONS:
                count = min(count, MAX_EXPANSIONS ** 4)  # enough to say it explodes, and bounded
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out), count, i
