"""Finding every memory file under a directory tree, the way agents' downward discovery does.

Ignored directories are pruned: nested `.gitignore` files (inside a git repository, like git
itself), `.git/info/exclude`, and `.geminiignore` files (anywhere). The `.git` directory is never
entered and symlinked directories are not followed. The walk uses the Rust `ignore` crate through
`rignore` when it is installed, and a pure-Python walker with `pathspec` otherwise; both give the
same answer.

A directory the system cannot open (a path longer than PATH_MAX, say) is skipped with one logged
warning, and the walk goes on with the rest of the tree.
"""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    import pathspec

GEMINI_IGNORE = ".geminiignore"
GIT_IGNORE = ".gitignore"
MAX_ERRORS_IN_A_ROW = 10_000  # a walker that only fails from here on is given up

log = logging.getLogger("memory_lens.scan")
_warned: set[str] = set()


def _skipped(reason: str) -> None:
    """Log, once per process for each REASON, that part of a walk was skipped."""
    if reason in _warned:
        return
    if len(_warned) < 10_000:
        _warned.add(reason)
    if len(reason) > 400:  # a path past PATH_MAX is thousands of characters long
        reason = f"{reason[:150]}…{reason[-150:]}"
    log.warning("skipped part of the workspace that cannot be read: %s", reason.replace("\n", " "))


_prefetching: list[object] = []


def _prefetch_pathspec() -> None:
    """Import pathspec (~70 ms) in the background, while the walk goes on: .geminiignore files
    were found and will need it."""
    import sys
    import threading

    if "pathspec" not in sys.modules and not _prefetching:
        thread = threading.Thread(target=__import__, args=("pathspec",), name="memory-lens-import", daemon=True)
        _prefetching.append(thread)
        thread.start()


def _spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    import pathspec  # here, not at the top: it takes a while to import and is rarely needed

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a malformed pattern: ignore the file rather than fail the scan
        return None
    return spec if spec.patterns else None


def _excluded(spec: pathspec.GitIgnoreSpec, rel_parts: Sequence[str], is_dir: bool,
              memo: dict[tuple[int, str], bool] | None = None) -> bool:
    """Git semantics: a path is excluded when any parent directory is, or it matches itself.
    MEMO keeps the verdicts on directories across calls (many paths share parents)."""
    for i in range(1, len(rel_parts)):
        rel_dir = "/".join(rel_parts[:i]) + "/"
        key = (id(spec), rel_dir)
        hit = memo.get(key) if memo is not None else None
        if hit is None:
            hit = bool(spec.check_file(rel_dir).include)
            if memo is not None:
                memo[key] = hit
        if hit:
            return True
    rel = "/".join(rel_parts) + ("/" if is_dir else "")
    return bool(spec.check_file(rel).include)


def _in_git_repo(directory: Path) -> bool:
    return any(os.path.exists(os.path.join(d, ".git")) for d in (directory, *directory.parents))


def _walk_python(root: Path, names: frozenset[str]) -> list[Path]:
    """Depth-first scandir walk with gitignore-style pruning (the fallback engine)."""
    found: list[Path] = []
    in_git = _in_git_repo(root)
    # Each frame: (directory, list of (base dir, spec) in effect, whether inside a git repo)
    stack: list[tuple[Path, list[tuple[Path, pathspec.GitIgnoreSpec]], bool]] = [(root, [], in_git)]
    while stack:
        directory, specs, git = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError as err:
            _skipped(f"{directory}: {err.strerror or err}")
            continue
        entry_names = {e.name for e in entries}
        git = git or ".git" in entry_names
        local = list(specs)
        if git and GIT_IGNORE in entry_names:
            spec = _spec(directory / GIT_IGNORE)
            if spec:
                local.append((directory, spec))
        if ".git" in entry_names:
            spec = _spec(directory / ".git" / "info" / "exclude")
            if spec:
                local.append((directory, spec))
        if GEMINI_IGNORE in entry_names:
            spec = _spec(directory / GEMINI_IGNORE)
            if spec:
                local.append((directory, spec))
        for entry in entries:
            if entry.name == ".git":
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir and entry.name not in names:
                continue
            path = Path(entry.path)
            if any(_excluded(spec, path.relative_to(base).parts, is_dir) for base, spec in local):
                continue
            if entry.name in names:
                found.append(path)  # a directory so named is reported too: it is an unusable memory file
            if is_dir:
                stack.append((path, local, git))
    return found


def _overrides(names: frozenset[str]) -> list[str]:
    # Only memory files and .geminiignore files are yielded (directories always are).
    return sorted(names) + [GEMINI_IGNORE, "!.git/"]


def _rignore_walk(root: Path, names: frozenset[str], **options: object) -> Iterable[Path]:
    """What rignore yields under ROOT (memory files, .geminiignore files, directories), as Paths."""
    import rignore

    walker = iter(rignore.walk(root, ignore_hidden=False, overrides=_overrides(names), follow_links=False, **options))
    errors = 0
    while errors < MAX_ERRORS_IN_A_ROW:
        try:
            raw = next(walker)
        except StopIteration:
            return
        except OSError as err:  # one entry failed (a path too long to open): the walk goes on
            errors += 1
            _skipped(str(err))
            continue
        errors = 0
        yield raw if isinstance(raw, Path) else Path(str(raw))


def _walk_rignore(root: Path, names: frozenset[str], parallel: bool = True) -> list[Path]:
    """Walk ROOT with rignore. A big tree is split into subtrees (the directories two levels
    down) walked by helper processes in parallel (see `parallel_walk`); a small one, or one
    where helpers cannot start, is walked here."""
    found: list[Path] = []
    gemini_ignores: list[Path] = []

    def take(path: Path) -> None:
        if path.name == GEMINI_IGNORE:
            if not gemini_ignores and parallel:
                _prefetch_pathspec()
            gemini_ignores.append(path)
        elif path.name in names:
            found.append(path)

    if not parallel:
        for path in _rignore_walk(root, names):
            take(path)
    else:
        subtrees: list[Path] = []
        for path in _rignore_walk(root, names, max_depth=SPLIT_DEPTH):
            take(path)
            if len(path.parts) - len(root.parts) == SPLIT_DEPTH and _is_real_dir(path):
                subtrees.append(path)
        for path in parallel_walk(subtrees, names):
            take(path)
    return _drop_gemini_ignored(found, gemini_ignores)


def _is_real_dir(path: Path) -> bool:
    """PATH is a directory and not a symlink (False when the system cannot say)."""
    try:
        return path.is_dir() and not path.is_symlink()
    except OSError:  # ENAMETOOLONG is not among the errors pathlib swallows
        return False


def _drop_gemini_ignored(found: list[Path], gemini_ignores: list[Path]) -> list[Path]:
    """FOUND without what the GEMINI_IGNORES exclude (each applies to its own directory's tree)."""
    if not gemini_ignores:
        return found
    specs: dict[str, list[pathspec.GitIgnoreSpec]] = {}
    for p in gemini_ignores:
        if spec := _spec(p):
            specs.setdefault(os.path.dirname(str(p)), []).append(spec)
    if not specs:
        return found
    memo: dict[tuple[int, str], bool] = {}  # (spec, directory relative to it) -> excluded

    # Only the .geminiignore files of a path's own ancestors can exclude it.
    kept: list[Path] = []
    for p in found:
        s = str(p)
        d = os.path.dirname(s)
        drop = False
        while not drop:
            if d in specs:
                rel_parts = s[len(d):].lstrip(os.sep).split(os.sep)
                drop = any(_excluded(spec, rel_parts, False, memo) for spec in specs[d])
            parent = os.path.dirname(d)
            if parent == d:
                break
            d = parent
        if not drop:
            kept.append(p)
    return kept


# Parallel walking ---------------------------------------------------------------------------------
#
# rignore walks on one thread and holds the interpreter lock while it does, so threads cannot
# share a walk. Big trees are split instead, into the subtrees SPLIT_DEPTH levels down. With
# MANY_SUBTREES or more, helper processes (`helper_count()`) walk them at once, each taking the
# next subtree as soon as it is done with one; with fewer, they are walked here until
# SERIAL_SECONDS have passed, and the helpers take what is left. The ignore crate reads the
# ignore files of a subtree's parents, so every subtree is walked exactly as within the whole
# walk. Small trees never start a process. Anything going wrong with a helper (it cannot start,
# dies, fails on a subtree) sends its subtrees back to be walked here.

SPLIT_DEPTH = 2
SERIAL_SECONDS = 0.04
MIN_PARALLEL_SUBTREES = 4
MANY_SUBTREES = 48
HELPER_TIMEOUT_SECONDS = 120.0  # with no answer from any busy helper for this long, walk here

# A helper reads NUL-terminated subtree paths on stdin; for each it writes the NUL-terminated
# paths it finds ("\x02" and the error for a part it skipped), then an empty record (or "\x01" and
# the error, then the empty record, when the walk could not go on).
_HELPER = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import rignore
names = set(json.loads(sys.argv[2]))
overrides = json.loads(sys.argv[3])
MAX_ERRORS_IN_A_ROW = int(sys.argv[4])
out = sys.stdout.buffer
pending = b""
while True:
    chunk = os.read(0, 65536)
    if not chunk:
        break
    pending += chunk
    *tasks, pending = pending.split(b"\0")
    for task in tasks:
        try:
            walker = iter(rignore.walk(os.fsdecode(task), ignore_hidden=False, overrides=overrides, follow_links=False))
            errors = 0
            while errors < MAX_ERRORS_IN_A_ROW:
                try:
                    p = next(walker)
                except StopIteration:
                    break
                except OSError as err:
                    errors += 1
                    out.write(b"\x02" + str(err).encode("utf-8", "replace").replace(b"\0", b" ") + b"\0")
                    continue
                errors = 0
                if os.path.basename(str(p)) in names:
                    out.write(os.fsencode(str(p)) + b"\0")
        except Exception as err:
            out.write(b"\x01" + str(err).encode("utf-8", "replace").replace(b"\0", b" ") + b"\0")
        out.write(b"\0")
        out.flush()
"""


def helper_count() -> int:
    """How many helper processes to use: two on a machine with two cores or more; none on
    Windows, where pipes cannot be waited on with `selectors`."""
    return 1 if os.name == "nt" else min(2, os.cpu_count() or 1)


def parallel_walk(subtrees: list[Path], names: frozenset[str]) -> list[Path]:
    """Every memory file and .geminiignore file in SUBTREES (each walked with rignore)."""
    import time

    wanted = names | {GEMINI_IGNORE}
    found: list[Path] = []
    queue = list(reversed(subtrees))  # popped from the end: in order

    def walk_here(subtree: Path) -> None:
        found.extend(p for p in _rignore_walk(subtree, names) if p.name in wanted)

    started = time.perf_counter()

    def go_parallel() -> bool:
        # Many subtrees: a big tree, surely; otherwise see how long the first ones take.
        if helper_count() < 2 or len(queue) < MIN_PARALLEL_SUBTREES:
            return False
        return len(queue) >= MANY_SUBTREES or time.perf_counter() - started >= SERIAL_SECONDS

    while queue and not go_parallel():
        walk_here(queue.pop())
    if queue:
        import rignore

        rignore_dir = os.path.dirname(os.path.dirname(os.path.abspath(rignore.__file__)))
        helped, left = _walk_in_helpers(queue, wanted, _overrides(names), rignore_dir)
        found.extend(helped)
        for subtree in left:
            walk_here(subtree)
    return found


class _Helper:
    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.buffer = b""
        self.current: Path | None = None
        self.records: list[Path] = []
        self.failed = False


def _walk_in_helpers(queue: list[Path], wanted: frozenset[str], overrides: list[str],
                     rignore_dir: str) -> tuple[list[Path], list[Path]]:
    """Walk the subtrees of QUEUE (taken from the end) in helper processes: what they found, and
    the subtrees left for the caller to walk (all of them when no helper could start)."""
    import json
    import selectors
    import sys

    found: list[Path] = []
    left: list[Path] = []
    helpers: list[_Helper] = []
    selector = selectors.DefaultSelector()

    def assign(h: _Helper) -> None:
        h.current = queue.pop() if queue else None
        try:
            if h.current is None:
                h.proc.stdin.close()
            else:
                h.proc.stdin.write(os.fsencode(str(h.current)) + b"\0")
                h.proc.stdin.flush()
        except OSError:  # the helper is gone; its subtree is walked by the caller
            if h.current is not None:
                left.append(h.current)
                h.current = None

    try:
        if sys.executable:
            for _ in range(helper_count()):
                try:
                    proc = subprocess.Popen(
                        [sys.executable, "-I", "-S", "-c", _HELPER, rignore_dir,
                         json.dumps(sorted(wanted)), json.dumps(overrides), str(MAX_ERRORS_IN_A_ROW)],
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                except OSError:
                    break
                helpers.append(_Helper(proc))
        for h in helpers:
            selector.register(h.proc.stdout, selectors.EVENT_READ, h)
            assign(h)
        while any(h.current is not None for h in helpers):
            events = selector.select(timeout=HELPER_TIMEOUT_SECONDS)
            if not events:
                break
            for key, _ in events:
                h = key.data
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:  # the helper ended (crashed?): its subtree is walked by the caller
                    selector.unregister(key.fileobj)
                    if h.current is not None:
                        left.append(h.current)
                        h.current = None
                    continue
                *records, h.buffer = (h.buffer + chunk).split(b"\0")
                for record in records:
                    if record:
                        if record[:1] == b"\x01":
                            h.failed = True
                        elif record[:1] == b"\x02":
                            _skipped(record[1:].decode("utf-8", "replace"))
                        else:
                            h.records.append(Path(os.fsdecode(record)))
                        continue
                    if h.current is not None:  # the end of a subtree
                        if h.failed:
                            left.append(h.current)
                        else:
                            found.extend(h.records)
                    h.records, h.failed = [], False
                    assign(h)
    finally:
        left.extend(h.current for h in helpers if h.current is not None)
        left.extend(reversed(queue))
        queue.clear()
        selector.close()
        for h in helpers:
            for stream in (h.proc.stdin, h.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            if h.proc.poll() is None:
                h.proc.kill()
            h.proc.wait()
    return found, left


def rignore_available() -> bool:
    try:
        import rignore  # noqa: F401
    except ImportError:
        return False
    return True


def find_memory_files(root: Path, filenames: Iterable[str], engine: str = "auto", parallel: bool = True) -> list[Path]:
    """Every file named like a memory file under ROOT (ignored paths pruned), sorted.
    ENGINE: "rignore", "python" or "auto" (rignore when installed). PARALLEL: whether rignore
    may hand big subtrees to helper processes."""
    names = frozenset(filenames)
    if not os.path.isdir(root):
        return []
    use_rignore = engine == "rignore" or (engine == "auto" and rignore_available())
    found = _walk_rignore(root, names, parallel) if use_rignore else _walk_python(root, names)
    return sorted(set(found))  # a directory named like a memory file can be seen twice at a split
