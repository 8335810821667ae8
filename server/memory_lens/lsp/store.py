"""The language server's view of memory on disk: cached reads, known files, checks.

No LSP types here, so this is unit-tested directly. Reads are cached per path and revalidated
with one `stat` per use (inode, size, mtime, ctime), so every answer reflects what an agent would
load from disk without re-reading unchanged files. Parsed entries are cached per file text.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from memory_lens.core.checks import (
    FileEntries,
    Finding,
    check_content,
    general_sources,
    index_entries,
    unreadable_finding,
)
from memory_lens.core.discovery import has_git_marker
from memory_lens.core.files import FileRead, FileStatus, read_memory_file
from memory_lens.core.merge import Memory, load_memory
from memory_lens.core.scan import find_memory_files
from memory_lens.core.settings import Settings

Identity = tuple[int, int, int, int, int]


def identity(path: Path) -> Identity | None:
    """What tells one version of a file from the next, or None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@dataclass(frozen=True)
class Hit:
    """Where an entry's normalised form appears."""

    path: Path
    line: int  # 0-based


class MemoryStore:
    """Cached, thread-safe access to memory files for one configuration."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._reads: dict[Path, tuple[Identity, FileRead]] = {}
        self._entries: dict[Path, tuple[str, FileEntries]] = {}
        self._known: set[Path] = set()

    # Reading -------------------------------------------------------------------------------

    def read(self, path: Path) -> FileRead:
        """The file at PATH as an agent would read it now (cached while unchanged)."""
        ident = identity(path)
        if ident is None:
            with self._lock:
                self._reads.pop(path, None)
            return read_memory_file(path)  # missing, dangling, loop: cheap and exact
        with self._lock:
            cached = self._reads.get(path)
        if cached is not None and cached[0] == ident:
            return cached[1]
        got = read_memory_file(path)
        if got.status is not FileStatus.MISSING:
            with self._lock:
                self._reads[path] = (ident, got)
        return got

    def entries(self, path: Path, text: str) -> FileEntries:
        """The parsed entries of PATH whose content is TEXT (cached per text)."""
        with self._lock:
            cached = self._entries.get(path)
        if cached is not None and cached[0] == text:
            return cached[1]
        parsed = index_entries(path, text)
        with self._lock:
            self._entries[path] = (text, parsed)
        return parsed

    def invalidate(self, paths: Iterable[Path] | None = None) -> None:
        """Forget cached reads of PATHS (all when None)."""
        with self._lock:
            if paths is None:
                self._reads.clear()
                return
            for p in paths:
                self._reads.pop(p, None)

    # Memory ----------------------------------------------------------------------------------

    def memory_for(self, directory: Path) -> Memory:
        """The effective memory for DIRECTORY (resolved, existing)."""
        return load_memory(directory, self.settings, reader=self.read, is_root=has_git_marker)

    def check(self, path: Path, text: str | None = None) -> list[Finding]:
        """Findings for memory file PATH; TEXT is an open buffer's content (None: from disk)."""
        if text is None:
            got = self.read(path)
            if got.status is FileStatus.MISSING:
                return []
            if not got.ok:
                return [unreadable_finding(path, got.reason)]
            text = got.text
        real = Path(os.path.realpath(path))
        memory = self.memory_for(real.parent)
        general = general_sources(memory, real)
        return check_content(path, text, general, self.settings, indexer=self.entries)

    # Known files -------------------------------------------------------------------------------

    def scan(self, folders: Iterable[Path]) -> set[Path]:
        """Find every memory file under FOLDERS plus the global files; remember and return them."""
        found: set[Path] = set()
        for folder in folders:
            found.update(find_memory_files(folder, self.settings.filenames))
        found.update(self.global_files())
        with self._lock:
            self._known = found
        return set(found)

    def global_files(self) -> set[Path]:
        """The global memory files that exist (readable or not)."""
        return {p for p in self.settings.global_files() if os.path.lexists(p)}

    def known(self) -> set[Path]:
        with self._lock:
            return set(self._known)

    def add_known(self, path: Path) -> bool:
        with self._lock:
            if path in self._known:
                return False
            self._known.add(path)
            return True

    def drop_known(self, path: Path) -> bool:
        with self._lock:
            if path not in self._known:
                return False
            self._known.discard(path)
            self._reads.pop(path, None)
            self._entries.pop(path, None)
            return True

    def affected_by(self, changed: Path, pool: Iterable[Path]) -> set[Path]:
        """The files of POOL whose checks may change when memory file CHANGED changes: itself and
        every file in its directory or below (all of them for a global file)."""
        if changed in set(self.settings.global_files()):
            return set(pool) | ({changed} if os.path.lexists(changed) else set())
        base = changed.parent
        hit = {p for p in pool if p.parent.is_relative_to(base)}
        if os.path.lexists(changed) and changed in self.known():
            hit.add(changed)
        return hit

    def find_hits(self, normalized: str, paths: Iterable[Path]) -> list[Hit]:
        """Every place among PATHS (read from disk) where an entry normalises to NORMALIZED."""
        hits: list[Hit] = []
        for path in paths:
            got = self.read(path)
            if not got.ok:
                continue
            for e in self.entries(path, got.text).entries:
                if e.normalized == normalized:
                    hits.append(Hit(path, e.line))
        return hits
