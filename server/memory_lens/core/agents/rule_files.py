"""Reading scoped rules files, whichever agent's, into `ScopedRule`s and their findings
(core/agents/scoped.py): each agent's own parser, and one finding for a file that cannot be used."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Sequence

from memory_lens.core.agents import claude_rules, copilot, cursor
from memory_lens.core.agents.common import decode_lossy, read_raw
from memory_lens.core.agents.scoped import (
    ScopedRule,
    glob_findings,
    name_patterns,
    nothing_matched,
    rule_folder,
    workspace_files,
)
from memory_lens.core.checks import ENCODING, FRONTMATTER, TOO_LARGE, Finding, unreadable_finding

RULE_READ_LIMIT = 16 * 1024 * 1024  # a rules file larger than this is not read (`too-large`)
HEAD_BYTES = 1 << 20  # what is read of a rules file to find its front matter
PARSERS: dict[str, Callable[[Path, str], tuple[ScopedRule | None, str]]] = {
    "claude": claude_rules.scoped_rule, "cursor": cursor.scoped_rule, "copilot": copilot.scoped_rule}


def read_rules(paths: Iterable[Path]) -> tuple[list[ScopedRule], list[Finding]]:
    """The scoped rules among rules files PATHS, and the findings of reading them: one per file
    for a file that cannot be read, is too large or is binary; `frontmatter`; `invalid-glob`."""
    rules: list[ScopedRule] = []
    found: list[Finding] = []
    for path in paths:
        where = rule_folder(path)
        if where is None:
            continue
        _, agent, label = where
        got = read_raw(path, HEAD_BYTES)
        if got.missing:
            continue
        if got.reason:
            found.append(unreadable_finding(path, got.reason.removeprefix("cannot be read: ")))
        elif got.size > RULE_READ_LIMIT:
            found.append(Finding(path, 1, 1, TOO_LARGE, f"{agent}: {got.size} bytes, over the {RULE_READ_LIMIT} bytes "
                                 "Memory Lens reads of a rules file: not checked", 1))
        elif b"\0" in got.data:
            found.append(Finding(path, got.data.count(b"\n", 0, got.data.index(b"\0")) + 1, 1, ENCODING,
                                 f"{agent}: a binary file (NUL bytes), not text: {label} cannot use it as a rule",
                                 1))
        else:
            text = decode_lossy(got.data)
            rule, problem = PARSERS[agent](path, text)
            if problem:
                found.append(Finding(path, 1, 1, FRONTMATTER, f"{agent}: {problem}", 1))
            if rule is not None:
                rules.append(rule)
                found += glob_findings(rule)
    return rules, found


def rule_file_findings(paths: Sequence[Path], root: Path | None = None,
                       walked: tuple[list[str], bool] | None = None) -> list[Finding]:
    """Every finding of the rules files PATHS: `read_rules`', then `rule-matches-nothing` against
    WALKED (`workspace_files(ROOT)`; None: walked here, once for all of PATHS, yielding only the
    files their globs' tails name), unless that walk stopped at its bound. ROOT defaults to the
    base of the first rule."""
    rules, found = read_rules(paths)
    if rules:
        root = root or rules[0].base
        files, complete = workspace_files(root, patterns=name_patterns(rules)) if walked is None else walked
        if complete:
            found += nothing_matched(rules, root, files)
    return sorted(found, key=lambda f: (str(f.path), f.line))
