"""The answers of `memory/effective` kept while nothing they depend on has changed on disk.

A kept answer is checked before every use with one `stat` per thing it depends on, and only
used when every one of them is as it was:

- each directory from the target directory up to the project root, or up to `/` without one
  (`lstat`, `ENTRIES`): a memory file or a root marker created, deleted or renamed in one of
  them changes that directory's change time, and so does one of them being replaced;
- each directory above the project root (`lstat`, `PLACE`): only whether it is still the same
  directory and no link (the target would move); what happens in it does not matter while the
  root's own marker is there, so a busy directory such as `/tmp` or the home directory costs no
  answer;
- each global memory file, there or not, and each other memory file, imported file and root
  marker that is a link, as it was, there or not (links followed, `CONTENT`): their content, or
  their coming (the global directory's own entries are not compared: Gemini CLI writes there);
- the files Gemini's settings.json layer was read from for the directory: the file when it is
  there, else the nearest directory above it that is (its entries change when it appears);
- for a file with imports outside the chain (a global one), the directories above it too: the
  imports' root is looked up from there.

On a big project that is ~20 `stat` calls for the answer, where making it costs ~25 and merging
(a few hundred microseconds). A change time shows a change only when it moved: an answer is not
kept when anything it depends on changed less than `SETTLE_NS` before it was computed (a second
change within the same clock tick would leave the times equal), so that any later change shows.

The merged text itself is not kept per directory (~50 KB on a big project, and a workspace has
thousands of directories): an entry keeps the parts of the merge, the files' texts (shared between
entries, and with the store while it holds them), and joins them again (`merge.concatenate`, the
merge's own join). Only the `RESULTS_KEPT` most recently used directories keep their whole
answer. On the large benchmark tree 1000 directories cost ~11 MB, most of it the texts of the
memory files in their chains that the store no longer holds.

The file watcher is not consulted: the system's notifications arrive up to ~0.1 s after a write,
and an answer asked for right after a write must show it. No LSP types here (unit-tested).
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Iterable

from memory_lens.core.discovery import ChainPlan, Scope
from memory_lens.core.file_identity import Identity, stat_identity
from memory_lens.core.imports import read_paths
from memory_lens.core.merge import Memory, concatenate, estimate_tokens

SETTLE_NS = 100_000_000  # 0.1 s: well above the kernel's clock tick for file times (1-10 ms)
COARSE_SETTLE_NS = 2_100_000_000  # for file times in whole milliseconds or coarser (FAT: 2 s)
ENTRIES_KEPT = 4096  # directories whose dependencies are kept (~2 KB each)
RESULTS_KEPT = 32  # directories whose whole answer is kept (~50-100 KB each on a big project)
URIS_KEPT = 8192

State = Identity | None
# Kept as hashes of the tuples (one int: ~100 bytes a check instead of ~250; 2**-64 to miss a change)
Check = tuple[Callable[[str], os.stat_result], str, int | None]  # (os.stat or os.lstat, path, hash of its State)
Place = tuple[str, int | None]  # (path, hash of (inode, device, mode) of what is there)

CONTENT = "content"  # links followed, every time compared: a file, the global directory
ENTRIES = "entries"  # the directory itself (`lstat`), every time compared: what is in it
PLACE = "place"  # the directory itself (`lstat`): only whether it is still the same one


def path_state(path: str, follow: bool) -> State:
    """The identity of PATH (its link when FOLLOW is False), None when nothing can be stat'ed."""
    try:
        return stat_identity(os.stat(path, follow_symlinks=follow))
    except (OSError, ValueError):
        return None


def place_of(path: str) -> tuple[int, int, int] | None:
    """What stands at PATH (inode, device, mode: a link there is another thing), or None."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return st.st_ino, st.st_dev, st.st_mode


def settled(state: State, started_ns: int) -> bool:
    """Whether STATE last changed early enough before STARTED_NS that a later change cannot
    leave its times equal (see the module docstring)."""
    if state is None:
        return True
    last = max(state[3], state[4])  # the later of the times (Windows' st_ctime is the creation time)
    margin = COARSE_SETTLE_NS if last % 1_000_000 == 0 else SETTLE_NS
    return last < started_ns - margin


class Entry:
    """One directory's answer: what it depends on, and the parts to build it from."""

    __slots__ = ("checks", "places", "directory", "project_root", "parts", "texts", "sources", "alive")

    def __init__(self, checks: tuple[Check, ...], places: tuple[Place, ...], memory: Memory,
                 sources: list[dict[str, Any]]) -> None:
        self.checks = checks
        self.places = places
        self.directory = str(memory.target_dir)
        self.project_root = None if memory.project_root is None else str(memory.project_root)
        # What goes into the merge, in order: the files' own texts (nothing copied).
        self.parts = tuple(s.text if s.expanded is None else s.expanded for s in memory.sources if s.readable)
        self.texts = tuple((s.path, s.text) for s in memory.sources)  # for the `dirty` flags
        self.sources = sources
        self.alive = True

    def unchanged(self) -> bool:
        """Whether every path this answer depends on is as it was (one system call each)."""
        for stat, path, state in self.checks:
            try:
                st = stat(path)
            except (OSError, ValueError):
                if state is not None:
                    return False
                continue
            if state is None or state != hash((st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)):
                return False
        for path, place in self.places:
            try:
                st = os.lstat(path)
            except (OSError, ValueError):
                return False
            if place != hash((st.st_ino, st.st_dev, st.st_mode)):
                return False
        return True

    def result(self) -> dict[str, Any]:
        """The answer, the merged text joined again from its parts."""
        text = concatenate(self.parts)
        return {"text": text, "projectRoot": self.project_root, "targetDir": self.directory,
                "tokens": estimate_tokens(text), "sources": self.sources}


def dependencies(plan: ChainPlan, memory: Memory, markers: tuple[str, ...], import_format: str,
                 settings_files: Iterable[Path] = ()) -> dict[str, str]:
    """Every path the answer for PLAN's directory depends on (see the module docstring), and how
    it is compared (`CONTENT`, `ENTRIES`, `PLACE`). SETTINGS_FILES: the files the settings for
    the directory were read from, there or not (Gemini's settings.json)."""
    deps: dict[str, str] = {}
    _up_from(plan.target_dir, plan.project_root, markers, deps)
    for cand in plan.candidates:
        if cand.scope is Scope.GLOBAL:  # there or not: the global directory's entries are not compared
            deps[str(cand.path)] = CONTENT
    for source in memory.sources:  # every other candidate there (a link to a loaded file: its entry)
        deps[str(source.path)] = CONTENT
    for source in memory.sources:
        if source.imports or import_format == "flat":
            _up_from(source.path.parent, None, markers, deps)  # where the imports' root is looked up
        deps.update((str(p), CONTENT) for p in read_paths(source.imports))
    for path in settings_files:
        _file_or_where_it_would_appear(path, deps)
    return deps


def _file_or_where_it_would_appear(path: Path, deps: dict[str, str]) -> None:
    """PATH when there is something there; else the nearest directory above it that exists, whose
    entries change when PATH (or a directory on its way) appears."""
    if os.path.lexists(path):
        deps[str(path)] = CONTENT
        return
    directory = path.parent
    while not os.path.isdir(directory) and directory != directory.parent:
        directory = directory.parent
    key = str(directory)
    if deps.get(key) not in (CONTENT, ENTRIES):
        deps[key] = ENTRIES if deps.get(key) == PLACE else CONTENT


def _up_from(start: Path, root: Path | None, markers: tuple[str, ...], deps: dict[str, str]) -> None:
    """Add START and every directory above it: up to ROOT (all of them without one) for what is
    in them, with the root markers that are links; above ROOT only for what they are (no marker
    there matters while ROOT's own is there, and ROOT's entries are compared)."""
    above_root = False
    for directory in (start, *start.parents):
        key = str(directory)
        if deps.get(key) == ENTRIES or (above_root and key in deps):
            return  # walked already, and everything above it
        if above_root:
            deps[key] = PLACE
            continue
        if deps.get(key) != CONTENT:  # a directory already stat'ed through its link stays so
            deps[key] = ENTRIES
        for marker in markers:
            if os.path.isabs(marker) or ".." in marker:
                continue  # never a marker (`discovery.has_marker`)
            path = os.path.join(directory, marker)
            if os.sep in marker or os.path.islink(path):  # DIRECTORY's own times show the rest
                deps[path] = CONTENT
        above_root = directory == root


class EffectiveCache:
    """The kept answers of one store (one configuration): per URI, the directory's entry."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._clock = clock
        self._entries: OrderedDict[str, Entry] = OrderedDict()
        self._results: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._uris: OrderedDict[str, Entry] = OrderedDict()

    def started(self) -> int:
        """The time to give `keep` for an answer computed from now on."""
        return self._clock()

    def lookup(self, uri: str) -> tuple[Entry, dict[str, Any]] | None:
        """The entry and answer kept for URI when nothing it depends on changed, else None."""
        entry = self._uris.get(uri)
        if entry is None:
            return None
        if not entry.alive or not entry.unchanged():
            entry.alive = False
            self._uris.pop(uri, None)
            return None
        return entry, self.result_of(entry)

    def lookup_dir(self, directory: str) -> tuple[Entry, dict[str, Any]] | None:
        """As `lookup`, for a directory already resolved."""
        entry = self._entries.get(directory)
        if entry is None or not entry.alive:
            return None
        if not entry.unchanged():
            entry.alive = False
            del self._entries[directory]
            self._results.pop(directory, None)
            return None
        return entry, self.result_of(entry)

    def result_of(self, entry: Entry) -> dict[str, Any]:
        results = self._results
        result = results.get(entry.directory)
        if result is None or result["sources"] is not entry.sources:
            result = entry.result()
            results[entry.directory] = result
            if len(results) > RESULTS_KEPT:
                results.popitem(last=False)
        else:
            results.move_to_end(entry.directory)
        return result

    def keep(self, deps: dict[str, str], memory: Memory, result: dict[str, Any],
             started_ns: int) -> Entry | None:
        """Keep RESULT, the answer made of MEMORY from STARTED_NS on, when every one of DEPS has
        settled; the entry, or None when not kept."""
        states = [(how, path, path_state(path, how != ENTRIES)) for path, how in deps.items() if how != PLACE]
        if not all(settled(state, started_ns) for _, _, state in states):
            return None
        checks = tuple((os.lstat if how == ENTRIES else os.stat, sys.intern(path),
                        None if state is None else hash(state)) for how, path, state in states)
        places = tuple((sys.intern(path), None if (place := place_of(path)) is None else hash(place))
                       for path, how in deps.items() if how == PLACE)
        entry = Entry(checks, places, memory, result["sources"])
        if concatenate(entry.parts) != memory.text:
            return None  # the merge is no longer the join of its parts: nothing to rebuild from
        entries = self._entries
        old = entries.pop(entry.directory, None)
        if old is not None:
            old.alive = False
        entries[entry.directory] = entry
        self._results[entry.directory] = result
        self._results.move_to_end(entry.directory)
        if len(self._results) > RESULTS_KEPT:
            self._results.popitem(last=False)
        while len(entries) > ENTRIES_KEPT:
            entries.popitem(last=False)[1].alive = False
        return entry

    def remember_uri(self, uri: str, entry: Entry) -> None:
        """Answer URI from ENTRY from now on while it holds (the caller checked that URI's
        path names ENTRY's directory without a symlink: see `lexically_inside`)."""
        uris = self._uris
        uris[uri] = entry
        if len(uris) > URIS_KEPT:
            uris.popitem(last=False)

    def clear(self) -> None:
        for entry in self._entries.values():
            entry.alive = False
        self._entries.clear()
        self._results.clear()
        self._uris.clear()


def lexically_inside(path: Path, directory: str) -> bool:
    """Whether DIRECTORY is PATH itself or one of its ancestors as written (no `..` in PATH).

    Then every way PATH could come to mean another directory changes the change time of
    DIRECTORY or of one of its ancestors, which the entry stats: a directory or a link created
    where PATH (or a missing directory on its way) is, or a directory on its way replaced."""
    text = str(path)
    if ".." in path.parts:
        return False
    return text == directory or text.startswith(directory if directory.endswith(os.sep) else directory + os.sep)
