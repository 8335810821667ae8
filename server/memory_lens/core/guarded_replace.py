"""Replacing a file without losing bytes that another writer puts into it at the same moment.

Memory Lens processes take a lock before they write a memory file; editors and other programs
do not. `replace_keeping_others` makes the atomic replace safe against them too:

- a file is read only once it has settled: its size, mtime and ctime must not move while it is
  read nor during a short pause after, and the read must be as long as the file (an editor that
  truncates then writes is caught in between); a file found empty, or shorter than it was, less
  than a second after it was cut is watched until it changes or that second has passed (an
  editor held up between its truncate and its write);
- right before the replace, the file is read again: bytes appended since are carried over, any
  other change restarts the computation from the new content;
- the file the replace displaced is kept at hand under a temporary name and read once more when
  it has settled: bytes written into it after our read (through a descriptor opened earlier, or
  a whole file renamed into place) are appended, or the change is applied again on top of them.

Every system takes the same path: none of our descriptors is open on the file when it is
replaced (Windows refuses to replace an open file), and a hard link made just before `os.replace`
keeps the displaced file. Where Linux offers more (`LINUX_CALLS`; `MEMORY_LENS_PORTABLE_WRITES=1`
turns it off), `renameat2(RENAME_EXCHANGE)` swaps the two files in one step, and a file another
program holds open (a lease tells) is waited for until it closes (at most OPEN_WAIT_SECONDS).

Every loop is bounded; past the bound `StillChangingError` says so. Temporary files come from
`temp_files`, which also removes those a killed writer left.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from memory_lens.core.file_identity import stat_identity
from memory_lens.core.files import _kind_reason
from memory_lens.core.settings import portable_writes_only
from memory_lens.core.temp_files import remove_temp, write_temp

try:
    import fcntl
except ImportError:  # not a POSIX system: no leases to ask
    fcntl = None  # type: ignore[assignment]

Compute = Callable[[Optional[bytes]], Optional[bytes]]

LINUX_CALLS = sys.platform.startswith("linux") and not portable_writes_only()

SETTLE_SECONDS = 0.002  # a file must stay still this long to count as settled
SETTLE_TRIES = 100  # reads before a file that never settles is given up on
CUT_QUIET_SECONDS = 1.0  # a file emptied or shortened this recently may be in the middle of a save
MAX_ROUNDS = 8  # replaces of one change before it is given up on
LATE_WRITER_SECONDS = 0.01  # how long after the replace a write into the displaced file is awaited
OPEN_WAIT_SECONDS = 1.0  # longest wait for another program to close the file before replacing it

F_SETSIG, F_SETLEASE, AT_FDCWD, RENAME_EXCHANGE = 10, 1024, -100, 2
_BINARY = getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)  # Windows reads text mode otherwise
# Never blocking on a FIFO, never through a link: the path is the resolved file, so a link there
# was swapped in during the write (O_NOFOLLOW on a link: ELOOP; EMLINK on FreeBSD).
_READ = os.O_RDONLY | _BINARY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


class StillChangingError(OSError):
    """Another program kept writing the file; nothing more was replaced."""


class UnusableFileError(OSError):
    """The path holds something that is not a regular file (the message says what)."""


class ChangedIntoLinkError(UnusableFileError):
    """The file turned into a symbolic link while being written (its path was resolved before)."""


def replace_keeping_others(target: Path, compute: Compute, before_publish: Callable[[], None]) -> None:
    """Replace TARGET with COMPUTE(its current bytes, or None when missing), never discarding
    bytes another writer put into it before or during the replace.

    COMPUTE returns the new bytes, or None to keep what it was given; it may be called again on
    newer content. BEFORE_PUBLISH runs before each temporary file is written and again right
    before it replaces the file; it may raise to stop the write.
    """
    base = expect = _read_path(target, None)
    for _ in range(MAX_ROUNDS):
        new = compute(base)
        if new is None:
            new = base
        if new == expect:
            return
        assert new is not None
        attempt = Attempt(base, expect, new)
        if _publish(target, attempt, before_publish):
            return
        base, expect = attempt.base, attempt.expect
    raise StillChangingError(errno.EAGAIN, "keeps changing while being written")


@dataclass
class Attempt:
    """One replace: NEW, computed from BASE, is to take the place of the file holding EXPECT.
    Bytes another program appends to that file meanwhile are appended to all three."""

    base: bytes | None
    expect: bytes | None
    new: bytes

    def appended(self, found: bytes | None) -> bytes | None:
        """What FOUND adds to the end of EXPECT; None when FOUND is not such an extension (an
        empty EXPECT has none: a file read while an editor had just truncated it)."""
        if not found or not self.expect or self.base is None or len(found) <= len(self.expect):
            return None
        return found[len(self.expect):] if found.startswith(self.expect) else None

    def carry(self, suffix: bytes) -> None:
        assert self.base is not None and self.expect is not None
        self.base, self.expect, self.new = self.base + suffix, self.expect + suffix, self.new + suffix


def _publish(target: Path, attempt: Attempt, before_publish: Callable[[], None]) -> bool:
    """Put ATTEMPT.new at TARGET. True when done; False when ATTEMPT now holds the base to compute
    from again and what the path holds."""
    before_publish()  # refuse before a temp file exists (a read-only directory, a moved link)
    tmp = write_temp(target, attempt.new)
    kept = tmp.with_name(tmp.name[:-len(".tmp")] + "_old.tmp")  # the displaced file, linked
    try:
        if not _catch_up(target, tmp, attempt):
            return False
        before_publish()
        if attempt.expect is None:  # a new file: a hard link appears only if nothing is there
            try:
                os.link(tmp, target)
            except FileExistsError:  # created by someone else meanwhile
                attempt.base = attempt.expect = _read_path(target, None)
                return False
            except OSError:  # a file system without hard links: a plain replace is all there is
                os.replace(tmp, target)
            fsync_dir(target.parent)
            return True
        published = os.stat(tmp)
        displaced = _replace(tmp, target, kept)
        fsync_dir(target.parent)
        return displaced is None or _check_displaced(target, displaced, (published.st_dev, published.st_ino), attempt)
    finally:
        for leftover in (tmp, kept):  # the temp file, or after an exchange the displaced file
            remove_temp(leftover)


def _catch_up(target: Path, tmp: Path, attempt: Attempt) -> bool:
    """Right before the replace: bytes appended to TARGET since it was read go into TMP too.
    False when TARGET changed otherwise (ATTEMPT then says what to compute from)."""
    grown = False
    open_deadline = time.monotonic() + OPEN_WAIT_SECONDS
    for _ in range(SETTLE_TRIES):
        current = _read_path(target, attempt.expect)
        if current == attempt.expect:
            if current is not None and _wait_until_closed(target, open_deadline):
                continue  # it may have written before closing: read again
            if grown:
                _append(tmp, b"", None, sync=True)  # flushed once; appends meanwhile are caught after
            return True
        suffix = attempt.appended(current)
        if suffix is None:
            attempt.base = attempt.expect = current
            return False
        _append(tmp, suffix, None, sync=False)
        attempt.carry(suffix)
        grown = True
    raise StillChangingError(errno.EAGAIN, "keeps growing while being written")


def _wait_until_closed(path: Path, deadline: float) -> bool:
    """While another program holds PATH open, wait (until DEADLINE at most). True if one did;
    False where no file lease can tell (`_others_have_open`)."""
    if not LINUX_CALLS or time.monotonic() >= deadline:
        return False
    fd = _open_regular(path)
    if fd is None:
        return False
    try:
        if not _others_have_open(fd):
            return False
        while time.monotonic() < deadline and _others_have_open(fd):
            time.sleep(SETTLE_SECONDS / 2)
        return True
    finally:
        os.close(fd)


def _others_have_open(fd: int) -> bool:
    """Whether a descriptor other than FD is open on FD's file. Linux refuses a write lease while
    one is (EAGAIN); the lease is released at once. False where leases are unavailable (another
    system, a file of another user without CAP_LEASE, a file system without leases)."""
    if not LINUX_CALLS or fcntl is None:
        return False
    try:
        fcntl.fcntl(fd, F_SETSIG, signal.SIGURG)  # an open during the lease must not send SIGIO (fatal)
        fcntl.fcntl(fd, F_SETLEASE, fcntl.F_WRLCK)
    except OSError as err:
        return err.errno == errno.EAGAIN
    fcntl.fcntl(fd, F_SETLEASE, fcntl.F_UNLCK)
    return False


def _check_displaced(target: Path, displaced: Path, published: tuple[int, int], attempt: Attempt) -> bool:
    """After the replace: whatever was written into the displaced file after our read must not
    be lost. Appended bytes are appended to the new file; any other change makes the next round
    compute from the displaced file's content."""
    try:
        fd = _open_regular(displaced)
    except UnusableFileError:  # a link or a directory was swapped in, and displaced: no content
        fd = None
    if fd is None:
        return True
    try:
        for _ in range(SETTLE_TRIES):
            seen = _read_after(fd, attempt.expect, LATE_WRITER_SECONDS)
            if seen == attempt.expect:
                return True
            suffix = attempt.appended(seen)
            if suffix is None or not _append(target, suffix, published):
                attempt.base = seen if suffix is None else (attempt.base or b"") + suffix
                attempt.expect = attempt.new
                return False
            attempt.carry(suffix)
    finally:
        os.close(fd)
    raise StillChangingError(errno.EAGAIN, "keeps growing while being written")


def _append(path: Path, data: bytes, only: tuple[int, int] | None, sync: bool = True) -> bool:
    """Append DATA to PATH (and with SYNC flush it to disk); when ONLY is given, only if PATH is
    still that (device, inode). False when it is not."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | _BINARY)
    try:
        st = os.fstat(fd)
        if only is not None and (st.st_dev, st.st_ino) != only:
            return False
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
        return True
    finally:
        os.close(fd)


# Reading a file that may be being written ------------------------------------------------------


def _open_regular(path: Path) -> int | None:
    """A read descriptor on PATH (None when missing); UnusableFileError for anything but a
    regular file, ChangedIntoLinkError for a link."""
    try:
        fd = os.open(path, _READ)
    except FileNotFoundError:
        return None
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):  # what O_NOFOLLOW says of a link (it may be gone again)
            raise ChangedIntoLinkError(err.errno, "changed into a link while being written") from None
        raise
    reason = _kind_reason(os.fstat(fd).st_mode)
    if reason:
        os.close(fd)
        raise UnusableFileError(errno.EINVAL, reason)
    return fd


def read_settled(fd: int) -> bytes:
    """FD's whole content once it has stopped changing (StillChangingError if it never does)."""
    for _ in range(SETTLE_TRIES):
        first = stat_identity(os.fstat(fd))
        os.lseek(fd, 0, os.SEEK_SET)
        chunks = [os.read(fd, 1 << 20)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 20))
        data = b"".join(chunks)
        after = os.fstat(fd)
        if stat_identity(after) == first and len(data) == after.st_size:
            time.sleep(SETTLE_SECONDS)
            if stat_identity(os.fstat(fd)) == first:
                return data
        else:
            time.sleep(SETTLE_SECONDS)
    raise StillChangingError(errno.EAGAIN, "keeps changing while being read")


def _read_after(fd: int, expect: bytes | None, grace: float = 0.0) -> bytes:
    """FD's settled content. A file that looks cut (empty, or a strict prefix of EXPECT) and was
    cut less than CUT_QUIET_SECONDS ago may belong to an editor that truncated it and is about to
    write it again: it is watched until it changes or has stayed that way that long. With GRACE,
    a content equal to EXPECT must also stay unchanged that long (a program that opened the file
    just before it was replaced may still be about to write)."""
    data = read_settled(fd)
    if grace and data == expect:
        key = stat_identity(os.fstat(fd))
        time.sleep(grace)
        if stat_identity(os.fstat(fd)) == key:
            return data
        data = read_settled(fd)
    deadline = time.monotonic() + CUT_QUIET_SECONDS
    while _looks_cut(data, expect):
        st = os.fstat(fd)
        key, quiet_until = stat_identity(st), st.st_mtime_ns + int(CUT_QUIET_SECONDS * 1e9)
        while stat_identity(os.fstat(fd)) == key:
            if time.time_ns() >= quiet_until or time.monotonic() >= deadline:
                return data
            time.sleep(SETTLE_SECONDS * 5)
        data = read_settled(fd)
    return data


def _looks_cut(data: bytes, expect: bytes | None) -> bool:
    if expect is None:
        return not data
    return len(data) < len(expect) and expect.startswith(data)


def _read_path(path: Path, expect: bytes | None) -> bytes | None:
    """PATH's settled content (`_read_after`), or None when missing; no descriptor left open."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        return _read_after(fd, expect)
    finally:
        os.close(fd)


# Replacing -------------------------------------------------------------------------------------


def _replace(tmp: Path, target: Path, kept: Path) -> Path | None:
    """Put TMP at TARGET; return the name the displaced file is now found under: TMP after an
    exchange, else KEPT, a hard link made just before (None on a file system without them:
    then only the read just before vouches for what was replaced)."""
    if _exchange(tmp, target):
        return tmp
    try:
        os.link(target, kept, follow_symlinks=os.link not in os.supports_follow_symlinks)
    except OSError:
        kept = None  # type: ignore[assignment]
    os.replace(tmp, target)
    return kept


@functools.lru_cache(maxsize=None)
def _renameat2():  # type: ignore[no-untyped-def]
    import ctypes

    fn = getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn


def _exchange(tmp: Path, target: Path) -> bool:
    """Swap TMP and TARGET in one step (Linux `renameat2(RENAME_EXCHANGE)`); False when
    LINUX_CALLS is off or the C library or the file system lacks it."""
    fn = _renameat2() if LINUX_CALLS else None
    if fn is None:
        return False
    if fn(AT_FDCWD, os.fsencode(tmp), AT_FDCWD, os.fsencode(target), RENAME_EXCHANGE) == 0:
        return True
    import ctypes

    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(target))


def fsync_dir(directory: Path) -> None:
    with contextlib.suppress(OSError):  # Windows opens no directory (nor needs it flushed)
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
