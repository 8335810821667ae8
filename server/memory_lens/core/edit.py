"""Computing edits to a memory file's text: where a new entry goes, what removing one leaves.

These are pure functions over strings. Existing content is kept byte for byte; new lines use
the file's own line ending. `memory-lens add`, the language server's code actions and its
`memoryLens.server.save` command all call `plan_add`, so they always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_lens.core.markdown import (
    Entry,
    Outline,
    clean_entry_text,
    detect_eol,
    normalize,
    parse,
    strip_eol,
)

SECTION_HEADER = "## Gemini Added Memories"
SECTION_TITLE = "Gemini Added Memories"


class EntryTextError(ValueError):
    """The text cannot be saved as an entry (the message says why and what to do)."""


class EmptyEntryError(EntryTextError):
    """The text to save is empty once cleaned."""


class UnsafeEntryError(EntryTextError):
    """Saved as is, the text would not read back as exactly one entry (e.g. an unclosed fence)."""


@dataclass(frozen=True)
class Insertion:
    """Text inserted at a character offset of the old content (also given as 0-based line/column)."""

    offset: int
    text: str
    line: int
    column: int


@dataclass(frozen=True)
class AddPlan:
    """What adding TEXT to a file does: the new content, or the entry already there."""

    text: str
    content: str
    insertion: Insertion | None
    entry_line: int  # 0-based line of the new (or existing) entry in the resulting content
    existing: Entry | None = None

    @property
    def already_present(self) -> bool:
        return self.existing is not None


@dataclass(frozen=True)
class RemovePlan:
    """What removing one entry does: the new content and the removed character span."""

    entry: Entry
    content: str
    start: int
    end: int


def find_section_header(outline: Outline) -> int | None:
    """0-based line of the first `## Gemini Added Memories` heading outside fenced code."""
    for h in outline.headings:
        if h.level == 2 and h.title == SECTION_TITLE:
            return h.line
    return None


def find_entry(outline: Outline, text: str) -> Entry | None:
    """The first entry whose normalised form matches TEXT's (after cleaning TEXT)."""
    wanted = normalize(clean_entry_text(text))
    for e in outline.entries:
        if e.normalized == wanted:
            return e
    return None


def format_entry(text: str, eol: str) -> str:
    """The lines of one entry: `- first line`, continuation lines indented two spaces."""
    first, *rest = text.split("\n")
    lines = ["- " + first] + [("  " + line) if line.strip() else "" for line in rest]
    return eol.join(lines) + eol


def _line_start_offsets(lines: list[str]) -> list[int]:
    offsets, pos = [], 0
    for line in lines:
        offsets.append(pos)
        pos += len(line)
    offsets.append(pos)
    return offsets


def plan_add(content: str, text: str) -> AddPlan:
    """Plan adding TEXT as an entry of CONTENT under the `## Gemini Added Memories` section.

    Raises EmptyEntryError when TEXT is empty once cleaned.
    """
    cleaned = clean_entry_text(text)
    if not cleaned:
        raise EmptyEntryError("nothing to save: the text is empty once '#' and list markers are removed")
    outline = parse(content)
    wanted = normalize(cleaned)
    for e in outline.entries:
        if e.normalized == wanted:
            return AddPlan(cleaned, content, None, e.line, existing=e)
    eol = detect_eol(content)
    block = format_entry(cleaned, eol)
    _require_self_contained(block)
    lines = outline.lines
    offsets = _line_start_offsets(lines)
    header = find_section_header(outline)
    if header is None:
        if content == "":
            return _insert(cleaned, content, 0, SECTION_HEADER + eol + block, 1, 0, 0)
        prefix = ""
        if not content.endswith(("\n", "\r")):
            prefix += eol
        if strip_eol(lines[-1]).strip():
            prefix += eol
        entry_line = len(lines) + (1 if strip_eol(lines[-1]).strip() else 0) + 1
        col = len(strip_eol(lines[-1])) if not content.endswith(("\n", "\r")) else 0
        at_line = len(lines) - 1 if col else len(lines)
        return _insert(cleaned, content, len(content), prefix + SECTION_HEADER + eol + block, entry_line, at_line, col)
    end = outline.section_end(header)
    in_section = outline.entries_between(header, end)
    after = in_section[-1].end_line if in_section else header
    line_text = lines[after]
    if line_text.endswith(("\n", "\r")):
        return _insert(cleaned, content, offsets[after + 1], block, after + 1, after + 1, 0)
    # The anchor is the last line and has no line ending: end it first.
    return _insert(cleaned, content, len(content), eol + block, after + 1, after, len(line_text))


def _require_self_contained(block: str) -> None:
    """BLOCK (one formatted entry) must end every construct it opens: a line written after it has
    to parse on its own (an unclosed code fence would swallow everything that follows)."""
    probe = parse(block + "- probe\n")
    last = probe.entries[-1] if probe.entries else None
    if last is None or last.line != len(probe.lines) - 1 or last.text != "probe":
        raise UnsafeEntryError(
            "the text would swallow what follows it (an unclosed ``` or ~~~ code fence?); close it and try again")


def _insert(cleaned: str, content: str, offset: int, text: str, entry_line: int, line: int,
            column: int) -> AddPlan:
    new = content[:offset] + text + content[offset:]
    # The new entry must read back as exactly the lines written: an unclosed code fence in TEXT
    # would otherwise swallow the rest of the file into it.
    entry = parse(new).entry_at(entry_line)
    if entry is None or entry.line != entry_line or entry.end_line != entry_line + cleaned.count("\n"):
        raise UnsafeEntryError(
            "the text would not stay one entry (an unclosed ``` or ~~~ code fence?); close the fence and try again")
    return AddPlan(
        text=cleaned,
        content=new,
        insertion=Insertion(offset, text, line, column),
        entry_line=entry_line,
    )


def plan_remove(content: str, entry: Entry) -> RemovePlan:
    """Plan removing ENTRY (found by `parse(content)`) with all its lines.

    Removing an entry never leaves a doubled blank line behind: when a blank line stands on both
    sides of it (or on one side, with the start or the end of the file on the other), one of them
    goes too. Every other byte is kept.
    """
    lines = parse(content).lines
    offsets = _line_start_offsets(lines)
    first, last = entry.line, entry.end_line

    def blank(i: int) -> bool:
        return 0 <= i < len(lines) and not lines[i].strip()

    start, end = offsets[first], offsets[last + 1]
    if blank(last + 1) and (first == 0 or blank(first - 1)):
        end = offsets[last + 2]
    elif blank(first - 1) and last + 1 >= len(lines):
        start = offsets[first - 1]
    return RemovePlan(entry, content[:start] + content[end:], start, end)
