"""`@path` imports expanded exactly as Gemini CLI's `processImports` does (tree format).

The rules, read from `@google/gemini-cli-core` 0.61.0, are pinned in docs/agents.md. `expand_imports`
returns the text the agent gets and the import tree (each mention with its line, target and
status). Nothing here raises for bad input: a failed import becomes Gemini's comment.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

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
# Not Gemini's: a bound on the work one file's imports may cause. The same file imported from
# many mentions at every level multiplies (Gemini CLI would expand it all, or run out of memory);
# past either bound a mention becomes a LIMIT failure instead.
MAX_IMPORTED_BYTES = 16 * 1024 * 1024  # bytes read for one top-level file's imports, all levels
MAX_IMPORT_READS = 5000  # files read for one top-level file's imports

_CODE_REGION = re.compile(r"(`+)([\s\S]*?)\1")
_MENTION_END = " \t\n\r"


IMPORTED = "imported"
NOT_FOUND = "not-found"
OUTSIDE_ROOT = "outside-root"
URL = "url"
CYCLE = "cycle"
DEPTH = "depth"
UNREADABLE = "unreadable"
LIMIT = "limit"


@dataclass(frozen=True)
class ImportNode:
    """One `@path` mention: where it is, what it names and what became of it."""

    file: Path  # the file the mention is in
    line: int  # 1-based
    target: str  # the path as written after '@'
    status: str  # IMPORTED, NOT_FOUND, OUTSIDE_ROOT, URL, CYCLE, DEPTH, UNREADABLE or LIMIT
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
    """Gemini's `findImports`: (start, end, path) of every `@path` that counts as an import."""
    found = []
    i, n = 0, len(content)
    while i < n:
        i = content.find("@", i)
        if i < 0:
            break
        if i > 0 and content[i - 1] not in _MENTION_END:
            i += 1
            continue
        j = i + 1
        while j < n and content[j] not in _MENTION_END:
            j += 1
        target = content[i + 1:j]
        if target and (target[0] in "./" or ("A" <= target[0] <= "Z") or ("a" <= target[0] <= "z")):
            found.append((i, j, target))
        i = j + 1
    return found


def code_regions(content: str) -> list[tuple[int, int]]:
    """Gemini's `findCodeRegions`: backtick runs up to the next run of the same length."""
    return [m.span() for m in _CODE_REGION.finditer(content)]


def in_code(start: int, regions: list[tuple[int, int]]) -> bool:
    return any(s <= start < e for s, e in regions)


def _line_of(content: str, offset: int, lines: list[int]) -> int:
    if not lines:
        lines.extend(i for i, c in enumerate(content) if c == "\n")
    lo, hi = 0, len(lines)
    while lo < hi:
        mid = (lo + hi) // 2
        if lines[mid] < offset:
            lo = mid + 1
        else:
            hi = mid
    return lo + 1


def expand_imports(content: str, file: str | os.PathLike[str], max_depth: int = MAX_DEPTH,
                   markers: tuple[str, ...] = BOUNDARY_MARKERS, import_format: str = "tree") -> Expansion:
    """Expand the imports of memory file FILE whose decoded text is CONTENT (a BOM kept), in
    Gemini's `tree` format (each import in place) or `flat` (see `_expand_flat`)."""
    if "@" not in content and import_format != "flat":
        return Expansion(content, ())
    path = js_resolve(os.getcwd(), os.fspath(file))
    base = posixpath.dirname(path)
    root = project_root_for(base, markers)
    budget = _Budget(MAX_IMPORTED_BYTES, MAX_IMPORT_READS)
    if import_format == "flat":
        return _expand_flat(content, path, base, root, budget)
    return _expand(content, path, base, root, frozenset(), 0, max_depth, budget)


def _expand_flat(content: str, path: str, base: str, root: str, budget: _Budget) -> Expansion:
    """Gemini's `flat` format: every file once, in the order `processFlat` first meets it (the
    file itself, then its mentions from the last to the first, each followed by its own), as
    `--- File: PATH ---` blocks of trimmed text joined by a blank line. As in Gemini 0.61.0 the
    first block is named after the file's directory, there is no depth limit, and a mention that
    fails is left out without a comment (Memory Lens still reports it in the import tree)."""
    files: list[tuple[str, str]] = []
    seen: set[str] = set()

    def visit(text: str, file_base: str, key: str, file: str) -> tuple[ImportNode, ...]:
        if key in seen:
            return ()
        seen.add(key)
        files.append((key, text))
        regions = code_regions(text)
        lines: list[int] = []
        nodes: list[ImportNode] = []
        for start, end, target in reversed(find_mentions(text)):
            if in_code(start, regions):
                continue
            line = _line_of(text, start, lines)
            if not inside_root(target, file_base, root):
                nodes.append(_refused(file, line, target, file_base, start, end))
                continue
            full = js_resolve(file_base, target)
            if full in seen:
                continue
            try:
                if budget.reads_left <= 0:
                    raise ImportFailure(f"{full}: not imported: more than {MAX_IMPORT_READS} files read "
                                        "(Memory Lens's limit)", errno.EMLINK)
                budget.reads_left -= 1
                inner = read_as_agent(full, budget.bytes_left)
                budget.bytes_left -= len(inner)
            except ImportFailure as err:
                nodes.append(_failed(file, line, target, full, err, start, end))
                continue
            children = visit(inner, posixpath.dirname(full), full, full)
            nodes.append(ImportNode(Path(file), line, target, IMPORTED, Path(full), children, start=start,
                                    end=end, inserted_bytes=len(inner.encode("utf-8")),
                                    inserted_chars=len(inner)))
        return tuple(reversed(nodes))

    nodes = visit(content, base, base, path)
    text = "\n\n".join(f"--- File: {key} ---\n{js_trim(body)}\n--- End of File: {key} ---" for key, body in files)
    return Expansion(text, nodes)


@dataclass
class _Budget:
    """What one top-level file's imports may still read (see MAX_IMPORTED_BYTES)."""

    bytes_left: int
    reads_left: int


def _expand(content: str, file: str, base: str, root: str, processed: frozenset[str], depth: int,
            max_depth: int, budget: _Budget) -> Expansion:
    mentions = find_mentions(content)
    if not mentions:
        return Expansion(content, ())
    if depth >= max_depth:
        regions = code_regions(content)
        lines: list[int] = []
        nodes = tuple(ImportNode(Path(file), _line_of(content, s, lines), t, DEPTH, _target_path(base, t),
                                 message=f"not imported: deeper than {max_depth} imports", start=s, end=e)
                      for s, e, t in mentions if not in_code(s, regions))
        return Expansion(content, nodes)
    regions = code_regions(content)
    lines = []
    out: list[str] = []
    nodes: list[ImportNode] = []
    last = 0
    for start, end, target in mentions:
        out.append(content[last:start])
        last = end
        if in_code(start, regions):
            out.append("@" + target)
            continue
        line = _line_of(content, start, lines)
        if not inside_root(target, base, root):
            out.append(f"<!-- Import failed: {target} - Path traversal attempt -->")
            nodes.append(_refused(file, line, target, base, start, end))
            continue
        full = js_resolve(base, target)
        if full in processed:
            out.append(f"<!-- File already processed: {target} -->")
            nodes.append(ImportNode(Path(file), line, target, CYCLE, Path(full),
                                    message="already imported along this chain", start=start, end=end))
            continue
        try:
            if budget.reads_left <= 0:
                raise ImportFailure(f"{full}: not imported: the imports of this memory file read more than "
                                    f"{MAX_IMPORT_READS} files (Memory Lens's limit)", errno.EMLINK)
            budget.reads_left -= 1
            text = read_as_agent(full, budget.bytes_left)
            budget.bytes_left -= len(text)
        except ImportFailure as err:
            if err.code == errno.EFBIG:
                err = ImportFailure(f"{full}: not imported: the imports of this memory file would pull in more "
                                    f"than {MAX_IMPORTED_BYTES} bytes (Memory Lens's limit)", errno.EFBIG)
            out.append(f"<!-- Import failed: {target} - {err} -->")
            nodes.append(_failed(file, line, target, full, err, start, end))
            continue
        inner = _expand(text, full, posixpath.dirname(full), root, processed | {full}, depth + 1, max_depth,
                        budget)
        out.append(f"<!-- Imported from: {target} -->\n{inner.text}\n<!-- End of import from: {target} -->")
        nodes.append(ImportNode(Path(file), line, target, IMPORTED, Path(full), inner.imports,
                                start=start, end=end, inserted_bytes=len(inner.text.encode("utf-8")),
                                inserted_chars=len(inner.text)))
    out.append(content[last:])
    return Expansion("".join(out), tuple(nodes))


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


def _refused(file: str, line: int, target: str, base: str, start: int, end: int) -> ImportNode:
    """The node of a mention Gemini refuses: a URL, or a path that leaves the project root."""
    url = is_url(target)
    return ImportNode(Path(file), line, target, URL if url else OUTSIDE_ROOT,
                      None if url else _target_path(base, target),
                      message="Path traversal attempt", start=start, end=end)


def _failed(file: str, line: int, target: str, full: str, err: ImportFailure, start: int, end: int) -> ImportNode:
    """The node of a mention whose file could not be imported: missing, over a limit, or unreadable."""
    status = (NOT_FOUND if err.code in (errno.ENOENT, errno.ENOTDIR)
              else LIMIT if err.code in (errno.EFBIG, errno.EMLINK) else UNREADABLE)
    return ImportNode(Path(file), line, target, status, Path(full), message=str(err), start=start, end=end)
