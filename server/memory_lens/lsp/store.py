"""The language server's view of memory on disk: cached reads, known files, checks.

No LSP types here, so this is unit-tested directly. Reads are cached per path and revalidated
with one `stat` per use (inode, size, mtime, ctime), so every answer reflects what an agent would
load from disk without re-reading unchanged files. Parsed entries are cached per file text: the
recently used ones in memory, all of them on disk (`core/entry_cache.py`).
"""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from stat import S_ISLNK
from typing import Any, Callable, Iterable, Iterator, TypeVar

from memory_lens.core.agents.budget import agent_names, is_instruction_file, user_files
from memory_lens.core.agents.scoped import RULE_HOLDERS, rule_folder, rules_below
from memory_lens.core.checks import (
    FileEntries,
    Finding,
    check_content,
    encoding_finding,
    file_entries,
    sources_before,
    unusable_finding,
)
from memory_lens.core.discovery import ChainPlan, chain_for_root, find_project_root, has_marker
from memory_lens.core.entry_cache import EntryCache, digest, shared_cache
from memory_lens.core.file_identity import NOTHING, Identity, file_identity, quick_identity
from memory_lens.core.files import FileRead, FileStatus, read_memory_file, realpath
from memory_lens.core.imports import read_paths
from memory_lens.core.large_files import is_large_text
from memory_lens.core.merge import Memory, load_sources, merge_plan
from memory_lens.core.scan import find_memory_files, scan_tree
from memory_lens.core.gemini_settings import GEMINI_DIR, SETTINGS_FILE, read_gemini_settings, settings_paths
from memory_lens.core.settings import DEFAULT_FILENAME, Settings, with_agent_settings

log = logging.getLogger("memory_lens.lsp")
T = TypeVar("T")

PLAN_CACHE_SIZE = 1024  # chain plans of recently used directories (a few KB each)
# Merged memories of recently used directories (up to ~100 KB each): memory/explain's probe of
# the open file's directory (lsp/explain.py) gets the same object while nothing changed.
MEMORY_CACHE_SIZE = 32
# Directories whose light kept form is kept (`MemoryStore.answer`): what their memory depends on
# (~25 paths with their identities, shared between directories) and a front end's answer made
# of pieces shared between directories: a few hundred bytes of their own each.
KEPT_SIZE = 4096
# A dependency of a kept memory: a path and its identity (`quick_identity`) when it was read.
Dep = tuple[str, Any]
# Parsed entries of recently used files (~25 KB each on the large benchmark tree): the general
# files of the chains being checked stay; the others come back from the entry cache on disk.
ENTRIES_CACHE_SIZE = 64
# Reads (texts) of recently used files: the chains being checked or asked about. Keeping every
# memory file of a large workspace would hold all their text (11 MB on the large tree); a read
# that dropped out costs one `open` again.
READ_CACHE_SIZE = 256


def holds(deps: Iterable[Dep]) -> bool:
    """Whether every path of DEPS has the identity it had (`quick_identity`, inlined: one `lstat`
    each, for the ~25 paths of a directory's memory)."""
    lstat = os.lstat
    for path, was in deps:
        try:
            st = lstat(path)
        except FileNotFoundError:
            now: Any = NOTHING
        except OSError:
            now = None
        else:
            now = file_identity(path) if S_ISLNK(st.st_mode) else (
                st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        if now != was:
            return False
    return True


def _recall(cache: OrderedDict, key: object) -> Any:
    """CACHE[KEY] (None when absent), marked as recently used."""
    value = cache.get(key)
    if value is not None:
        cache.move_to_end(key)
    return value


def _remember(cache: OrderedDict, key: object, value: object, limit: int) -> None:
    """Store VALUE, dropping the least recently used entries beyond LIMIT."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > limit:
        cache.popitem(last=False)


@dataclass(frozen=True)
class Hit:
    """Where an entry's normalised form appears."""

    path: Path
    line: int  # 0-based


def is_project_settings_file(path: Path) -> bool:
    """Whether PATH is a project's `.gemini/settings.json` (Gemini's settings of its directory)."""
    return path.name == SETTINGS_FILE and path.parent.name == GEMINI_DIR


@dataclass
class Editor:
    """What the editor says of itself that a view takes as given, the same for memory/effective,
    memory/explain and the `not-loaded` diagnostic: its workspace folders, and the VS Code chat
    settings it answered to workspace/configuration (None: it has none; lsp/lifecycle.py)."""

    folders: Callable[[], list[Path]] = list
    chat_settings: dict[str, Any] | None = None


class MemoryStore:
    """Cached, thread-safe access to memory files for one configuration."""

    def __init__(self, settings: Settings, entry_cache: EntryCache | None = None, editor: Editor | None = None) -> None:
        """ENTRY_CACHE: where parsed entries persist (default: the user cache directory's). In a
        workspace the client does not trust (`settings.trusted` False), projects'
        `.gemini/settings.json` files are not read (the user's settings.json still is). EDITOR:
        the server's (`Editor`), kept from one store to the next."""
        self.settings = settings
        self.editor = editor or Editor()
        self.trusted = settings.trusted
        self._entry_cache = entry_cache
        self._lock = threading.RLock()
        self._reads: OrderedDict[Path, tuple[Identity, FileRead]] = OrderedDict()
        self._plans: OrderedDict[tuple, ChainPlan] = OrderedDict()  # (directory, root, settings) -> plan
        # directory -> (identities of the settings files read, the settings for it)
        self._layers: OrderedDict[Path, tuple[tuple, Settings]] = OrderedDict()
        self._warned: set[str] = set(settings.warnings)  # already said when the server started
        # directory -> (what its memory depends on, the memory)
        self._memories: OrderedDict[Path, tuple[tuple[Dep, ...], Memory]] = OrderedDict()
        # directory -> (what its memory depends on, a front end's answer for it): `answer`
        self._kept: OrderedDict[Path, tuple[tuple[Dep, ...], Any]] = OrderedDict()
        self._shared: dict[Any, Any] = {}  # one object for equal dependencies and pieces of answers
        self._entries: OrderedDict[Path, tuple[str, FileEntries]] = OrderedDict()
        self._digests: dict[Path, tuple[Identity, bytes]] = {}  # file identity -> digest of its text
        self._known: set[Path] = set()
        self._names: frozenset[str] = frozenset(settings.filenames)  # every memory name of the last scan
        self._settings_found: frozenset[Path] = frozenset()  # the projects' settings.json the last scan found
        self._agent_files: set[Path] = set()  # files of the enabled agents' other names: agent findings only
        self.known_version = 0  # counts the changes of the known set
        self._checked: dict[Path, Identity | None] = {}  # the file's identity when last checked from disk
        self._local = threading.local()  # `one_pass`'s answers, per thread

    # One view of the disk for a pass over many files ---------------------------------------------

    @contextmanager
    def one_pass(self) -> Iterator[None]:
        """Within the block, on this thread, each path is stat'ed once, and each directory's
        settings, project root and chain plan are worked out once: one view of the disk for a
        pass over many files (a batch of a check job). A full check then stats a general file
        once, not once for every file below it, and walks up to a project root once per
        directory. A change during the pass is seen by the next one, which the watcher starts
        as for any change; the file checked is always read as it is now (`check`). Nested:
        the outer pass counts."""
        if getattr(self._local, "memo", None) is not None:
            yield
            return
        self._local.memo = {}
        try:
            yield
        finally:
            self._local.memo = None

    def _once(self, fn: Callable[..., T], *args: Any) -> T:
        """FN(*ARGS); in a pass, computed once and then remembered until the pass ends."""
        memo = getattr(self._local, "memo", None)
        if memo is None:
            return fn(*args)
        key = (fn, *args)
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = fn(*args)
            return value

    # Reading -------------------------------------------------------------------------------

    def read(self, path: Path) -> FileRead:
        """The file at PATH as an agent would read it now (cached while unchanged)."""
        return self._read_as(path, self._once(quick_identity, path))

    def _read_as(self, path: Path, ident: Identity | None) -> FileRead:
        """`read(PATH)` where IDENT is the identity PATH has now (taken before the read)."""
        if ident is None or ident is NOTHING:
            with self._lock:
                self._reads.pop(path, None)
            if ident is NOTHING:  # not even a dangling link: what read_memory_file would say
                return FileRead(path if isinstance(path, Path) else Path(path), FileStatus.MISSING,
                                reason="does not exist")
            return read_memory_file(path, self.settings.max_file_bytes)  # dangling, loop, unreadable: cheap
        with self._lock:
            cached = _recall(self._reads, path)
        if cached is not None and cached[0] == ident:
            return cached[1]
        got = read_memory_file(path, self.settings.max_file_bytes)  # a file over the limit is not read
        if got.status is not FileStatus.MISSING:
            with self._lock:
                _remember(self._reads, path, (ident, got), READ_CACHE_SIZE)
        return got

    def entries(self, path: Path, text: str) -> FileEntries:
        """The parsed entries of PATH whose content is TEXT: the last `ENTRIES_CACHE_SIZE` files
        in memory, the others from the entry cache (parsed only when TEXT is new to it). No entries
        for a text over `LARGE_TEXT_CHARS`: it is not analysed entry by entry."""
        if is_large_text(text):
            return file_entries(path, text, (), (), ())
        with self._lock:
            cached = _recall(self._entries, path)
        if cached is not None and cached[0] == text:
            return cached[1]
        if self._entry_cache is None:
            self._entry_cache = shared_cache()
        parsed = self._entry_cache.entries(path, text)
        with self._lock:
            _remember(self._entries, path, (text, parsed), ENTRIES_CACHE_SIZE)
        return parsed

    def entries_contain(self, path: Path, wanted: str) -> bool:
        """Whether some entry of memory file PATH as it is on disk normalises to a text containing
        WANTED (normalised): the workspace-symbol search's test of every known file. A file whose
        identity is what it was when this was last asked is not read again: the entry cache
        answers from the digest of its text then."""
        if self._entry_cache is None:
            self._entry_cache = shared_cache()
        ident = quick_identity(path)
        with self._lock:
            memo = self._digests.get(path)
        if memo is not None and memo[0] == ident:
            found = self._entry_cache.contains(memo[1], wanted)
            if found is not None:
                return found
        got = self.read(path)
        if got.status is FileStatus.UNUSABLE:
            return False
        key = digest(got.text)
        if ident is not None and ident is not NOTHING:  # taken before the read: a change since shows
            with self._lock:
                self._digests[path] = (ident, key)
        found = self._entry_cache.contains(key, wanted)
        if found is None:
            found = any(wanted in k for k in self.entries(path, got.text).keys)
        return found

    def checked_identity(self, path: Path) -> tuple[bool, Identity | None]:
        """Whether memory file PATH was checked from disk, and its identity then."""
        with self._lock:
            if path in self._checked:
                return True, self._checked[path]
            return False, None

    def invalidate(self, paths: Iterable[Path] | None = None) -> None:
        """Forget cached reads of PATHS (all when None)."""
        with self._lock:
            if paths is None:
                self._reads.clear()
                return
            for p in paths:
                self._reads.pop(p, None)

    # Memory ----------------------------------------------------------------------------------

    def settings_for(self, directory: Path) -> Settings:
        """The settings memory in DIRECTORY is loaded with: the server's, with the layer of Gemini's
        settings.json read as for Gemini CLI started in DIRECTORY (`core.settings.with_agent_settings`,
        as `memory-lens show DIRECTORY` reads it). Kept while the files it reads are unchanged."""
        return self._once(self._settings_layer, directory)[1]

    def _settings_layer(self, directory: Path) -> tuple[tuple[Dep, ...], Settings]:
        """`settings_for(DIRECTORY)` and what it depends on (`.gemini` and the settings files)."""
        # Where there is no .gemini at all, only the user's files count: every such directory
        # (most of them) shares one layer instead of reading the user's files again.
        deps: list[Dep] = []
        if self.trusted:
            gemini_dir = os.path.join(directory, GEMINI_DIR)
            deps.append((gemini_dir, quick_identity(gemini_dir)))  # before looking: a change during it shows
        own = self.trusted and os.path.lexists(os.path.join(directory, GEMINI_DIR))
        # Identities taken before reading: a change during it shows.
        paths = settings_paths(directory if own else None)
        idents = tuple(self._once(quick_identity, p) for p in paths)
        deps += zip(map(str, paths), idents)
        key, stamp = (directory, idents) if own else (None, idents)
        with self._lock:
            cached = _recall(self._layers, key)
        if cached is not None and cached[0] == stamp:
            return tuple(deps), cached[1]
        settings = with_agent_settings(self.settings, read_gemini_settings(key))
        with self._lock:
            _remember(self._layers, key, (stamp, settings), PLAN_CACHE_SIZE)
            new = [w for w in settings.warnings if w not in self._warned]
            self._warned.update(new)
        for warning in new:  # an unusable settings.json: said once, as `memory-lens show` says it
            log.warning("%s", warning)
        return tuple(deps), settings

    def settings_files(self, directory: Path) -> tuple[Path, ...]:
        """The files `settings_for(DIRECTORY)` depends on (whether they exist or not)."""
        return settings_paths(directory if self.trusted else None)

    def is_memory(self, path: Path) -> bool:
        """Whether PATH is a memory file: a global file, or named by the settings of its own
        directory (`settings_for`: a project's settings.json may add AGENTS.md, say). Names given
        explicitly (a flag, the environment, an editor setting) hold everywhere."""
        settings = self.settings
        if settings.filenames_explicit or path.name == DEFAULT_FILENAME:  # GEMINI.md: always kept
            return path.name in settings.filenames
        return path.name in self.settings_for(path.parent).filenames or path in settings.global_files()

    def memory_names(self) -> frozenset[str]:
        """Every name a memory file may have in the workspace as last scanned (the union of the
        projects' names): what is watched."""
        with self._lock:
            return self._names | frozenset(self.settings.filenames)

    def settings_found(self) -> frozenset[Path]:
        """The projects' `.gemini/settings.json` files the last scan found (watched for changes)."""
        with self._lock:
            return self._settings_found

    def find_memory(self, folders: Iterable[Path], parallel: bool = True) -> tuple[set[Path], set[Path]]:
        """The memory files under FOLDERS (not the global ones), and the files of the names only
        the enabled agents read (`agent_names`). Each project's own names count: the walk looks
        for the names of each folder's settings and of every `.gemini/settings.json` it finds (a
        second walk when these add names), and keeps a file where `is_memory` says so."""
        extra = set(agent_names(self.settings))
        explicit = self.settings.filenames_explicit
        names: set[str] = set(self.settings.filenames)
        found: set[Path] = set()
        rules: set[Path] = set()  # scoped rules files (core/agents/scoped.py): `own_findings` in the workspace
        settings_found: set[Path] = set()
        for folder in folders:
            here = set(self.settings.filenames) if explicit else set(self.settings_for(folder).filenames)
            looked = here | extra | ({SETTINGS_FILE} if not explicit and self.trusted else set())
            found_files, holders = scan_tree(folder, looked, RULE_HOLDERS, parallel=parallel)  # one walk
            files = {p for p in found_files if is_instruction_file(p)}
            rules |= {p for p in rules_below(holders) if rule_folder(p) is not None}
            rules.update(user_files(folder, self.settings))  # ~/.claude/CLAUDE.md, ~/.copilot/…: a secret there too
            projects = {p for p in files if is_project_settings_file(p)} - {
                p for p in files if p.name in here | extra}
            files -= projects
            settings_found |= projects
            more = set().union(*(self.settings_for(p.parent.parent).filenames for p in projects)) - looked
            if more:
                files.update(find_memory_files(folder, more, parallel=parallel))
            names |= here | more
            found |= files
        memory = {p for p in found if self.is_memory(p)}
        with self._lock:
            self._names = frozenset(names)
            self._settings_found = frozenset(settings_found)
        return memory, {p for p in found - memory if p.name in extra} | rules

    def chain(self, directory: Path, settings: Settings | None = None) -> ChainPlan:
        """The chain plan of DIRECTORY (resolved, existing), with `settings_for(DIRECTORY)` (SETTINGS,
        when the caller has it already). The project root is looked up on disk every time; the
        plan for a (directory, root, settings) triple is remembered, so new settings give a new plan."""
        if settings is None:
            settings = self.settings_for(directory)
        return self._plan(directory, self._project_root(directory, settings.boundary_markers), settings)

    def _plan(self, directory: Path, root: Path | None, settings: Settings) -> ChainPlan:
        key = (directory, root, settings.filenames, settings.boundary_markers, settings.import_format)
        with self._lock:
            plan = _recall(self._plans, key)
        if plan is None:
            memo = getattr(self._local, "memo", None)
            plans = None if memo is None else memo.setdefault("plans", {})
            plan = chain_for_root(directory, root, settings, plans)
            with self._lock:
                _remember(self._plans, key, plan, PLAN_CACHE_SIZE)
        return plan

    def _project_root(self, directory: Path, markers: tuple[str, ...], deps: list[Dep] | None = None) -> Path | None:
        """`find_project_root(DIRECTORY)` with MARKERS; in a pass, with the answers found so far
        (the files of a large tree share most of their ancestors). DEPS: where to add every
        marker path looked at, with its identity (then the walk goes all the way up, every time)."""
        if deps is not None:
            def is_root(directory: str) -> bool:  # `has_marker`, one `lstat` per marker path
                for marker in markers:
                    if not os.path.isabs(marker) and ".." not in marker:
                        path = os.path.join(directory, marker)
                        ident = quick_identity(path)  # type: ignore[arg-type]
                        deps.append((path, ident))
                        if ident is not NOTHING and ident is not None:  # as `os.path.exists`
                            return True
                return False
            return find_project_root(directory, is_root)
        memo = getattr(self._local, "memo", None)
        known = None if memo is None else memo.setdefault(("roots", markers), {})
        return find_project_root(directory, partial(has_marker, markers=markers), known)

    def memory_for(self, directory: Path) -> Memory:
        """The effective memory for DIRECTORY (resolved, existing). What it depends on is kept
        with it, every path looked at with its identity then (`Dep`): the settings files and
        `.gemini`, each boundary marker of the walk up to the project root (absent ones too),
        every candidate and every file its imports read. While each is as it was (`holds`: one
        `lstat` each), the memory from then is the answer."""
        with self._lock:
            cached = _recall(self._memories, directory)
        if cached is not None and holds(cached[0]):
            return cached[1]
        deps, settings = self._once(self._settings_layer, directory)
        deps = list(deps)
        plan = self._plan(directory, self._project_root(directory, settings.boundary_markers, deps), settings)
        by_path = {}
        for c in plan.candidates:
            ident = self._once(quick_identity, c.path)  # taken before the read: a change during it shows
            deps.append((str(c.path), ident))
            by_path[c.path] = self._read_as(c.path, ident)
        memory = merge_plan(plan, by_path.__getitem__, settings.boundary_markers, settings.import_format)
        deps += ((str(p), quick_identity(p)) for s in memory.sources for p in sorted(read_paths(s.imports)))
        with self._lock:
            shared = self._shared
            if len(shared) > 16 * KEPT_SIZE:
                shared.clear()
            kept = tuple(shared.setdefault(d, d) for d in deps)  # ancestors' paths are kept once
            _remember(self._memories, directory, (kept, memory), MEMORY_CACHE_SIZE)
        return memory

    def answer(self, directory: Path) -> Any:
        """The answer `keep` was given for DIRECTORY's memory, while that memory still holds
        (`holds`: the same checks as `memory_for`, without the memory); else None."""
        with self._lock:
            kept = _recall(self._kept, directory)
        return kept[1] if kept is not None and holds(kept[0]) else None

    def keep(self, directory: Path, memory: Memory, answer: Any) -> None:
        """Keep ANSWER, worked out from MEMORY (`memory_for(DIRECTORY)`), while that memory holds:
        the last `KEPT_SIZE` directories. Its pieces are kept once among all answers (`share`)."""
        with self._lock:
            cached = self._memories.get(directory)
            if cached is not None and cached[1] is memory:
                _remember(self._kept, directory, (cached[0], answer), KEPT_SIZE)

    def share(self, piece: T) -> T:
        """PIECE, or an equal one already kept by an answer (answers share their pieces)."""
        with self._lock:
            return self._shared.setdefault(piece, piece)

    def check(self, path: Path, text: str | None = None) -> list[Finding]:
        """Findings for memory file PATH; TEXT is an open buffer's content (None: from disk)."""
        if text is None:
            before = file_identity(path)  # taken before reading: a change during the check shows as a change
            with self._lock:
                self._checked[path] = before
            memo = getattr(self._local, "memo", None)
            if memo is not None:  # the file checked is read as it is now, even in a pass
                memo.pop((quick_identity, path), None)
            got = self.read(path)
            if got.status is FileStatus.MISSING:
                return []
            if not got.loadable:
                return [unusable_finding(path, got.reason, got.size if got.too_large else 0, self.settings)]
            text = got.text
            bad = [encoding_finding(path, got.encoding)] if got.encoding else []
        else:
            bad = []
        real = Path(realpath(path))
        settings = self.settings_for(real.parent)
        general = sources_before(load_sources(self.chain(real.parent, settings), self.read, settings.boundary_markers,
                                              settings.import_format)[0], real)  # no merged text needed
        if self._entry_cache is None:
            self._entry_cache = shared_cache()
        return bad + check_content(path, text, general, settings, indexer=self.entries, grouped=True, real=real,
                                   analyses=self._entry_cache)

    # Known files -------------------------------------------------------------------------------

    def scan(self, folders: Iterable[Path]) -> set[Path]:
        """Find every memory file under FOLDERS (`find_memory`: each project's own names) plus the
        global files; remember and return them. Files of the names only the enabled agents read
        (`agent_names`: AGENTS.md for codex, say) are found in the same walk and kept apart
        (`agent_files`)."""
        found, agents_only = self.find_memory(folders)
        found.update(self.global_files())
        with self._lock:
            self._known = found
            self._agent_files = agents_only
            self.known_version += 1
        return set(found)

    def agent_files(self) -> set[Path]:
        """The files of the enabled agents' names found by the last scan (see `scan`)."""
        with self._lock:
            return set(self._agent_files)

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
            self.known_version += 1
            return True

    def drop_known(self, path: Path) -> bool:
        with self._lock:
            if path not in self._known:
                return False
            self._known.discard(path)
            self.known_version += 1
            self._reads.pop(path, None)
            self._entries.pop(path, None)
            self._digests.pop(path, None)
            self._checked.pop(path, None)
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
            indexed = self.entries(path, got.text)
            hits += [Hit(path, line) for key, line in zip(indexed.keys, indexed.lines) if key == normalized]
        return hits
