"""The progress bar `memory-lens check` draws on stderr while it walks and checks a tree, and
`notes restore` and `notes import` while they write notes.

Drawn only when stderr is a terminal: piped or redirected, nothing is written (scripts and logs
see the same output as before). The bar redraws one line in place (`\\r`) at most every
`MIN_INTERVAL` seconds, always for the last file, and the line is erased when the check ends,
so the summary that follows stands alone. A warning logged meanwhile (a directory the walk cannot
read) first erases the bar's line, so it is printed on a line of its own.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path
from typing import TextIO

BAR_WIDTH = 24
MIN_INTERVAL = 0.1  # seconds between redraws
ERASE = "\r\x1b[K"


class TerminalProgress:
    """A `core.checks.CheckProgress` that draws on STREAM (a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.drawn = False
        self._last = 0.0
        self._filter = _EraseBeforeLogging(self)
        self._handlers = [h for h in (logging.lastResort, *logging.getLogger().handlers) if h is not None]
        for handler in self._handlers:
            handler.addFilter(self._filter)

    def scanning(self, directory: Path) -> None:
        self._draw(f"scanning {directory} for memory files…")

    def checked(self, done: int, total: int) -> None:
        self.advance(done, total, "checked {done} of {total} memory files")

    def advance(self, done: int, total: int, label: str) -> None:
        """DONE of TOTAL: LABEL (with `{done}` and `{total}` in it) beside the bar."""
        if done < total and time.monotonic() - self._last < MIN_INTERVAL:
            return
        filled = BAR_WIDTH * done // total if total else BAR_WIDTH
        self._draw(f"[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] " + label.format(done=done, total=total))

    def _draw(self, line: str) -> None:
        width = shutil.get_terminal_size((80, 24)).columns
        if len(line) >= width:  # one line only: a wrapped line would not be redrawn in place
            line = line[:max(width - 2, 1)] + "…"
        self.stream.write(ERASE + line)
        self.stream.flush()
        self.drawn = True
        self._last = time.monotonic()

    def erase(self) -> None:
        """Erase the bar's line (if anything is drawn there)."""
        if self.drawn:
            self.stream.write(ERASE)
            self.stream.flush()
            self.drawn = False

    def close(self) -> None:
        """Erase the bar, and stop watching log output."""
        self.erase()
        for handler in self._handlers:
            handler.removeFilter(self._filter)


class _EraseBeforeLogging(logging.Filter):
    """Erases the bar's line before a log record is written (it lets every record through)."""

    def __init__(self, bar: TerminalProgress) -> None:
        super().__init__()
        self.bar = bar

    def filter(self, record: logging.LogRecord) -> bool:
        self.bar.erase()
        return True


def terminal_progress(stream: TextIO) -> TerminalProgress | None:
    """A progress bar on STREAM when it is a terminal; None otherwise."""
    try:
        return TerminalProgress(stream) if stream.isatty() else None
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return None
