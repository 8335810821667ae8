"""`@path` imports expanded exactly as Gemini CLI's `processImports` does (tree format).

The rules, read from `@google/gemini-cli-core` 0.61.0, are pinned in docs/agents.md. `expand_imports`
returns the text the agent gets and the import tree (each mention with its line, target and
status). Nothing here raises for bad input: a failed import becomes Gemini's comment.
"""

from __future__ import annotations

import bisect
import errno
import itertools
import math
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from memory_lens.core.node_paths import (
    ImportFailure,
    inside_root,
    is_url,
    js_resolve,
    js_trim,
    project_root_for,
    read_as_agent,
)

MAX_DEPTH = 5
BOUNDARY_MARKERS = (".git",)
# Not Gemini's: one bound on what imports may cost, for one memory file's imports and for all the
# files of one view together. Every mention counts (imported, a cycle, refused, failed, too deep),
# and so does the text it puts in. A file mentioned many times at every level multiplies: 1,000
# lines of `@a.md` in GEMINI.md and in a.md are 10^6 mentions and 40 MB of comments for Gemini CLI,
# and such a tree of 1 MB can be 10^10 (Gemini CLI would run out of memory). Past the bound, the
# mention it falls on becomes one LIMIT marker and the rest are left as written (`ImportBudget`).
MAX_IMPORT_MENTIONS = 5000  # `@path`s met, those in code included
MAX_IMPORTED_BYTES = 16 * 1024 * 1024  # text put in: imported files and comments, all levels
MAX_FLAT_DEPTH = 100  # `flat` has no depth limit in Gemini; past this a chain is marked LIMIT

_CODE_REGION = re.compile(r"(`+)([\s\S]*?)\1")
_MENTION = re.compile(r"(?<![^ \t\n\r])@([^ \t\n\r]*)")  # at the start or after whitespace
_NEWLINE = re.compile("\n")


IMPORTED = "imported"
NOT_FOUND = "not-found"
OUTSIDE_ROOT = "outside-root"
URL = "url"
CYCLE = "cycle"
DEPTH = "depth"
UNREADABLE = "unreadable"
LIMIT = "limit"
WITHHELD = "withheld"  # a file a reader that is not the user may not be shown (core/read_policy.py)
_WITHHELD_CODE = -1


@dataclass(frozen=True)
class ImportNode:
    """One `@path` mention: where it is, what it names and what became of it."""

    file: Path  # the file the mention is in
    line: int  # 1-based
    target: str  # the path as written after '@'
    status: str  # IMPORTED, NOT_FOUND, OUTSIDE_ROOT, URL, CYCLE, DEPTH, UNREADABLE, LIMIT or WITHHELD
    path: Path | None  # the file it names (resolved against FILE's directory); None for a URL
    children: tuple["ImportNode", ...] = ()
    message: str = ""  # why it failed, as the agent's comment says it
    start: int = field(default=0, compare=False)  # the mention's '@' in FILE's text (characters)
    end: int = field(default=0, compare=False)  # just past the mention
    inserted_bytes: int = field(default=0, compare=False)  # UTF-8 size of the text it pulls in
    inserted_chars: int = field(default=0, compare=False)  # its length in characters

    def to_json(self) -> dict:
        return {
            "file": str(self.file),
            "line": self.line,
            "target": self.target,
            "status": self.status,
            "path": None if self.path is None else str(self.path),
            "message": self.message,
            "children": [c.to_json() for c in self.children],
        }


@dataclass(frozen=True)
class Expansion:
    """A file's text with its imports expanded, and its mentions."""

    text: str
    imports: tuple[ImportNode, ...]


def find_mentions(content: str) -> list[tuple[int, int, str]]:
    """Gemini's `findImports`: (start, end, path) of every `@path` that counts as an import: an
    `@` at the start or after a space, tab, `\\n` or `\\r`, up to the next of those, the path
    starting with `.`, `/` or an ASCII letter."""
    return list(iter_mentions(content))


def iter_mentions(content: str) -> Iterator[tuple[int, int, str]]:
    """`find_mentions` one at a time: the expansion stops reading a file where its bound falls."""
    for m in _MENTION.finditer(content):
        c = m.group(1)[:1]
        if c and (c in "./" or "A" <= c <= "Z" or "a" <= c <= "z"):
            yield m.start(), m.end(), m.group(1)


def code_regions(content: str) -> list[tuple[int, int]]:
    """Gemini's `findCodeRegions`: backtick runs up to the next run of the same length."""
    return [m.span() for m in _CODE_REGION.finditer(content)]


def in_code(start: int, regions: list[tuple[int, int]]) -> bool:
    """Whether offset START lies in one of REGIONS (sorted, not overlapping, as `code_regions` gives)."""
    i = bisect.bisect_right(regions, (start, math.inf)) - 1
    return i >= 0 and start < regions[i][1]


def _line_of(offset: int, newlines: list[int]) -> int:
    """The 1-based line of OFFSET in a text whose newlines are at NEWLINES (`_newlines`)."""
    return bisect.bisect_left(newlines, offset) + 1


def _newlines(content: str) -> list[int]:
    return [m.start() for m in _NEWLINE.finditer(content)]


class ImportBudget:
    """What imports may still cost (`MAX_IMPORT_MENTIONS`, `MAX_IMPORTED_BYTES`): one for a
    memory file's imports, or one shared by all the files of a view (`merge.load_sources`,
    Claude Code's loader). Every mention is taken (`take`) and the text it puts in is spent
    (`spend`); once the bound is passed, the mention it falls on gets its file's one marker
    (`mark`, `limit_message`) and no mention after it is followed. WITHHELD, when given, says why a
    file must not be read (`read_policy`): its mention then fails, unread."""

    def __init__(self, mentions: int | None = None, nbytes: int | None = None,
                 withheld: Callable[[str], str | None] | None = None) -> None:
        self.withheld = withheld
        self.mentions_left = MAX_IMPORT_MENTIONS if mentions is None else mentions
        self.bytes_left = MAX_IMPORTED_BYTES if nbytes is None else nbytes
        self.reached = False  # the bound was passed (it stays so)
        self.marked = False  # the current file has its marker (`expand_imports` clears it)
        self._inside: dict[tuple[str, str, str], bool] = {}

    def inside_root(self, target: str, base: str, root: str) -> bool:
        """`node_paths.inside_root`, each mention looked up once per budget: the same file named
        thousands of times costs one resolution (two `realpath`s) instead of thousands."""
        key = (target, base, root)
        found = self._inside.get(key)
        if found is None:
            found = self._inside[key] = inside_root(target, base, root)
        return found

    def take(self) -> bool:
        """Count one more mention; False once the bound is passed."""
        self.mentions_left -= 1
        self.reached = self.reached or self.mentions_left < 0
        return not self.reached

    def spend(self, nbytes: int) -> None:
        """Count NBYTES of text put in."""
        self.bytes_left -= nbytes
        self.reached = self.reached or self.bytes_left < 0

    def mark(self) -> bool:
        """Whether the current file's marker is still to be placed (it is placed now)."""
        first, self.marked = not self.marked, True
        return first


def limit_message(agent: str = "Gemini CLI") -> str:
    """The marker's text (and the `import-depth` diagnostic's) where the bound is reached."""
    return (f"not imported, nor any mention after it: Memory Lens follows at most {MAX_IMPORT_MENTIONS} "
            f"mentions and {MAX_IMPORTED_BYTES} bytes of imported text for one memory file and for a "
            f"whole view ({agent} has no such bound)")


def expand_imports(content: str, file: str | os.PathLike[str], max_depth: int = MAX_DEPTH,
                   markers: tuple[str, ...] = BOUNDARY_MARKERS, import_format: str = "tree",
                   budget: ImportBudget | None = None) -> Expansion:
    """Expand the imports of memory file FILE whose decoded text is CONTENT (a BOM kept), in
    Gemini's `tree` format (each import in place) or `flat` (see `_expand_flat`), within BUDGET
    (a view's; by default one for this file alone)."""
    if "@" not in content and import_format != "flat":
        return Expansion(content, ())
    path = js_resolve(os.getcwd(), os.fspath(file))
    base = posixpath.dirname(path)
    root = project_root_for(base, markers)
    budget = budget or ImportBudget()
    budget.marked = False
    if import_format == "flat":
        return _expand_flat(content, path, base, root, budget)
    return _expand(content, path, base, root, frozenset(), 0, max_depth, budget)


def _read(full: str, budget: ImportBudget) -> str | None:
    """The text of FULL, spent from BUDGET; None when it does not fit (raises ImportFailure)."""
    if budget.withheld is not None and (why := budget.withheld(full)):
        raise ImportFailure(why, _WITHHELD_CODE)
    try:
        text = read_as_agent(full, max(budget.bytes_left, 0))
    except ImportFailure as err:
        if err.code != errno.EFBIG:
            raise
        budget.spend(budget.bytes_left + 1)
        return None
    budget.spend(len(text))
    return text


def _limit(file: Path, lines: list[int], target: str, start: int, end: int) -> ImportNode:
    return ImportNode(file, _line_of(start, lines), target, LIMIT, None, message=limit_message(),
                      start=start, end=end)


def _expand_flat(content: str, path: str, base: str, root: str, budget: ImportBudget) -> Expansion:
    """Gemini's `flat` format: every file once, in the order `processFlat` first meets it (the
    file itself, then its mentions from the last to the first, each followed by its own), as
    `--- File: PATH ---` blocks of trimmed text joined by a blank line. As in Gemini 0.61.0 the
    first block is named after the file's directory, there is no depth limit (Memory Lens stops
    at MAX_FLAT_DEPTH, as at its bound), and a mention that fails is left out without a comment
    (Memory Lens still reports it in the import tree)."""
    files: list[tuple[str, str]] = []
    seen: set[str] = set()

    def visit(text: str, file_base: str, key: str, file: Path, depth: int) -> tuple[ImportNode, ...]:
        if key in seen:
            return ()
        seen.add(key)
        files.append((key, text))
        regions = code_regions(text)
        lines = _newlines(text)
        nodes: list[ImportNode] = []
        for start, end, target in reversed(find_mentions(text)):
            taken = budget.take()  # a mention in code too, as in `_expand`
            if taken and in_code(start, regions):
                continue
            inner = None
            if taken and depth < MAX_FLAT_DEPTH:
                line = _line_of(start, lines)
                if not budget.inside_root(target, file_base, root):
                    nodes.append(_refused(file, line, target, file_base, start, end))
                    continue
                full = js_resolve(file_base, target)
                if full in seen:
                    continue
                try:
                    inner = _read(full, budget)
                except ImportFailure as err:
                    nodes.append(_failed(file, line, target, full, err, start, end))
                    continue
            if inner is None:
                budget.reached = True
                if budget.mark():
                    nodes.append(_limit(file, lines, target, start, end))
                break
            children = visit(inner, posixpath.dirname(full), full, Path(full), depth + 1)
            nodes.append(ImportNode(file, line, target, IMPORTED, Path(full), children, start=start,
                                    end=end, inserted_bytes=len(inner.encode("utf-8")),
                                    inserted_chars=len(inner)))
        return tuple(reversed(nodes))

    nodes = visit(content, base, base, Path(path), 0)
    text = "\n\n".join(f"--- File: {key} ---\n{js_trim(body)}\n--- End of File: {key} ---" for key, body in files)
    return Expansion(text, nodes)


def _expand(content: str, file: str, base: str, root: str, processed: frozenset[str], depth: int,
            max_depth: int, budget: ImportBudget) -> Expansion:
    """Gemini's `processImports` (tree format) for CONTENT of FILE at DEPTH. A file at MAX_DEPTH
    is left as written, its mentions listed as DEPTH. Each mention is taken from BUDGET; where
    it runs out, the file's LIMIT marker, and the rest of the text as written."""
    mentions = iter_mentions(content)
    first = next(mentions, None)
    if first is None:
        return Expansion(content, ())
    regions = code_regions(content)
    lines = _newlines(content)
    here = Path(file)
    out: list[str] = []
    nodes: list[ImportNode] = []
    last = 0
    for start, end, target in itertools.chain([first], mentions):
        taken = budget.take()  # a mention in code too: it costs a look, and there may be millions
        if taken and in_code(start, regions):
            continue
        out.append(content[last:start])
        last = end
        piece, node = "", None
        if not taken:
            pass
        elif depth >= max_depth:
            piece = "@" + target
            node = ImportNode(here, _line_of(start, lines), target, DEPTH, _target_path(base, target),
                              message=f"not imported: deeper than {max_depth} imports", start=start, end=end)
        else:
            piece, node = _mention(file, here, base, root, processed, depth, max_depth, budget, lines,
                                   start, end, target)
        if node is None:  # past the bound
            if budget.mark():
                out.append(f"<!-- Import failed: {target} - {limit_message()} -->")
                nodes.append(_limit(here, lines, target, start, end))
            else:
                out.append("@" + target)
            break
        out.append(piece)
        nodes.append(node)
    out.append(content[last:])
    return Expansion("".join(out), tuple(nodes))


def _mention(file: str, here: Path, base: str, root: str, processed: frozenset[str], depth: int, max_depth: int,
             budget: ImportBudget, lines: list[int], start: int, end: int,
             target: str) -> tuple[str, ImportNode | None]:
    """What one mention outside code becomes: the text in its place and its node (None when
    the file it imports does not fit in BUDGET)."""
    line = _line_of(start, lines)
    if not budget.inside_root(target, base, root):
        piece = f"<!-- Import failed: {target} - Path traversal attempt -->"
        node = _refused(here, line, target, base, start, end)
    elif (full := js_resolve(base, target)) in processed:
        piece = f"<!-- File already processed: {target} -->"
        node = ImportNode(here, line, target, CYCLE, Path(full), message="already imported along this chain",
                          start=start, end=end)
    else:
        try:
            text = _read(full, budget)
        except ImportFailure as err:
            piece = f"<!-- Import failed: {target} - {err} -->"
            node = _failed(here, line, target, full, err, start, end)
        else:
            if text is None:
                return "", None
            inner = _expand(text, full, posixpath.dirname(full), root, processed | {full}, depth + 1, max_depth,
                            budget)
            piece = f"<!-- Imported from: {target} -->\n{inner.text}\n<!-- End of import from: {target} -->"
            return piece, ImportNode(here, line, target, IMPORTED, Path(full), inner.imports, start=start,
                                     end=end, inserted_bytes=len(inner.text.encode("utf-8")),
                                     inserted_chars=len(inner.text))
    budget.spend(len(piece))
    return piece, node


def _target_path(base: str, target: str) -> Path:
    return Path(js_resolve(base, target))


# Problems: what `check` and the language server report on a memory file's own mentions -------------

IMPORT_NOT_FOUND = "import-not-found"
IMPORT_OUTSIDE_ROOT = "import-outside-root"
IMPORT_CYCLE = "import-cycle"
IMPORT_DEPTH = "import-depth"
IMPORT_CODES = (IMPORT_NOT_FOUND, IMPORT_OUTSIDE_ROOT, IMPORT_CYCLE, IMPORT_DEPTH)
_CODE_OF = {NOT_FOUND: IMPORT_NOT_FOUND, UNREADABLE: IMPORT_NOT_FOUND, OUTSIDE_ROOT: IMPORT_OUTSIDE_ROOT,
            URL: IMPORT_OUTSIDE_ROOT, CYCLE: IMPORT_CYCLE, DEPTH: IMPORT_DEPTH, LIMIT: IMPORT_DEPTH}


@dataclass(frozen=True)
class ImportProblem:
    """A mention of the file itself whose import, or an import nested below it, goes wrong."""

    node: ImportNode  # the file's own mention (where the problem is reported)
    culprit: ImportNode  # the mention that failed: NODE itself or one nested below it
    code: str

    @property
    def message(self) -> str:
        c = self.culprit
        what = {
            NOT_FOUND: f"cannot be imported: {c.message}",
            UNREADABLE: f"cannot be imported: {c.message}",
            OUTSIDE_ROOT: "is outside the project root (Gemini CLI refuses it: Path traversal attempt)",
            URL: "is a URL (Gemini CLI imports files only)",
            CYCLE: "is already imported along this chain (a cycle): Gemini CLI stops there",
            DEPTH: "is more than 5 imports deep: Gemini CLI leaves it as text",
            LIMIT: f"is not expanded: {c.message}",
        }[c.status]
        if c is self.node:
            return f"@{c.target} {what}"
        return f"@{self.node.target}: {c.file}:{c.line} imports @{c.target}, which {what}"


def import_problems(nodes: tuple[ImportNode, ...]) -> list[ImportProblem]:
    """The problems of a file's own mentions NODES: each failed mention, and for a mention that
    imports, each failure nested below it (once per code)."""
    found: list[ImportProblem] = []
    for node in nodes:
        if node.status in _CODE_OF:
            found.append(ImportProblem(node, node, _CODE_OF[node.status]))
            continue
        seen: set[str] = set()
        for culprit in _failures(node.children):
            code = _CODE_OF[culprit.status]
            if code not in seen:
                seen.add(code)
                found.append(ImportProblem(node, culprit, code))
    return found


def _failures(nodes: tuple[ImportNode, ...]):
    for node in nodes:
        if node.status in _CODE_OF:
            yield node
        yield from _failures(node.children)


def read_paths(nodes: tuple[ImportNode, ...]) -> set[Path]:
    """The files whose content or absence decided NODES (a cache of the expansion is stale when
    one of them changes): those imported, and those that could not be read."""
    found: set[Path] = set()
    for node in nodes:
        if node.path is not None and node.status in (IMPORTED, NOT_FOUND, UNREADABLE, LIMIT):
            found.add(node.path)
        found |= read_paths(node.children)
    return found


def mention_at(nodes: tuple[ImportNode, ...], offset: int) -> ImportNode | None:
    """The file's own mention whose span holds character OFFSET (its end included), if any."""
    for node in nodes:
        if node.start <= offset <= node.end:
            return node
    return None


def _refused(file: Path, line: int, target: str, base: str, start: int, end: int) -> ImportNode:
    """The node of a mention Gemini refuses: a URL, or a path that leaves the project root."""
    url = is_url(target)
    return ImportNode(file, line, target, URL if url else OUTSIDE_ROOT,
                      None if url else _target_path(base, target),
                      message="Path traversal attempt", start=start, end=end)


def _failed(file: Path, line: int, target: str, full: str, err: ImportFailure, start: int, end: int) -> ImportNode:
    """The node of a mention whose file could not be imported: missing, over a limit, or unreadable."""
    status = (NOT_FOUND if err.code in (errno.ENOENT, errno.ENOTDIR) else WITHHELD if err.code == _WITHHELD_CODE
              else LIMIT if err.code in (errno.EFBIG, errno.EMLINK) else UNREADABLE)
    return ImportNode(file, line, target, status, Path(full), message=str(err), start=start, end=end)
