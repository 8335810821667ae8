"""Memory files over the size limit: what `show` prints for them, without reading them whole.

A file over `Settings.max_file_bytes` is never read into memory (`files.read_memory_file` reports
it `too_large`), so it is not parsed, checked or edited. Agents still load all of it, so `show`
prints the merged memory with such a file streamed in its place: trimmed as the merge trims
(found by reading only as far in from each end as the whitespace goes), decoded as the agent
decodes (a bad byte reads as U+FFFD), one chunk at a time. `@path` imports inside such a file are
not expanded.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import TextIO

from memory_lens.core.merge import Memory, Source, concatenate
from memory_lens.core.settings import Settings

CHUNK = 1 << 20  # bytes read (and characters written) at a time
EDGE = 1 << 16  # bytes looked at from each end at a time while trimming
# Memory text longer than this (and under the size limit) gets the language server's cheap path:
# no entry-by-entry analysis (duplicates, redundant copies, an entry's hover) and an outline of
# its first LARGE_TEXT_CHARS characters only (docs/lsp.md). Far past any agent's budget already,
# such a file cost seconds of CPU per change of its buffer (10 MB: 3-4 s) and 1.5 GB for symbols.
LARGE_TEXT_CHARS = 1 << 20


def is_large_text(text: str) -> bool:
    """Whether TEXT gets the language server's cheap path (`LARGE_TEXT_CHARS`)."""
    return len(text) > LARGE_TEXT_CHARS


def is_too_large(src: Source, settings: Settings) -> bool:
    """Whether SRC was left unread because it is over the size limit."""
    return not src.readable and src.bytes > settings.max_file_bytes


def has_too_large(memory: Memory, settings: Settings) -> bool:
    return any(is_too_large(s, settings) for s in memory.sources)


def _trim(text: str) -> str:
    return concatenate([text])  # the merge's own trimming rule


def _lead(text: str) -> int:
    """How many characters the merge trims from the start of TEXT."""
    return len(text) + 1 - len(_trim(text + "x"))


def _tail(text: str) -> int:
    """How many characters the merge trims from the end of TEXT."""
    return len(text) + 1 - len(_trim("x" + text))


def trimmed_span(fd: int, size: int) -> tuple[int, int]:
    """The byte range [start, end) of the open file FD (SIZE bytes) left once trimmed."""
    start = 0
    while start < size:
        chunk = os.pread(fd, EDGE + 3, start)  # + 3: at least one whole character, however small EDGE
        if not chunk:
            return size, size
        # A character split at the chunk's end is held back, and read again with the next chunk.
        text = codecs.getincrementaldecoder("utf-8")("replace").decode(chunk, final=start + len(chunk) >= size)
        lead = _lead(text)
        if not text or lead < len(text):
            start += len(text[:lead].encode("utf-8"))  # whitespace: whole characters, valid UTF-8
            break
        start += len(text.encode("utf-8"))
    end = size
    while end > start:
        block_start = max(start, end - EDGE - 3)
        block = os.pread(fd, end - block_start, block_start)
        skip = 0
        while skip < min(3, len(block) - 1) and 0x80 <= block[skip] <= 0xBF and block_start > start:
            skip += 1  # do not start decoding in the middle of a character
        text = block[skip:].decode("utf-8", "replace")
        tail = _tail(text)
        end -= len(text[len(text) - tail:].encode("utf-8")) if tail else 0
        if tail < len(text) or block_start <= start:
            break
        end = block_start + skip  # all whitespace: the bytes skipped belong to the block before
    return start, max(start, end)


def _copy(fd: int, start: int, end: int, out: TextIO) -> None:
    """Write bytes [START, END) of FD to OUT, decoded as the agent decodes, a chunk at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pos = start
    while pos < end:
        chunk = os.pread(fd, min(CHUNK, end - pos), pos)
        if not chunk:
            break
        pos += len(chunk)
        out.write(decoder.decode(chunk, final=pos >= end))
    out.write(decoder.decode(b"", final=True))


def _open_span(path: Path) -> tuple[int, int, int] | None:
    """PATH opened, with its trimmed byte range; None when it cannot be read or is empty once trimmed."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        start, end = trimmed_span(fd, os.fstat(fd).st_size)
    except OSError:
        os.close(fd)
        return None
    if start >= end:
        os.close(fd)
        return None
    return fd, start, end


def write_effective(memory: Memory, settings: Settings, out: TextIO, annotated: bool = False) -> None:
    """Write what `show` prints (the merged text, or the annotated blocks) with every file over the
    size limit streamed in its place; then a final newline, unless nothing was written."""
    wrote = False
    for src in memory.sources:
        opened = _open_span(src.path) if is_too_large(src, settings) else None
        if opened is None and not (src.readable and src.content):
            continue
        if wrote:
            out.write("\n\n")
        if annotated:
            out.write(f"--- Context from: {src.path} ---\n")
        if opened is None:
            out.write(src.content)
        else:
            fd, start, end = opened
            try:
                _copy(fd, start, end, out)
            finally:
                os.close(fd)
        if annotated:
            out.write(f"\n--- End of Context from: {src.path} ---")
        wrote = True
    if wrote:
        out.write("\n")


def show_warnings(memory: Memory, settings: Settings) -> list[str]:
    """`memory.warnings` for `show`: a file over the limit is shown, so it is not called skipped."""
    large = {s.path for s in memory.sources if is_too_large(s, settings)}
    out = [w for w in memory.warnings if not any(w.startswith(f"{p}: ") for p in large)]
    out += [f"{s.path}: {s.bytes} bytes, over the {settings.max_file_bytes}-byte limit: shown as it is, "
            "but not checked (its @imports are not expanded)" for s in memory.sources if is_too_large(s, settings)]
    return out
