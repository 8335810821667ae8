"""A small, exact Markdown outline of a memory file: entries, headings, breaks, fences.

An entry is a top-level list item: `-`, `*` or `+` then whitespace at column 0, outside fenced
code, with its indented continuation lines (blank lines count only when an indented line
follows). Headings (ATX `#` and setext `===`) and thematic breaks (`---`, `***`, `___`) are
recognised outside fences so that sections can be found. Lines end at `\\n`, `\\r\\n` or `\\r`.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property

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


def split_lines(text: str) -> list[str]:
    """Split TEXT into lines that keep their endings (only \\n, \\r\\n and \\r end a line)."""
    return _LINE.findall(text)


def strip_eol(line: str) -> str:
    return line.rstrip("\r\n")


def detect_eol(text: str) -> str:
    """The line ending the file already uses (its first one), `\\n` for a file with none."""
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m else "\n"


def normalize(text: str) -> str:
    """The matching form of an entry: marker dropped, NFKC, whitespace collapsed, case-folded,
    trailing punctuation (ASCII and full-width) dropped."""
    s = _MARKER.sub("", text.strip(), count=1)
    s = unicodedata.normalize("NFKC", s)
    s = " ".join(s.split()).casefold()
    return s.rstrip(_STRIP_TAIL)


def clean_entry_text(text: str) -> str:
    """TEXT as it will be saved: stripped, with leading runs of `#` and of list markers
    followed by whitespace (or ending the text) dropped repeatedly. May return an empty string."""
    s = text.replace("\r\n", "\n").replace("\r", "\n").strip()
    while True:
        m = _CLEAN_PREFIX.match(s)
        if not m:
            return s
        s = s[m.end():].strip()


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


def parse(text: str) -> Outline:
    """Outline TEXT: its entries, headings and thematic breaks, skipping fenced code."""
    lines = split_lines(text)
    out = Outline(lines=lines)
    fence: tuple[str, int] | None = None
    fence_in_entry = False
    cur: list[int] | None = None  # [start line, last line] of the entry being read
    cur_marker = ""
    prev_paragraph = -1  # a plain text line that a setext underline would turn into a heading

    def finish() -> None:
        nonlocal cur
        if cur is None:
            return
        start, last = cur
        first = strip_eol(lines[start])
        m = _ENTRY.match(first)
        col = m.end() if m else 2
        out.entries.append(Entry(_entry_text(first[col:], lines[start + 1:last + 1]),
                                 start, last, cur_marker, col))
        cur = None

    for i, raw in enumerate(lines):
        line = strip_eol(raw)
        if fence is not None:
            if cur is not None and fence_in_entry:
                cur[1] = i
            stripped = line.strip()
            ch, n = fence
            if stripped and set(stripped) == {ch} and len(stripped) >= n:
                fence = None
            continue
        blank = not line.strip()
        if cur is not None:
            if blank:
                continue
            if line[:1] in (" ", "\t"):
                cur[1] = i
                fm = _FENCE_OPEN.match(line.lstrip(" \t"))
                if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
                    fence, fence_in_entry = (fm.group(1)[0], len(fm.group(1))), True
                continue
            finish()
        if blank:
            prev_paragraph = -1
            continue
        fm = _FENCE_OPEN.match(line)
        if fm and not (fm.group(1)[0] == "`" and "`" in fm.group(2)):
            fence, fence_in_entry = (fm.group(1)[0], len(fm.group(1))), False
            prev_paragraph = -1
            continue
        if _BREAK.match(line):
            out.breaks.append(i)
            prev_paragraph = -1
            continue
        hm = _ATX.match(line)
        if hm:
            out.headings.append(Heading(len(hm.group(1)), (hm.group(2) or "").strip(), i))
            prev_paragraph = -1
            continue
        if _SETEXT_H1.match(line) and prev_paragraph >= 0:
            out.headings.append(Heading(1, strip_eol(lines[prev_paragraph]).strip(), prev_paragraph))
            prev_paragraph = -1
            continue
        em = _ENTRY.match(line)
        if em:
            cur, cur_marker = [i, i], em.group(1)
            prev_paragraph = -1
            continue
        prev_paragraph = i if prev_paragraph < 0 and line[:4].strip() else prev_paragraph
    finish()
    out.headings.sort(key=lambda h: h.line)
    return out
