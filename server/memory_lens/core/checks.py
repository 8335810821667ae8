"""Checks over memory files: unreadable, too-large, encoding, duplicate, redundant, secret and over-budget
(per-agent over-budget and not-loaded: core/agents/budget.py).

`check FILE` checks that file against the more general files of its directory's chain;
checking a directory checks every file of that directory's chain and every memory file under
it (the language server's scan) the same way. The language
server publishes the same findings as diagnostics, so both always agree.
"""

from __future__ import annotations

import hashlib
import json
import os
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property, lru_cache, partial
from pathlib import Path
from typing import Callable, Container, Iterable, Mapping, Protocol, Sequence

from memory_lens.core.discovery import TargetError, find_project_root, has_marker, plan_chain, resolve_target
from memory_lens.core.files import EncodingIssue, FileStatus, read_memory_file
from memory_lens.core.imports import IMPORT_CODES, ImportNode, expand_imports, import_problems
from memory_lens.core.markdown import Entry, entry_keys, parse
from memory_lens.core.merge import (Reader, Source, concatenate, estimate_tokens, load_sources,
                                   utf8_size)
from memory_lens.core.read_policy import LINK_OUTSIDE, outside_reads
from memory_lens.core.secrets import Secret, find_secrets
from memory_lens.core.settings import Settings
from memory_lens.core.drift_fix import drift_message
from memory_lens.core.similar import DRIFT, NearIndex, near_index, near_matches, sibling_agent_files
from memory_lens.core.stale import STALE, stale_findings


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


UNREADABLE = "unreadable"
ENCODING = "encoding"
DUPLICATE = "duplicate"
REDUNDANT = "redundant"
OVER_BUDGET = "over-budget"
MAX_RELATED = 100  # locations a grouped duplicate finding points at, the first occurrence included
TOO_LARGE = "too-large"
NOT_LOADED = "not-loaded"  # an enabled agent does not load this file from its directory (core/agents/budget.py)
RULE_MATCHES_NOTHING = "rule-matches-nothing"  # a scoped rule no file of the workspace matches (core/agents/scoped.py)
INVALID_GLOB = "invalid-glob"  # a scoped rule's glob its agent rejects, or one that explodes (core/agents/scoped.py)
FRONTMATTER = "frontmatter"  # a rules file's front matter its agent cannot read as meant (core/agents/scoped.py)
SECRET = "secret"  # a key, token or password in the text (core/secrets.py)
SEVERITY_OF = {
    UNREADABLE: Severity.ERROR,
    TOO_LARGE: Severity.WARNING,
    ENCODING: Severity.WARNING,
    DUPLICATE: Severity.WARNING,
    REDUNDANT: Severity.INFORMATION,
    OVER_BUDGET: Severity.WARNING,
    NOT_LOADED: Severity.INFORMATION,
    RULE_MATCHES_NOTHING: Severity.INFORMATION,
    INVALID_GLOB: Severity.WARNING,
    FRONTMATTER: Severity.WARNING,
    LINK_OUTSIDE: Severity.WARNING,  # core/read_policy.py
    STALE: Severity.WARNING,  # core/stale.py
    SECRET: Severity.ERROR,
    DRIFT: Severity.INFORMATION,  # core/similar.py
    **{code: Severity.WARNING for code in IMPORT_CODES},  # import-not-found, -outside-root, -cycle, -depth
}


@dataclass(frozen=True)
class Location:
    path: Path
    line: int  # 1-based


@dataclass(frozen=True)
class Finding:
    """One problem in a memory file. Lines and columns are 1-based; `end_line` is inclusive."""

    path: Path
    line: int
    column: int
    code: str
    message: str
    end_line: int = 0
    related: tuple[Location, ...] = field(default=())

    @property
    def severity(self) -> Severity:
        return SEVERITY_OF[self.code]

    def to_json(self) -> dict:
        return {
            "path": str(self.path),
            "line": self.line,
            "column": self.column,
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
        }


@dataclass(frozen=True)
class FileEntries:
    """The entries of one file: the normalised form, first and last line (0-based) of each, and
    the first line of each normalised form. The `Entry` objects themselves are parsed only when
    asked for: the checks need none of them, and a large workspace has many."""

    path: Path
    keys: tuple[str, ...]
    lines: Sequence[int]  # compact arrays: a large workspace has a few hundred thousand entries
    end_lines: Sequence[int]
    first_line: Mapping[str, int]
    text: str = field(repr=False, compare=False)

    @cached_property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(parse(self.text).entries)

    @cached_property
    def digest(self) -> bytes:
        """A digest of its text: what the kept near-copies of a chain are stored under
        (`entry_cache.EntryCache.near`)."""
        return hashlib.blake2b(self.text.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    @cached_property
    def near_index(self) -> NearIndex:
        """Its entries by how they start and end, for the near-duplicate search
        (`similar.near_index`): made once, though a general file is compared with every file below it."""
        return near_index(self.first_line)

    @property
    def has_duplicates(self) -> bool:
        """Whether some entry is written more than once: fewer first occurrences than entries
        (entries with no text aside)."""
        return len(self.first_line) + self.keys.count("") < len(self.keys)

    @cached_property
    def duplicates(self) -> tuple[Finding, ...]:
        """The same entry written again in this file (on the later lines): they depend on this
        file alone, so they are worked out once per version of it."""
        if not self.has_duplicates:
            return ()
        found: list[Finding] = []
        first_line = self.first_line
        for key, start, end in zip(self.keys, self.lines, self.end_lines):
            if key and first_line[key] != start:
                first = first_line[key]
                found.append(Finding(
                    self.path, start + 1, 1, DUPLICATE,
                    f"duplicate entry: the same as line {first + 1} of this file; remove one of them",
                    end + 1, (Location(self.path, first + 1),)))
        return tuple(found)

    @cached_property
    def grouped_duplicates(self) -> tuple[Finding, ...]:
        """One finding per entry written more than once in this file, instead of one per copy: on
        its first copy, pointing at the first occurrence, then at the other copies (at most
        `MAX_RELATED` locations in all). What the language server shows: a file with the same
        line 260,000 times gets one diagnostic, not 260,000."""
        if not self.has_duplicates:
            return ()
        copies: dict[int, list[int]] = {}
        first_line = self.first_line
        for i, (key, start) in enumerate(zip(self.keys, self.lines)):
            if key and first_line[key] != start:
                copies.setdefault(first_line[key], []).append(i)
        found: list[Finding] = []
        for first, idx in copies.items():
            lines, ends = self.lines, self.end_lines
            n = len(idx)
            message = (f"duplicate entry: the same as line {first + 1} of this file; remove one of them" if n == 1
                       else f"duplicate entry: the same as line {first + 1} of this file, which has it "
                            f"{n + 1} times in all; remove the copies")
            related = (Location(self.path, first + 1),
                       *(Location(self.path, lines[i] + 1) for i in idx[1:MAX_RELATED]))
            found.append(Finding(self.path, lines[idx[0]] + 1, 1, DUPLICATE, message, ends[idx[0]] + 1, related))
        return tuple(sorted(found, key=lambda f: f.line))

    def key_at(self, line: int) -> str | None:
        """The normalised form of the entry starting on 0-based LINE, if one does."""
        i = bisect_left(self.lines, line)
        return self.keys[i] if i < len(self.lines) and self.lines[i] == line else None

    def end_of(self, line: int) -> int:
        """The last line (0-based) of the entry starting on LINE."""
        return self.end_lines[bisect_left(self.lines, line)]


def index_entries(path: Path, text: str) -> FileEntries:
    """Index the entries of TEXT (the content of PATH) and their first occurrences."""
    return file_entries(path, text, *entry_keys(text))


def file_entries(path: Path, text: str, keys: Sequence[str], lines: Sequence[int],
                 end_lines: Sequence[int]) -> FileEntries:
    """The index of PATH with TEXT from what `markdown.entry_keys(TEXT)` returns (KEYS, LINES,
    END_LINES): freshly parsed, or kept from an earlier parse (`core/entry_cache.py`)."""
    first = dict(zip(reversed(keys), reversed(lines)))  # the earliest line of each form wins
    first.pop("", None)
    return FileEntries(path, tuple(keys), array("I", lines), array("I", end_lines), first, text)


def unreadable_finding(path: Path, reason: str) -> Finding:
    return Finding(path, 1, 1, UNREADABLE,
                   f"unreadable memory file: it {reason}; agents skip it. Fix it or remove it.", 1)


def too_large_finding(path: Path, size: int, limit: int) -> Finding:
    """A memory file over the size limit: not read, so not checked (agents still load it)."""
    return Finding(path, 1, 1, TOO_LARGE,
                   f"memory file too large to check: {size} bytes, over the {limit}-byte limit; agents load "
                   "all of it. Shorten it, or raise the limit (--max-file-size, MEMORY_LENS_MAX_FILE_SIZE, "
                   "setting memoryLens.maxFileSize).", 1)


def unusable_finding(path: Path, reason: str, size: int, settings: Settings) -> Finding:
    """The finding for a memory file that could not be used: too large, or unreadable."""
    if size > settings.max_file_bytes:
        return too_large_finding(path, size, settings.max_file_bytes)
    return unreadable_finding(path, reason)


def encoding_finding(path: Path, issue: EncodingIssue) -> Finding:
    """A file the agent loads with bad bytes (read as U+FFFD, NUL kept): where the first one is."""
    return Finding(path, issue.line, issue.column, ENCODING,
                   f"bad bytes: the file {issue.reason}; the agent loads it with each bad byte read as "
                   "U+FFFD. Save it as UTF-8 text: until then add and remove will not rewrite it.",
                   issue.line)


@lru_cache(maxsize=1024)
def _already_in(path: Path, line: int) -> tuple[str, tuple[Location, ...]]:
    """The message and related location of a redundant entry whose first copy is on 0-based
    LINE of PATH: the same for every file below PATH repeating it, so made once (both are
    immutable, shared by the findings)."""
    return (f"redundant entry: already in {path}:{line + 1}, which loads before this file",
            (Location(path, line + 1),))


NearPairs = Mapping[str, tuple[int, str, int]]  # an entry -> (the other file's index, its near copy there, the score)


class Analyses(Protocol):
    """What the checks work out from texts alone: worked out each time (`FRESH`), or kept for the
    texts seen before (`entry_cache.EntryCache`, the persistent cache the parses are in)."""

    def secrets(self, text: str) -> list[Secret]:
        """`secrets.find_secrets(TEXT)`."""

    def near(self, own: FileEntries, general: Sequence[FileEntries], exact: Container[str]) -> NearPairs:
        """`near_pairs(OWN, GENERAL, EXACT)`."""


def near_pairs(own: FileEntries, general: Sequence[FileEntries], exact: Container[str]) -> NearPairs:
    """The entries of OWN nearly the same as an entry of one of GENERAL (`similar.near_matches`),
    but those in EXACT: the same for the same texts, so `EntryCache.near` keeps them."""
    return near_matches(own.first_line, [o.near_index for o in general], exact) if general else {}


class Fresh:
    """`Analyses` worked out each time."""

    secrets = staticmethod(find_secrets)
    near = staticmethod(near_pairs)


FRESH = Fresh()


def check_entries(own: FileEntries, general: Sequence[FileEntries], grouped: bool = False,
                  analyses: Analyses = FRESH) -> list[Finding]:
    """Duplicate entries within OWN, and entries of OWN already in a more general file, in line
    order (an entry is reported once: a duplicate is not also reported as redundant). GROUPED:
    one duplicate finding per repeated entry (`FileEntries.grouped_duplicates`), not per copy."""
    # Where each first occurrence in OWN appears first in the chain: the most general file wins.
    # Set intersections keep this linear in the (few) shared entries, not in all of them.
    seen_in: dict[str, tuple[FileEntries, int]] = {}
    mine = own.first_line.keys()
    for other in general:
        for key in mine & other.first_line.keys():
            if key not in seen_in:
                seen_in[key] = (other, other.first_line[key])
    redundant = []
    for key, (other, line) in seen_in.items():
        start = own.first_line[key]
        message, related = _already_in(other.path, line)
        redundant.append(Finding(own.path, start + 1, 1, REDUNDANT, message, own.end_of(start) + 1, related))
    redundant += near_redundant(own, general, seen_in, analyses)
    duplicates = own.grouped_duplicates if grouped else own.duplicates
    return sorted([*duplicates, *redundant], key=lambda f: f.line)


def near_redundant(own: FileEntries, general: Sequence[FileEntries], exact: Mapping[str, object],
                   analyses: Analyses = FRESH) -> list[Finding]:
    """Entries of OWN nearly the same as an entry of a more general file (rapidfuzz, with the
    score: `near_pairs`, from ANALYSES), the most general file first; none for those in EXACT
    (already redundant as they are). Only entries that start or end as one of the other file's do
    are compared."""
    if not general:
        return []
    found = []
    for key, (i, theirs, score) in analyses.near(own, general, exact).items():
        other = general[i]
        start, line = own.first_line[key], other.first_line[theirs]
        found.append(Finding(own.path, start + 1, 1, REDUNDANT,
                             f"redundant entry: nearly the same (similarity {score}%) as {other.path}:{line + 1}, "
                             "which loads before this file", own.end_of(start) + 1, (Location(other.path, line + 1),)))
    return found


def hygiene_findings(path: Path, text: str, settings: Settings) -> list[Finding]:
    """`stale` references and `drift` of memory file PATH with TEXT, whoever loads it."""
    return ([Finding(path, line, column, STALE, message, line) for line, column, message in stale_findings(path, text)]
            + drift_findings(path, text, settings))


def drift_findings(path: Path, text: str, settings: Settings) -> list[Finding]:
    """`drift`: another agent's file beside PATH (with TEXT) that is mostly the same text."""
    found = []
    for other in sibling_agent_files(path):
        got = read_memory_file(other, settings.max_file_bytes)
        message = drift_message(path, text, other, got.text) if got.loadable else None
        if message:
            found.append(Finding(path, 1, 1, DRIFT, message, 1, (Location(other, 1),)))
    return found


def merged_size(contents: Iterable[str]) -> tuple[int, int]:
    """UTF-8 bytes and estimated tokens of CONTENTS merged."""
    text = concatenate(contents)
    return utf8_size(text), estimate_tokens(text)


def budget_finding(path: Path, size: int, tokens: int, settings: Settings) -> Finding | None:
    """An over-budget finding for PATH when the merged memory there is too big."""
    over_bytes = settings.budget_bytes is not None and size > settings.budget_bytes
    over_tokens = settings.budget_tokens is not None and tokens > settings.budget_tokens
    if not (over_bytes or over_tokens):
        return None
    limit = (f"the {settings.budget_bytes}-byte budget" if over_bytes
             else f"the {settings.budget_tokens}-token budget")
    return Finding(path, 1, 1, OVER_BUDGET,
                   f"effective memory here is {size} bytes (~{tokens} tokens), over {limit}; "
                   "agents may cut it: remove or shorten entries", 1)


Indexer = Callable[[Path, str], FileEntries]


@dataclass(frozen=True)
class Rules:
    """Which agent-specific checks a file gets, from the agents that load it: the `import-*` codes
    of the imports they follow, and Gemini's budget of merged memory."""

    imports: frozenset[str]
    budget: bool


GEMINI_RULES = Rules(frozenset(IMPORT_CODES), True)


def import_findings(path: Path, text: str, imports: Sequence[ImportNode]) -> list[Finding]:
    """The `@path` imports of memory file PATH (with TEXT; IMPORTS its mentions) that Gemini CLI
    cannot follow, each on the line of the file's own mention (a failure nested below an import is
    reported there)."""
    return [Finding(path, p.node.line, p.node.start - text.rfind("\n", 0, p.node.start), p.code, p.message,
                    p.node.line)
            for p in import_problems(tuple(imports))]


def link_outside_findings(path: Path, text: str, imports: Sequence[ImportNode], settings: Settings,
                          real: Path | None = None) -> list[Finding]:
    """Memory file PATH (REAL: its real path, if known), or a file its IMPORTS read, whose real
    path leaves the project and the global memory directory (`read_policy.outside_reads`)."""
    return [Finding(path, o.line, o.start - text.rfind("\n", 0, o.start), LINK_OUTSIDE, o.message, o.line)
            for o in outside_reads(path, imports, settings.global_dir, settings.boundary_markers, real)]


def secret_findings(path: Path, text: str, find: Callable[[str], list[Secret]] = find_secrets) -> list[Finding]:
    """A `secret` finding on each line of memory file PATH (with TEXT) that holds a key, a token or
    a password (`core/secrets.py`): its kind and column, never the secret itself. FIND: what finds
    them (`EntryCache.secrets`: from the persistent cache when the text was checked before)."""
    return [Finding(path, s.line, s.column, SECRET,
                    f"{s.describe(with_line=False)}: every agent that loads this file sends it to its model, "
                    "and the file may be committed; remove the entry and revoke the secret", s.line)
            for s in find(text)]


def note_secret_findings(project_root: Path, settings: Settings) -> list[Finding]:
    """A `secret` finding for each line of the project's notes that holds a secret: at the line
    and column of the note file, where the language server shows it (`note_file_secrets`). Notes
    are read as the store reads them (a note file linking out of the project is not read); only a
    note whose content holds a secret is read again as the file's text."""
    from memory_lens.core.discovery import Scope
    from memory_lens.core.notes import notes_settings
    from memory_lens.core.notes.disk import read_note_files
    from memory_lens.core.notes.naming import is_note_file
    from memory_lens.core.write_policy import project_area

    directory = notes_settings(settings).project_dir(project_root)
    try:
        fnames = sorted(f for f in os.listdir(directory) if is_note_file(f))
    except OSError:
        return []
    area = project_area(project_root, settings.follow_outside_links)
    found: list[Finding] = []
    for fname, got in read_note_files(directory, Scope.PROJECT, fnames, area):
        if not isinstance(got, str) and find_secrets(got[0].content):
            try:
                text = (directory / fname).read_text(encoding="utf-8")
            except (OSError, UnicodeError):
                continue
            found += note_file_secrets(directory / fname, text)
    return found


def note_file_secrets(path: Path, text: str) -> list[Finding]:
    """A `secret` finding for each secret of note file PATH (its JSON TEXT), at the file's line and
    column: `check` and the language server (a note file open in the editor) report the same place.
    The note's content is what is checked (escaped in JSON, a password in quotes is no longer in
    quotes), found in the file as Memory Lens writes it; in any other file, the file's own text."""
    try:
        content = json.loads(text).get("content")
    except (ValueError, AttributeError, RecursionError):
        content = None
    start = text.find(json.dumps(content, ensure_ascii=False)) if isinstance(content, str) else -1
    found = []
    if start < 0:
        found = find_secrets(text)
    else:
        line_starts = [0]
        for line in content.split("\n"):
            line_starts.append(line_starts[-1] + len(line) + 1)
        for s in find_secrets(content):
            at = start + len(json.dumps(content[:line_starts[s.line - 1] + s.column - 1], ensure_ascii=False)) - 1
            found.append(Secret(s.kind, text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)))
    return [Finding(path, s.line, s.column, SECRET, f"{s.describe(with_line=False)}: agents read this note; "
                    "remove the secret from it and revoke the secret", s.line)
            for s in found]


def check_content(
    path: Path,
    text: str,
    general: Sequence[Source],
    settings: Settings,
    indexer: Indexer = index_entries,
    grouped: bool = False,
    real: Path | None = None,
    rules: Rules | None = None,
    analyses: Analyses = FRESH,
) -> list[Finding]:
    """Findings for memory file PATH with TEXT, loaded after the GENERAL sources of its chain.
    REAL: PATH's real path, when the caller knows it.

    INDEXER parses a file's entries; the language server passes a cached one. TEXT over the
    size limit (an open buffer) is not parsed: it gets a too-large finding alone. GROUPED: one
    duplicate finding per repeated entry (the language server), not one per copy (`check`).
    RULES: what the agents that load the file do with it (default: Gemini CLI's). ANALYSES: the
    secrets and near copies found in texts (`EntryCache`: kept for texts seen before).
    """
    if len(text) > settings.max_file_bytes or utf8_size(text) > settings.max_file_bytes:
        return [too_large_finding(path, utf8_size(text), settings.max_file_bytes)]
    rules = rules or GEMINI_RULES
    usable = [s for s in general if s.readable]
    own = indexer(path, text)
    others = [indexer(s.path, s.text) for s in usable]
    findings = check_entries(own, others, grouped, analyses)
    # What the agent gets from this file, in the configured import format (flat has no depth limit).
    expansion = expand_imports(text, path, markers=settings.boundary_markers, import_format=settings.import_format)
    findings = ([f for f in import_findings(path, text, expansion.imports) if f.code in rules.imports]
                + link_outside_findings(path, text, expansion.imports, settings, real)
                + findings)
    extra = hygiene_findings(path, text, settings) + secret_findings(path, text, analyses.secrets)
    if extra:
        findings = sorted(findings + extra, key=lambda f: f.line)
    size, tokens = merged_size([*(s.content for s in usable), expansion.text])
    over = budget_finding(path, size, tokens, settings) if rules.budget else None
    return ([over] if over else []) + findings


def sources_before(sources: Sequence[Source], real: Path) -> list[Source]:
    """The SOURCES (a chain, in load order) before the file whose real path is REAL (all
    of them when that file is not among them)."""
    for i, src in enumerate(sources):
        if src.real_path == real:
            return list(sources[:i])
    return list(sources)


def check_file(path: Path, settings: Settings, chain: Callable[[], Sequence[Source]] | None = None,
               rules: Rules | None = None, indexer: Indexer = index_entries,
               reader: Reader | None = None, analyses: Analyses = FRESH) -> list[Finding]:
    """Check memory file PATH against the more general files of its directory's chain: Gemini's,
    or what CHAIN gives (another agent's), with that agent's RULES. READER reads each file
    (`files.RunReads` for a run of many checks; default: from disk); ANALYSES finds secrets and
    near copies (`check_content`)."""
    read = reader or partial(read_memory_file, max_bytes=settings.max_file_bytes)
    got = read(path)
    if got.status is FileStatus.MISSING:
        raise TargetError(f"{path}: no such file or directory; give an existing memory file or directory")
    if not got.loadable:
        return [unusable_finding(path, got.reason, got.size if got.too_large else 0, settings)]
    bad = [encoding_finding(path, got.encoding)] if got.encoding else []
    if chain is None:
        # Its own directory: where a link is, not where it points (as `memory-lens show FILE`).
        # The sources alone: no merged text needed (as the language server's `Store.check`).
        plan = plan_chain(resolve_target(Path(os.path.abspath(path)).parent), settings,
                          partial(has_marker, markers=settings.boundary_markers))
        sources = load_sources(plan, read, settings.boundary_markers, settings.import_format)[0]
        general = sources_before(sources, got.real_path or Path(os.path.realpath(path)))  # as the sources name it
    else:
        general = list(chain())
    return bad + check_content(path, got.text, general, settings, indexer, real=got.real_path, rules=rules,
                               analyses=analyses)


@dataclass(frozen=True)
class CheckReport:
    """What `check` did: the findings (each once) and every memory file it checked, in order."""

    findings: list[Finding]
    files: list[Path]
    project_root: Path | None = None  # the project `check` without a PATH checked, if any
    agents: tuple[str, ...] = ("gemini",)  # the agents checked


class CheckProgress(Protocol):
    """Told how a tree check goes (`memory-lens check` draws a progress bar from it)."""

    def scanning(self, directory: Path) -> None:
        """The walk of DIRECTORY for memory files starts."""

    def checked(self, done: int, total: int) -> None:
        """DONE of the TOTAL memory files to check have been checked."""
