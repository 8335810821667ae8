"""What every agent view shares: the view and its sources, safe raw reads, Rust's `trim`.

A view says what one agent loads for one directory: each file it reads (its tier, its size, how
many of its bytes it keeps, the byte offset where it is cut), the text the agent gets, and the
warnings about what the agent does (some agents cut or skip files silently).
"""

from __future__ import annotations

import os
import stat
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator

from memory_lens.core.file_identity import Identity, file_identity
from memory_lens.core.merge import Memory, estimate_tokens

# Rust's `char::is_whitespace` (Unicode White_Space), what `str::trim` strips: Python's `strip()`
# also strips U+001C-U+001F, Rust does not.
RUST_WHITESPACE = ("\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                   "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def git_root(start: Path) -> Path | None:
    """The nearest ancestor-or-self of START holding `.git` (any kind, even a dangling link), as
    Claude Code, Cursor and VS Code's workspace take a project root; None when none does."""
    for d in (start, *start.parents):
        look(d / ".git", kind)
        if os.path.lexists(d / ".git"):
            return d
    return None


def rust_trim(text: str) -> str:
    """TEXT trimmed as Rust's `str::trim` trims it."""
    return text.strip(RUST_WHITESPACE)


@dataclass(frozen=True)
class AgentSource:
    """One file an agent looks at: whether it loads it, and how much of it."""

    path: Path
    tier: str  # the agent's own name for where the file sits: user, project, local, import, ...
    bytes: int  # the file's size on disk
    loaded: bool  # some of it reaches the agent
    reason: str = ""  # why it is not loaded (or not all of it)
    cut_at: int | None = None  # the byte offset where the agent stops reading it
    cut_line: int | None = None  # the 1-based line that byte is on
    imported_from: Path | None = None
    # When it loads: "" or "start" (at start), "on-read" (claude: when the agent reads the file
    # asked about), "requestable" (copilot: only named, `loaded` False; the agent's model may open it).
    when: str = ""
    matched_by: str = ""  # an on-read or requestable file: the glob that matches the file asked about

    def to_json(self) -> dict:
        data: dict = {"path": str(self.path), "tier": self.tier, "bytes": self.bytes, "loaded": self.loaded}
        if self.cut_at is not None:
            data["cutAt"] = self.cut_at
            data["cutLine"] = self.cut_line
        if self.imported_from is not None:
            data["importedFrom"] = str(self.imported_from)
        if self.reason:
            data["reason"] = self.reason
        if self.when:
            data["when"] = self.when
        if self.matched_by:
            data["matchedBy"] = self.matched_by
        return data


@dataclass(frozen=True)
class AgentView:
    """What AGENT loads for TARGET_DIR. `memory` is set for gemini only: its full `Memory`."""

    agent: str
    target_dir: Path
    project_root: Path | None
    sources: tuple[AgentSource, ...]
    text: str
    warnings: tuple[str, ...] = ()
    trace: tuple[str, ...] = field(default=(), compare=False)
    memory: Memory | None = field(default=None, compare=False)

    def to_json(self) -> dict:
        """The one JSON of an effective view: `show --format json`, MCP's `effective_memory`, and
        the language server's `memory/effective` (in camelCase, with URIs: lsp/effective.py).
        Gemini's sources are its chain's (`Source.to_json`), the other agents' their own."""
        sources = self.memory.sources if self.memory is not None else self.sources
        return {
            "agent": self.agent,
            "text": self.text,
            "project_root": None if self.project_root is None else str(self.project_root),
            "target_dir": str(self.target_dir),
            "tokens": estimate_tokens(self.text),
            "sources": [s.to_json() for s in sources],
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class RawRead:
    """A file's bytes, or why there are none. `missing`: nothing there (the agent moves on)."""

    path: Path
    data: bytes = b""
    size: int = 0
    missing: bool = False
    reason: str = ""
    withheld: bool = False  # left unread by the read area of `confined` (the reason says why)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.reason


# What a reader that is not the user may be shown (core/read_policy.py): while set, `read_raw` of
# an instruction file outside it returns the reason instead of the bytes.
_WITHHELD: ContextVar[Callable[[Path], str | None] | None] = ContextVar("withheld", default=None)


@contextmanager
def confined(withheld: Callable[[Path], str | None]) -> Iterator[None]:
    """Within it, the views read no instruction file for which WITHHELD gives a reason
    (`ReadArea.withheld`): the file is listed, not loaded, with that reason."""
    token = _WITHHELD.set(withheld)
    try:
        yield
    finally:
        _WITHHELD.reset(token)


def is_confined() -> bool:
    """Whether the views are read for the reader of `confined` (whose answers are not kept)."""
    return _WITHHELD.get() is not None


def withheld_reason(path: Path) -> str | None:
    """Why the content of PATH is withheld from the reader of `confined`; None outside it."""
    withheld = _WITHHELD.get()
    return None if withheld is None else withheld(path)


def read_raw(path: Path, max_bytes: int, confine: bool = True) -> RawRead:
    """The bytes of regular file PATH (symlinks followed), never more than MAX_BYTES read; a
    FIFO or device is never opened. A path that does not exist or is not a file is `missing`.
    CONFINE (instruction files; not an agent's settings): within `confined`, a file outside
    the read area is not read (`withheld`)."""
    look(path)
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return RawRead(path, missing=True)
    except OSError as err:
        return RawRead(path, reason=f"cannot be read: {err.strerror or err}")
    except ValueError:
        return RawRead(path, missing=True)
    if not stat.S_ISREG(st.st_mode):
        return RawRead(path, missing=True)
    why = withheld_reason(path) if confine else None
    if why is not None:
        return RawRead(path, size=st.st_size, reason=why, withheld=True)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        return RawRead(path, size=st.st_size, reason=f"cannot be read: {err.strerror or err}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return RawRead(path, missing=True)
        chunks, total = [], 0
        while total < max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError as err:
        return RawRead(path, size=st.st_size, reason=f"cannot be read: {err.strerror or err}")
    finally:
        os.close(fd)
    return RawRead(path, b"".join(chunks), size=max(st.st_size, total))


def decode_lossy(data: bytes) -> str:
    """Bytes decoded as Rust's `String::from_utf8_lossy` and Node's decoder do: U+FFFD per bad sequence."""
    return data.decode("utf-8", errors="replace")


def line_of_byte(data: bytes, offset: int) -> int:
    """The 1-based line that byte OFFSET of DATA is on."""
    return data.count(b"\n", 0, offset) + 1


SETTLE_NS = 2_000_000_000  # FAT's timestamps have a 2 s tick, HFS+'s 1 s, Linux's coarse clock a few ms
_UNSETTLED = object()  # an identity changed too recently to rely on: equal to none
_HELD = object()  # a name with nothing there, that its folder's identity stands for


def settled(identity: Identity | None) -> bool:
    """Whether IDENTITY (`file_identity`) can be relied on: not changed within the last
    `SETTLE_NS` (a file system's timestamps may have a coarse tick, and a change within the same
    tick would leave the identity as it was)."""
    return identity is None or time.time_ns() - max(identity[3], identity[4]) >= SETTLE_NS


def _settled(identity: Identity | None) -> Any:
    return identity if settled(identity) else _UNSETTLED


def _holder(path: str) -> str | None:
    """The nearest existing folder above PATH when nothing at all (not even a dangling link) is at
    PATH nor between them: a name added in that folder changes its identity. None otherwise."""
    below, folder = path, os.path.dirname(path)
    while folder != below:
        try:
            os.lstat(below)
            return None
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            return None
        try:
            return folder if stat.S_ISDIR(os.stat(folder).st_mode) else None
        except FileNotFoundError:
            below, folder = folder, os.path.dirname(folder)
        except (OSError, ValueError):
            return None
    return None


_UNSEEN = object()  # `look` without a value given: the probe is asked


class _Looked:
    """What an answer has looked at: each path by probe, what the probe gave (`_HELD`: nothing
    there, which its folder vouches for), and each such folder with its identity and those names."""

    def __init__(self) -> None:
        self.paths: dict[tuple[str, Callable[[Any], Any]], Any] = {}
        self.folders: dict[str, list] = {}  # folder: [its identity, [the names it vouches for]]

    def look(self, path: str, probe: Callable[[Any], Any], now: Any = _UNSEEN) -> None:
        key = (path, probe)
        if key in self.paths:
            return
        was = probe(path) if now is _UNSEEN else now
        if was is None and probe in (file_identity, kind) and (folder := _holder(path)) is not None:
            held = self.folders.get(folder)
            if held is None:
                held = self.folders[folder] = [_settled(file_identity(folder)), []]
            if _holder(path) == folder:  # still nothing there now that the folder's identity is taken
                held[1].append(key)
                self.paths[key] = _HELD
                return
            was = probe(path)
        self.paths[key] = _settled(was) if probe is file_identity else was

    def add(self, other: _Looked) -> None:
        """Look at what OTHER (a kept answer used in working this one out) looked at, as it was."""
        for key, was in other.paths.items():
            self.paths.setdefault(key, was)
        for folder, (identity, names) in other.folders.items():
            held = self.folders.setdefault(folder, [identity, []])
            if held[0] != identity:
                held[0] = _UNSETTLED
            held[1] += names

    def holds(self) -> bool:
        """Whether everything looked at is as it was: one probe per path, one `stat` per folder
        standing for names (and when it changed, each of its names looked at again)."""
        for (path, probe), was in self.paths.items():
            if was is not _HELD and probe(path) != was:
                return False
        for folder, held in self.folders.items():
            now = file_identity(folder)
            if now != held[0]:
                if any(_holder(path) != folder for path, _ in held[1]):
                    return False
                held[0] = _settled(now)
        return True


# What the answer `Kept.get` is working out has looked at so far.
_LOOKED: ContextVar[_Looked | None] = ContextVar("looked", default=None)


def kind(path: str | os.PathLike[str]) -> int | None:
    """What is at PATH (file, folder, ...: `stat.S_IFMT`, links followed, `S_IFLNK` for a dangling
    link; None: nothing), for a probe that asks only that: a `.git` folder's identity changes with
    every git command."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISLNK(st.st_mode):
        try:
            return stat.S_IFMT(os.stat(path).st_mode)
        except (OSError, ValueError):
            return stat.S_IFLNK
    return stat.S_IFMT(st.st_mode)


def look(path: str | os.PathLike[str], probe: Callable[[Any], Any] = file_identity, now: Any = _UNSEEN) -> None:
    """Say that the answer being worked out (`Kept.get`) depends on PATH as PROBE sees it now,
    before it is read: its identity (a file's content; a folder's names, for a listing or a probe
    of a name in it; nothing there) or, with `kind`, only what is there. Nothing at all at PATH:
    the identity of the nearest folder above it that exists stands for it, one `stat` for every
    name probed in that folder. An identity changed within the last `SETTLE_NS` is not relied
    on (the answer is worked out again). NOW: what PROBE gives for PATH, when the caller has
    just asked it (the answer then uses that very value)."""
    looked = _LOOKED.get()
    if looked is not None:
        looked.look(os.fspath(path), probe, now)


class Kept:
    """Answers kept by key while everything their working out `look`ed at is as it was (`_Looked`,
    about one `stat` each): the SIZE most recently used. A reader under `confined` neither uses nor
    fills them. A kept answer used while another is worked out adds what it looked at to it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._answers: dict[Hashable, tuple[_Looked, Any]] = {}

    def get(self, key: Hashable, work: Callable[[], Any]) -> Any:
        if is_confined():
            return work()
        kept = self._answers.pop(key, None)
        if kept is None or not kept[0].holds():
            looked = _Looked()
            token = _LOOKED.set(looked)
            try:
                answer = work()
            finally:
                _LOOKED.reset(token)
            kept = (looked, answer)
            if len(self._answers) >= self.size:
                del self._answers[next(iter(self._answers))]  # the least recently used
        self._answers[key] = kept  # the most recently used last
        outer = _LOOKED.get()
        if outer is not None:
            outer.add(kept[0])
        return kept[1]
