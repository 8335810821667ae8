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
    """Saved as is, the text would not read back as exactly one entry (e.g. an unclosed fence).
    `line` (1-based), when set, is the line of the memory file that is to blame."""

    def __init__(self, message: str, line: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.line = line
        self.reason = reason or message

    def at(self, path: object) -> UnsafeEntryError:
        """The same error naming the file: `PATH:LINE: reason` when a line of it is to blame."""
        if self.line is None:
            return self
        return UnsafeEntryError(f"{path}:{self.line}: {self.reason}", self.line, self.reason)


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


def entry_text_to_save(text: str) -> str:
    """TEXT as an entry is saved (see `clean_entry_text`), refused when it cannot be one.

    Raises EmptyEntryError when TEXT is empty once cleaned, UnsafeEntryError when it holds a NUL
    character (agents skip a memory file with a NUL byte in it as binary).
    """
    if "\0" in text:
        raise UnsafeEntryError("the text contains a NUL character (\\0), which would make agents skip the "
                               "whole memory file as binary; remove it and try again")
    cleaned = clean_entry_text(text)
    if not cleaned:
        raise EmptyEntryError("nothing to save: the text is empty once '#' and list markers are removed")
    return cleaned


def plan_add(content: str, text: str) -> AddPlan:
    """Plan adding TEXT as an entry of CONTENT under the `## Gemini Added Memories` section.

    Raises EmptyEntryError when TEXT is empty once cleaned, UnsafeEntryError when it holds a NUL
    character (agents skip a memory file with a NUL byte in it as binary).
    """
    cleaned = entry_text_to_save(text)
    outline = parse(content)
    wanted = normalize(cleaned)
    for e in outline.entries:
        if e.normalized == wanted:
            return AddPlan(cleaned, content, None, e.line, existing=e)
    eol = detect_eol(content)
    block = format_entry(cleaned, eol)
    _require_self_contained(block)
    header = find_section_header(outline)
    tried = 0
    for offset, inserted, entry_line, line, column in _places(outline, content, block, eol, header):
        plan = _insert(cleaned, content, offset, inserted, entry_line, line, column)
        if plan is not None:
            return plan
        tried += 1
        if tried >= MAX_PLACES_TRIED:
            break
    cause = _blocking_line(outline, header)
    why = ("opens a code fence that is never closed, so a new entry would land inside it; close the fence"
           if cause == outline.open_fence else
           "is indented, so a new entry would swallow it; unindent it or move it out of the section")
    raise UnsafeEntryError(f"line {cause + 1} of the memory file {why}, then try again", line=cause + 1,
                           reason=f"this line {why}, then try again")


MAX_PLACES_TRIED = 16  # each try parses the whole file once


def _places(outline: Outline, content: str, block: str, eol: str, header: int | None):
    """Where the entry BLOCK may go, best first, as `_insert` arguments without the first two:
    (offset, inserted text, entry line, line, column). Inside the section: after its last entry
    (or right after the header), else at the section's end, else before a code fence left open at
    the end of the file, else before a line at column 0 of the section. Without a section: a new
    one at the end of the file, else right before such an open code fence."""
    lines = outline.lines
    offsets = _line_start_offsets(lines)

    def before(i: int, lead: str = "", tail: str = "") -> tuple[int, str, int, int, int]:
        """LEAD + BLOCK + TAIL inserted before line I (at the end when I is the number of lines)."""
        if i < len(lines) or content == "" or content.endswith(("\n", "\r")):
            return offsets[i], lead + block + tail, i + lead.count(eol), i, 0
        # The last line has no line ending: end it first.
        return len(content), eol + lead + block + tail, i + lead.count(eol), i - 1, len(lines[-1])

    def new_section(i: int) -> tuple[int, str, int, int, int]:
        gap = eol if i > 0 and strip_eol(lines[i - 1]).strip() else ""
        return before(i, gap + SECTION_HEADER + eol, eol if i < len(lines) else "")

    if header is None:
        yield new_section(len(lines))
        if outline.open_fence is not None:
            yield new_section(outline.open_fence)
        return
    end = outline.section_end(header)
    in_section = outline.entries_between(header, end)
    after = in_section[-1].end_line if in_section else header
    yield before(after + 1)
    yield before(end)
    if outline.open_fence is not None and after < outline.open_fence < end:
        yield before(outline.open_fence)
    for i in range(after + 2, end):
        if lines[i][:1] not in (" ", "\t") and lines[i].strip():
            yield before(i)


def _blocking_line(outline: Outline, header: int | None) -> int:
    """The 0-based line to blame when no place keeps a new entry whole: an open code fence, else
    the first indented line after the section's entries."""
    if outline.open_fence is not None:
        return outline.open_fence
    start = header if header is not None else 0
    for i in range(start + 1, len(outline.lines)):
        if outline.lines[i][:1] in (" ", "\t") and outline.lines[i].strip():
            return i
    return start


def _require_self_contained(block: str) -> None:
    """BLOCK (one formatted entry) must end every construct it opens: a line written after it has
    to parse on its own (an unclosed code fence would swallow everything that follows)."""
    probe = parse(block + "- probe\n")
    last = probe.entries[-1] if probe.entries else None
    if last is None or last.line != len(probe.lines) - 1 or last.text != "probe":
        raise UnsafeEntryError(
            "the text would swallow what follows it (an unclosed ``` or ~~~ code fence?); close it and try again")


def _insert(cleaned: str, content: str, offset: int, text: str, entry_line: int, line: int,
            column: int) -> AddPlan | None:
    """The plan inserting TEXT at OFFSET, or None when the new entry would not read back as
    exactly the lines written (the file around it would swallow it or run into it)."""
    new = content[:offset] + text + content[offset:]
    outline = parse(new)
    entry = outline.entry_at(entry_line)
    if entry is None or entry.line != entry_line or entry.end_line != entry_line + cleaned.count("\n"):
        return None
    if normalize(entry.text) != normalize(cleaned) or find_section_header(outline) is None:
        return None
    return AddPlan(
        text=cleaned,
        content=new,
        insertion=Insertion(offset, text, line, column),
        entry_line=entry_line,
    )


def _section_left_bare(outline: Outline, entry: Entry) -> int | None:
    """The line of the `## Gemini Added Memories` heading whose section holds ENTRY and nothing
    else but blank lines, or None. Removing that entry removes the heading too: an empty heading
    would still be loaded by agents as memory. Only when it is the file's one such heading: `add`
    writes a heading only into a file without one, so a second one is the user's."""
    if sum(h.level == 2 and h.title == SECTION_TITLE for h in outline.headings) > 1:
        return None
    for h in reversed(outline.headings):
        if h.line >= entry.line or h.level != 2:
            continue
        if strip_eol(outline.lines[h.line]).rstrip() != SECTION_HEADER or outline.section_end(h.line) <= entry.line:
            return None
        end = outline.section_end(h.line)
        rest = [*range(h.line + 1, entry.line), *range(entry.end_line + 1, end)]
        return None if any(outline.lines[i].strip() for i in rest) else h.line
    return None


def plan_remove(content: str, entry: Entry) -> RemovePlan:
    """Plan removing ENTRY (found by `parse(content)`) with all its lines.

    Removing an entry never leaves a doubled blank line behind: when a blank line stands on both
    sides of it (or on one side, with the start or the end of the file on the other), one of them
    goes too. Removing the last entry of a `## Gemini Added Memories` section that holds nothing
    else removes its heading too (the lines `add` wrote). Every other byte is kept.
    """
    outline = parse(content)
    lines = outline.lines
    offsets = _line_start_offsets(lines)
    first, last = entry.line, entry.end_line
    header = _section_left_bare(outline, entry)
    if header is not None:
        first = header

    def blank(i: int) -> bool:
        return 0 <= i < len(lines) and not lines[i].strip()

    start, end = offsets[first], offsets[last + 1]
    if blank(last + 1) and (first == 0 or blank(first - 1)):
        end = offsets[last + 2]
    elif blank(first - 1) and last + 1 >= len(lines):
        start = offsets[first - 1]
    return RemovePlan(entry, content[:start] + content[end:], start, end)
