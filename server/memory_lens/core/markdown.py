"""A small, exact Markdown outline of a memory file: entries, headings, breaks, fences.

An entry is a top-level list item: `-`, `*` or `+` then whitespace at column 0, outside fenced
code, with its indented continuation lines (blank lines count only when an indented line
follows). Headings (ATX `#` and setext `===`) and thematic breaks (`---`, `***`, `___`) are
recognised outside fences so that sections can be found. Lines end at `\\n`, `\\r\\n` or `\\r`.
"""

from __future__ import annotations

import re
import sys
import textwrap
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterator

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_H1 = re.compile(r"^ {0,3}=+[ \t]*$")
_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ENTRY = re.compile(r"^([-*+])[ \t]+")
_MARKER = re.compile(r"^[-*+][ \t]+")
# A marker run ending the text counts as followed by whitespace: `-` alone is an empty list item.
_CLEAN_PREFIX = re.compile(r"^(?:#+|[-*+]+(?:[ \t\r\n]+|\Z))")
TRAILING_PUNCTUATION = ".!;:,\u3002\uff01\uff1b\uff1a\uff0c\uff61"
_STRIP_TAIL = TRAILING_PUNCTUATION + " \t\r\n\f\v"


_FENCE_STARTS = frozenset("`~")
_BREAK_STARTS = frozenset("-*_")
_BREAK_CHARS = " \t-*_"  # a thematic break has no other character
_ENTRY_STARTS = frozenset("-*+")


def _start_char(line: str) -> str:
    """The first character of LINE after at most three spaces ("" after more): only there can
    a fence, break or heading start."""
    if line[:1] != " ":
        return line[:1]
    lead = line.lstrip(" ")
    return lead[:1] if len(line) - len(lead) <= 3 else ""


# What str.splitlines also takes for a line break, and Markdown does not.
_OTHER_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"


def split_lines(text: str) -> list[str]:
    """Split TEXT into lines that keep their endings (only \\n, \\r\\n and \\r end a line)."""
    if not any(c in text for c in _OTHER_BREAKS):  # the common case: str.splitlines agrees, 5x faster
        return text.splitlines(keepends=True)
    return _LINE.findall(text)


STRETCH = 1 << 16  # characters a search or a split of a whole text takes at a time (`stretches`)


def stretches(text: str, start: int = 0) -> Iterator[tuple[int, int]]:
    """TEXT from START cut into (start, end) stretches of whole lines, each about STRETCH characters, for a
    search or a split of a whole text done a stretch at a time. One call over a 10 MB text holds
    the interpreter lock from start to end (0.3-1.7 s): on a worker thread of the language server,
    the event loop could not answer anything meanwhile (docs/reliability.md). A search that
    stops at the end of a stretch finds what it finds in the whole text: no line crosses one."""
    while start < len(text):
        end = text.find("\n", start + STRETCH) + 1 or len(text)
        yield start, end
        start = end


def split_newlines(text: str) -> list[str]:
    """`text.split("\\n")` (`[]` for ""), a stretch at a time (`stretches`)."""
    lines: list[str] = []
    for start, end in stretches(text):
        lines += text[start:end].split("\n")
        if end < len(text):  # the stretch ends with "\n": its last piece starts the next one
            lines.pop()
    return lines


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def detect_eol(text: str) -> str:
    """The line ending the file already uses (its first one), `\\n` for a file with none."""
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m else "\n"


def normalize(text: str) -> str:
    """The matching form of an entry: marker dropped, NFKC, whitespace collapsed, case-folded,
    trailing punctuation (ASCII and full-width) dropped."""
    s = text.strip()
    if s[:1] in _ENTRY_STARTS:
        s = _MARKER.sub("", s, count=1)
    if s.isascii():  # NFKC leaves ASCII as it is, and casefold is lower
        return " ".join(s.split()).lower().rstrip(_STRIP_TAIL)
    s = unicodedata.normalize("NFKC", s)
    s = " ".join(s.split()).casefold()
    return s.rstrip(_STRIP_TAIL)


# Characters a `str.splitlines` reader takes for a line break: saved as spaces, so that no reader
# sees a new line (and perhaps a column-0 heading) inside an entry.
_SAVED_AS_SPACE = str.maketrans({c: " " for c in _OTHER_BREAKS})


def clean_entry_text(text: str) -> str:
    """TEXT as it will be saved: line breaks other than `\\n`, `\\r\\n` and `\\r` (VT, FF, U+001C-U+001E,
    U+0085, U+2028, U+2029) made spaces, stripped, with leading runs of `#` and of list markers
    followed by whitespace (or ending the text) dropped repeatedly. May return an empty string."""
    s = text.replace("\r\n", "\n").replace("\r", "\n").translate(_SAVED_AS_SPACE).strip()
    while True:
        m = _CLEAN_PREFIX.match(s)
        if not m:
            return s
        s = s[m.end():].strip()


_ESCAPED = {**{i: f"\\x{i:02x}" for i in range(0x20) if i != 0x09}, 0x7f: "\\x7f",
            0x85: "\\x85", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def escape_controls(text: str) -> str:
    """TEXT with control characters (but tab) and Unicode line/paragraph separators written as
    escapes (`\\x0b`, `\\u2028`), for printing one line of an entry to a terminal."""
    return text.translate(_ESCAPED)


@dataclass(frozen=True)
class Entry:
    """One top-level list item. Lines are 0-based; `end_line` is its last line (inclusive)."""

    text: str
    line: int
    end_line: int
    marker: str
    column: int = 0  # 0-based character where the text starts on the first line

    @cached_property
    def normalized(self) -> str:
        return normalize(self.text)


@dataclass(frozen=True)
class Heading:
    """An ATX or setext heading outside fenced code (0-based line)."""

    level: int
    title: str
    line: int


@dataclass
class Outline:
    """The parsed structure of one memory file."""

    lines: list[str]
    entries: list[Entry] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    breaks: list[int] = field(default_factory=list)
    open_fence: int | None = None  # the line of a code fence (outside entries) left open at the end

    def section_end(self, start: int, max_level: int = 2) -> int:
        """The first line after START that ends its section (a heading of level <= MAX_LEVEL or a
        thematic break), or the number of lines when the section runs to the end."""
        ends = [h.line for h in self.headings if h.line > start and h.level <= max_level]
        ends += [b for b in self.breaks if b > start]
        return min(ends, default=len(self.lines))

    def entries_between(self, start: int, end: int) -> list[Entry]:
        return [e for e in self.entries if start < e.line < end]

    def entry_at(self, line: int) -> Entry | None:
        """The entry covering 0-based LINE, if any."""
        for e in self.entries:
            if e.line <= line <= e.end_line:
                return e
        return None


def _entry_text(first: str, rest: list[str]) -> str:
    body = textwrap.dedent("\n".join(strip_eol(line).rstrip() for line in rest)) if rest else ""
    head = first.rstrip()
    return head + ("\n" + body if rest else "")


Span = tuple  # (first line, last line, marker, column of the text): one entry, before it is built


def _scan(text: str) -> tuple[list[str], list[Span], list[Heading], list[int], int | None]:
    """The lines of TEXT, the spans of its entries, its headings, thematic breaks, and the line of a
    code fence outside entries that is still open at the end (None when there is none)."""
    lines = split_lines(text)
    spans: list[Span] = []
    headings: list[Heading] = []
    breaks: list[int] = []
    fence: tuple[str, int] | None = None
    fence_in_entry = False
    fence_line = 0
    cur: list | None = None  # [start line, last line, marker, column] of the entry being read
    prev_paragraph = -1  # a plain text line that a setext underline would turn into a heading

    # The common lines (entries, their continuation lines, blank lines) take the short paths;
    # elsewhere each pattern is tried only on lines whose first character (after at most three
    # spaces) can start that construct.
    for i, raw in enumerate(lines):
        first = raw[:1]
        if fence is not None:
            stripped = raw.strip()
            if fence_in_entry and cur is not None:
                if stripped and first != " " and first != "\t":
                    fence = None  # a line at column 0 ends the entry, and its code block with it
                else:
                    if stripped:
                        cur[1] = i  # blank lines count only when more of the block follows
                    if _closes(stripped, fence):
                        fence = None
                    continue
            else:
                # A closing fence is indented by three spaces at most (CommonMark).
                if _closes(stripped, fence) and len(raw) - len(raw.lstrip(" ")) <= 3:
                    fence = None
                continue
        blank = first.isspace() and not raw.strip()  # a line starting with a character is not blank
        if cur is not None:
            if blank:
                continue
            if first == " " or first == "\t":
                cur[1] = i
                lead = raw.lstrip(" \t")
                fm = _FENCE_OPEN.match(lead.rstrip("\r\n")) if lead[:1] in _FENCE_STARTS else None
                if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
                    fence, fence_in_entry = (fm.group(1)[0], len(fm.group(1))), True
                continue
            spans.append(tuple(cur))
            cur = None
        if blank:
            prev_paragraph = -1
            continue
        if first in _ENTRY_STARTS and raw[1:2] in (" ", "\t"):  # an entry, or a break like `- - -`
            third = raw[2:3]
            if third in _BREAK_CHARS and third and _BREAK.match(raw.rstrip("\r\n")):
                breaks.append(i)
            elif third == " " or third == "\t":
                cur = [i, i, first, len(raw) - len(raw[1:].lstrip(" \t"))]
            else:
                cur = [i, i, first, 2]
            prev_paragraph = -1
            continue
        line = raw.rstrip("\r\n")
        start_char = _start_char(line)
        fm = _FENCE_OPEN.match(line) if start_char in _FENCE_STARTS else None
        if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
            fence, fence_in_entry, fence_line = (fm.group(1)[0], len(fm.group(1))), False, i
            prev_paragraph = -1
            continue
        if start_char in _BREAK_STARTS and not line.strip(_BREAK_CHARS) and _BREAK.match(line):
            breaks.append(i)
            prev_paragraph = -1
            continue
        hm = _ATX.match(line) if start_char == "#" else None
        if hm:
            headings.append(Heading(len(hm.group(1)), (hm.group(2) or "").strip(), i))
            prev_paragraph = -1
            continue
        if start_char == "=" and prev_paragraph >= 0 and _SETEXT_H1.match(line):
            headings.append(Heading(1, strip_eol(lines[prev_paragraph]).strip(), prev_paragraph))
            prev_paragraph = -1
            continue
        prev_paragraph = i if prev_paragraph < 0 and line[:4].strip() else prev_paragraph
    if cur is not None:
        spans.append(tuple(cur))
    headings.sort(key=lambda h: h.line)
    return lines, spans, headings, breaks, (fence_line if fence is not None and not fence_in_entry else None)


def _closes(stripped: str, fence: tuple[str, int]) -> bool:
    ch, n = fence
    return bool(stripped) and set(stripped) == {ch} and len(stripped) >= n


def _span_text(lines: list[str], start: int, last: int, col: int) -> str:
    return _entry_text(strip_eol(lines[start])[col:], lines[start + 1:last + 1])


def parse(text: str) -> Outline:
    """Outline TEXT: its entries, headings and thematic breaks, skipping fenced code."""
    lines, spans, headings, breaks, open_fence = _scan(text)
    entries = [Entry(_span_text(lines, start, last, col), start, last, marker, col)
               for start, last, marker, col in spans]
    return Outline(lines=lines, entries=entries, headings=headings, breaks=breaks, open_fence=open_fence)


def entry_keys(text: str) -> tuple[list[str], list[int], list[int]]:
    """The normalised form, first line and last line of each entry of TEXT (three parallel lists):
    the entries `parse` finds, without building them. All the checks need, at a fraction of the cost."""
    lines, spans, _, _, _ = _scan(text)
    keys: list[str] = []
    # Interned: the same entry in many files (what the checks look for) is kept once in memory.
    for start, last, _marker, col in spans:
        if start == last:
            keys.append(sys.intern(normalize(lines[start][col:])))
            continue
        # The entry's lines as they are: the line ends, trailing blanks and indentation that
        # `Entry.text` drops are whitespace, which `normalize` collapses anyway; unless the text
        # starts with a marker, whose removal depends on the whitespace right after it.
        raw = "".join(lines[start:last + 1])[col:]
        if raw.lstrip()[:1] in _ENTRY_STARTS:
            raw = _span_text(lines, start, last, col)
        keys.append(sys.intern(normalize(raw)))
    return keys, [span[0] for span in spans], [span[1] for span in spans]
