"""Node's and Gemini CLI's path handling, reproduced for `core/imports.py` and `core/merge.py`.

`path.resolve`, `decodeURIComponent`, Gemini's `resolveToRealPath` (symlinks followed, a missing
tail too), `isSubpath` and `validateImportPath`, the import processor's own `findProjectRoot`,
`fs.readFile(path, 'utf-8')` with Node's error messages, JavaScript's `trim()` and its string
sort: each as Gemini CLI 0.61.0 runs it on POSIX (docs/agents.md). Nothing here raises for a bad
path: callers get False or ImportFailure.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat

_URL = re.compile(r"^(file|https?)://")
# JavaScript's String.prototype.trim: WhiteSpace and LineTerminator (ECMA-262), which is not
# Python's str.strip set (U+FEFF is stripped; U+001C-U+001F and U+0085 are not).
JS_WHITESPACE = ("\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                 "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)


def js_sort_key(text: str) -> bytes:
    """The key that orders strings as JavaScript's `Array.prototype.sort()` without a comparator
    does: by UTF-16 code units (so U+E000-U+FFFF sort after the characters beyond U+FFFF, unlike
    Python's code point order). A lone surrogate (an undecodable byte of a file name) counts as
    itself."""
    return text.encode("utf-16-be", "surrogatepass")


def is_url(target: str) -> bool:
    """Gemini refuses these imports outright."""
    return bool(_URL.match(target))


def js_resolve(base: str, target: str) -> str:
    """Node's `path.resolve(base, target)` on POSIX (lexical: '.', '..', '//' and a trailing '/')."""
    joined = target if target.startswith("/") else f"{base}/{target}"
    parts: list[str] = []
    for part in joined.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    return "/" + "/".join(parts)


def decode_uri_component(text: str) -> str:
    """JavaScript's `decodeURIComponent`; raises ValueError where it throws (a malformed escape)."""
    if "%" not in text:
        return text
    out = bytearray()
    result = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "%":
            if out:
                result.append(out.decode("utf-8"))  # strict: JavaScript throws on bad UTF-8
                out.clear()
            result.append(ch)
            i += 1
            continue
        hexa = text[i + 1:i + 3]
        if len(hexa) != 2 or any(c not in "0123456789abcdefABCDEF" for c in hexa):
            raise ValueError("URI malformed")
        out.append(int(hexa, 16))
        i += 3
    if out:
        result.append(out.decode("utf-8"))
    return "".join(result)


_FOLLOWED = (errno.ENOENT, errno.EISDIR, errno.ENAMETOOLONG, errno.ENOTDIR)


def _robust_realpath(p: str, visited: set[str]) -> str:
    """Gemini's `robustRealpath`: the real path, following a missing tail and dangling links."""
    if p in visited:
        raise OSError(errno.ELOOP, "Infinite recursion detected in robustRealpath")
    visited.add(p)
    try:
        return os.path.realpath(p, strict=True)
    except OSError as err:
        if err.errno not in _FOLLOWED:
            raise
    try:
        if stat.S_ISLNK(os.lstat(p).st_mode):
            return _robust_realpath(js_resolve(posixpath.dirname(p), os.readlink(p)), visited)
    except OSError as err:
        if err.errno not in _FOLLOWED:
            raise
    parent = posixpath.dirname(p)
    if parent == p:
        return p
    return js_resolve(_robust_realpath(parent, visited), posixpath.basename(p))


def resolve_to_real_path(path_str: str) -> str:
    """Gemini's `resolveToRealPath` (raises OSError or ValueError where it throws)."""
    if "\0" in path_str:
        raise ValueError(f"Invalid path: {path_str}")
    try:
        path_str = decode_uri_component(path_str)
    except (ValueError, UnicodeDecodeError):
        pass
    return _robust_realpath(js_resolve(os.getcwd(), path_str), set())


def is_subpath(parent: str, child: str) -> bool:
    """Gemini's `isSubpath` on POSIX."""
    rel = posixpath.relpath(js_resolve(os.getcwd(), child), js_resolve(os.getcwd(), parent))
    return not rel.startswith("../") and rel != ".." and not rel.startswith("/")


def inside_root(target: str, base: str, root: str) -> bool:
    """Gemini's `validateImportPath`: not a URL, and inside ROOT once symlinks are followed."""
    if is_url(target):
        return False
    try:
        resolved = resolve_to_real_path(js_resolve(base, target))
        real_root = resolve_to_real_path(js_trim(root)) if js_trim(root) else None
    except (OSError, ValueError):
        return False
    return real_root is not None and is_subpath(real_root, resolved)


def project_root_for(directory: str, markers: tuple[str, ...]) -> str:
    """The root imports must stay in: the nearest ancestor-or-self of DIRECTORY holding a
    marker (Gemini's own `findProjectRoot` in the import processor), else DIRECTORY."""
    current = js_resolve(os.getcwd(), directory)
    while True:
        for marker in markers:
            if marker.startswith("/") or ".." in marker:
                continue
            if os.path.exists(posixpath.join(current, marker)):
                return current
        parent = posixpath.dirname(current)
        if parent == current:
            return js_resolve(os.getcwd(), directory)
        current = parent


_NODE_ERRORS = {
    errno.ENOENT: ("ENOENT", "no such file or directory"),
    errno.ENOTDIR: ("ENOTDIR", "not a directory"),
    errno.EACCES: ("EACCES", "permission denied"),
    errno.EPERM: ("EPERM", "operation not permitted"),
    errno.ELOOP: ("ELOOP", "too many symbolic links encountered"),
    errno.ENAMETOOLONG: ("ENAMETOOLONG", "name too long"),
    errno.EISDIR: ("EISDIR", "illegal operation on a directory"),
}


def _node_message(err: OSError, syscall: str, path: str | None) -> str:
    code, text = _NODE_ERRORS.get(err.errno or 0, (errno.errorcode.get(err.errno or 0, "EIO"),
                                                     (err.strerror or "i/o error").lower()))
    return f"{code}: {text}, {syscall}" + (f" '{path}'" if path is not None else "")


def read_as_agent(path: str, limit: int) -> str:
    """The file's text as Node's `fs.readFile(path, 'utf-8')` gives it (U+FFFD for bad bytes, NUL
    and BOM kept). Raises ImportFailure with Node's message; a FIFO or device is refused instead
    of read, as reading it could block forever, and a file over LIMIT bytes is not read."""
    try:
        os.stat(path)  # fs.access(path)
    except OSError as err:
        raise ImportFailure(_node_message(err, "access", path), err.errno) from None
    except ValueError:
        raise ImportFailure(f"Invalid path: {path}", errno.EINVAL) from None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise ImportFailure(_node_message(err, "open", path), err.errno) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ImportFailure("EISDIR: illegal operation on a directory, read", errno.EISDIR)
        if not stat.S_ISREG(mode):
            raise ImportFailure(f"{path} is not a regular file (a FIFO, socket or device)", errno.EINVAL)
        chunks = []
        total = 0
        while chunk := os.read(fd, 1 << 20):
            total += len(chunk)
            if total > limit:
                raise ImportFailure(f"{path}: over {limit} bytes", errno.EFBIG)
            chunks.append(chunk)
    except OSError as err:
        raise ImportFailure(_node_message(err, "read", None), err.errno) from None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", errors="replace")


class ImportFailure(Exception):
    """An import that could not be read; the message is what the agent's comment says."""

    def __init__(self, message: str, code: int | None) -> None:
        super().__init__(message)
        self.code = code
