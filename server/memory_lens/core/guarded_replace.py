"""Replacing a file without losing bytes that another writer puts into it at the same moment.

Memory Lens processes take a lock before they write a memory file; editors and other programs
do not. `replace_keeping_others` makes the atomic replace safe against them too:

- a file is read only once it has settled: its size, mtime and ctime must not move while it is
  read nor during a short pause after, and the read must be as long as the file (an editor that
  truncates then writes is caught in between); a file found empty, or shorter than it was, less
  than a second after it was cut is watched until it changes or that second has passed (an
  editor held up between its truncate and its write);
- right before the replace, the file at the path is read again and compared with what the new
  content was computed from: bytes appended since are carried over, any other change restarts
  the computation from the new content; where Linux file leases can tell (the file's owner, or
  with CAP_LEASE), a file another program holds open is waited for until it is closed (at most
  OPEN_WAIT_SECONDS) and read again, so an appending program is not left writing into the file
  being displaced;
- the replace exchanges the two files (`renameat2(RENAME_EXCHANGE)` where the kernel and file
  system have it, else a plain rename), so the file really displaced is known, even when another
  program renamed its own version there a moment before; once it has settled it is read again,
  and anything written into it after our read (through a descriptor opened earlier, or a whole
  new file renamed into place) is taken as the new base: the change is applied again on top of
  it and the result replaces the file once more.

Every loop is bounded; past the bound `StillChangingError` says so. Temporary files come from
`temp_files`, which also removes those a killed writer left.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from memory_lens.core.file_identity import stat_identity
from memory_lens.core.files import _kind_reason
from memory_lens.core.temp_files import write_temp

try:
    import fcntl
except ImportError:  # not a POSIX system: no leases to ask
    fcntl = None  # type: ignore[assignment]

Compute = Callable[[Optional[bytes]], Optional[bytes]]

SETTLE_SECONDS = 0.002  # a file must stay still this long to count as settled
SETTLE_TRIES = 100  # reads before a file that never settles is given up on
CUT_QUIET_SECONDS = 1.0  # a file emptied or shortened this recently may be in the middle of a save
MAX_ROUNDS = 8  # replaces of one change before it is given up on
LATE_WRITER_SECONDS = 0.01  # how long after the replace a write into the displaced file is awaited
OPEN_WAIT_SECONDS = 1.0  # longest wait for another program to close the file before replacing it

F_SETSIG = 10
F_SETLEASE = 1024

AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}


class StillChangingError(OSError):
    """Another program kept writing the file; nothing more was replaced."""


class UnusableFileError(OSError):
    """The path holds something that is not a regular file (the message says what)."""


def replace_keeping_others(target: Path, compute: Compute, before_publish: Callable[[], None]) -> None:
    """Replace TARGET with COMPUTE(its current bytes, or None when missing), never discarding
    bytes another writer put into it before or during the replace.

    COMPUTE returns the new bytes, or None to keep what it was given; it may be called again on
    newer content. BEFORE_PUBLISH runs before each temporary file is written and again right
    before it replaces the file; it may raise to stop the write.
    """
    base = _read_path(target)
    expect = base
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
        if not found or not self.expect or self.base is None:
            return None
        if len(found) <= len(self.expect) or not found.startswith(self.expect):
            return None
        return found[len(self.expect):]

    def carry(self, suffix: bytes) -> None:
        assert self.base is not None and self.expect is not None
        self.base, self.expect, self.new = self.base + suffix, self.expect + suffix, self.new + suffix


def _publish(target: Path, attempt: Attempt, before_publish: Callable[[], None]) -> bool:
    """Put ATTEMPT.new at TARGET. True when done; False when ATTEMPT now holds the base to compute
    from again and what the path holds."""
    before_publish()  # refuse before a temp file exists (a read-only directory, a moved link)
    tmp = write_temp(target, attempt.new)
    fds: list[int] = []
    try:
        victim = _catch_up(target, tmp, attempt, fds)
        if victim is False:
            return False
        before_publish()
        if attempt.expect is None:
            if _create_exclusive(tmp, target):
                _fsync_dir(target.parent)
                return True
            attempt.base = attempt.expect = _read_path(target)  # created by someone else meanwhile
            return False
        published = os.stat(tmp)
        displaced = _swap(tmp, target, victim)
        fds.append(displaced)
        _fsync_dir(target.parent)
        return _check_displaced(target, displaced, (published.st_dev, published.st_ino), attempt)
    finally:
        for fd in fds:
            os.close(fd)
        try:
            os.unlink(tmp)  # the temp file, or after an exchange the displaced file
        except FileNotFoundError:
            pass


def _catch_up(target: Path, tmp: Path, attempt: Attempt, fds: list[int]) -> int | None | bool:
    """Right before the replace: bytes appended to TARGET since it was read go into TMP too.
    Returns a descriptor of the file about to be replaced (None when missing), or False when
    TARGET changed otherwise (ATTEMPT then says what to compute from)."""
    grown = False
    open_deadline = time.monotonic() + OPEN_WAIT_SECONDS
    tries = 0
    while tries < SETTLE_TRIES:
        for fd in fds:
            os.close(fd)  # our own descriptor on the file would count as another program's
        fds.clear()
        current, victim = _read_path_open(target, attempt.expect)
        if victim is not None:
            fds.append(victim)
        if current == attempt.expect:
            if victim is not None and _wait_until_closed(victim, open_deadline):
                continue  # it may have written before closing: read again
            if grown:
                _append(tmp, b"", None, sync=True)  # flushed once; appends meanwhile are caught after
            return victim
        suffix = attempt.appended(current)
        if suffix is None:
            attempt.base = attempt.expect = current
            return False
        _append(tmp, suffix, None, sync=False)
        attempt.carry(suffix)
        grown = True
        tries += 1
    raise StillChangingError(errno.EAGAIN, "keeps growing while being written")


def _wait_until_closed(fd: int, deadline: float) -> bool:
    """While another descriptor is open on FD's file, wait (until DEADLINE at most). True if one
    was open."""
    if time.monotonic() >= deadline or not _others_have_open(fd):
        return False
    while time.monotonic() < deadline and _others_have_open(fd):
        time.sleep(SETTLE_SECONDS / 2)
    return True


def _others_have_open(fd: int) -> bool:
    """Whether a descriptor other than FD is open on FD's file. Linux refuses a write lease while
    one is (EAGAIN); the lease is released at once. False where leases are unavailable (another
    system, a file of another user without CAP_LEASE, a file system without leases)."""
    if fcntl is None or not sys.platform.startswith("linux"):
        return False
    try:
        fcntl.fcntl(fd, F_SETSIG, signal.SIGURG)  # an open during the lease must not send SIGIO (fatal)
        fcntl.fcntl(fd, F_SETLEASE, fcntl.F_WRLCK)
    except OSError as err:
        return err.errno == errno.EAGAIN
    fcntl.fcntl(fd, F_SETLEASE, fcntl.F_UNLCK)
    return False


def _check_displaced(target: Path, displaced: int, published: tuple[int, int], attempt: Attempt) -> bool:
    """After the replace: whatever was written into the displaced file after our read must not
    be lost. Appended bytes are appended to the new file; any other change makes the next round
    compute from the displaced file's content."""
    for _ in range(SETTLE_TRIES):
        seen = _read_after(displaced, attempt.expect, LATE_WRITER_SECONDS)
        if seen == attempt.expect:
            return True
        suffix = attempt.appended(seen)
        if suffix is None or not _append(target, suffix, published):
            attempt.base = seen if suffix is None else (attempt.base or b"") + suffix
            attempt.expect = attempt.new
            return False
        attempt.carry(suffix)
    raise StillChangingError(errno.EAGAIN, "keeps growing while being written")


def _append(path: Path, data: bytes, only: tuple[int, int] | None, sync: bool = True) -> bool:
    """Append DATA to PATH (and with SYNC flush it to disk); when ONLY is given, only if PATH is
    still that (device, inode). False when it is not."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
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
    """A read descriptor on PATH (None when missing); UnusableFileError for a non-regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    reason = _kind_reason(os.fstat(fd).st_mode)
    if reason:
        os.close(fd)
        raise UnusableFileError(errno.EINVAL, reason)
    return fd


def _read_all(fd: int) -> bytes:
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def read_settled(fd: int) -> bytes:
    """FD's whole content once it has stopped changing (StillChangingError if it never does)."""
    for _ in range(SETTLE_TRIES):
        first = stat_identity(os.fstat(fd))
        data = _read_all(fd)
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


def _read_path(path: Path) -> bytes | None:
    data, fd = _read_path_open(path, None)
    if fd is not None:
        os.close(fd)
    return data


def _read_path_open(path: Path, expect: bytes | None) -> tuple[bytes | None, int | None]:
    """PATH's settled content (None when missing) and the open descriptor it was read from."""
    fd = _open_regular(path)
    if fd is None:
        return None, None
    try:
        return _read_after(fd, expect), fd
    except BaseException:
        os.close(fd)
        raise


# Writing and replacing -------------------------------------------------------------------------


def _swap(tmp: Path, target: Path, victim: int | None) -> int:
    """Put TMP at TARGET; return a descriptor of the file it displaced (after an exchange, the
    file now named TMP; after a plain rename, VICTIM, the file read just before)."""
    if _renameat2(tmp, target, RENAME_EXCHANGE):
        fd = _open_regular(tmp)
        if fd is not None:
            return fd
    else:
        os.replace(tmp, target)
    assert victim is not None
    return os.dup(victim)


def _create_exclusive(tmp: Path, target: Path) -> bool:
    """Put TMP at TARGET only if nothing is there; False if something is."""
    try:
        if _renameat2(tmp, target, RENAME_NOREPLACE):
            return True
        os.link(tmp, target)
        os.unlink(tmp)
        return True
    except FileExistsError:
        return False
    except OSError as err:
        if err.errno not in _UNSUPPORTED | {errno.EPERM}:
            raise
    os.replace(tmp, target)  # a file system without hard links or renameat2
    return True


_renameat2_fn = None


def _renameat2(src: Path, dst: Path, flags: int) -> bool:
    """renameat2(SRC, DST, FLAGS); False where the system or file system lacks it."""
    global _renameat2_fn
    if not sys.platform.startswith("linux"):
        return False
    if _renameat2_fn is None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fn = getattr(libc, "renameat2", None)
        if fn is not None:
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
        _renameat2_fn = fn or False
    if not _renameat2_fn:
        return False
    import ctypes

    if _renameat2_fn(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(dst))


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
