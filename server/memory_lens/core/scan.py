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
import selectors
import stat
import subprocess
import sys
import time
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

from memory_lens.core import scan_worker
from memory_lens.core.cpus import busy_cpus, usable_cpus
from memory_lens.core.scan_worker import GEMINI_IGNORE

if TYPE_CHECKING:
    import pathspec

GIT_IGNORE = ".gitignore"

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


def _excluded(spec: pathspec.GitIgnoreSpec, rel_parts: Sequence[str], is_dir: bool) -> bool:
    """Git semantics: a path is excluded when any parent directory is, or it matches itself."""
    for i in range(1, len(rel_parts)):
        if spec.check_file("/".join(rel_parts[:i]) + "/").include:
            return True
    rel = "/".join(rel_parts) + ("/" if is_dir else "")
    return bool(spec.check_file(rel).include)


def _in_git_repo(directory: Path) -> bool:
    return any(os.path.exists(os.path.join(d, ".git")) for d in (directory, *directory.parents))


def _walk_python(root: Path, names: frozenset[str], also: frozenset[str] = frozenset()) -> tuple[list[Path], list[Path]]:
    """Depth-first scandir walk with gitignore-style pruning (the fallback engine): the memory
    files, and the paths named in ALSO."""
    found: list[Path] = []
    extra: list[Path] = []
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
            if not is_dir and entry.name not in names and entry.name not in also:
                continue
            path = Path(entry.path)
            if any(_excluded(spec, path.relative_to(base).parts, is_dir) for base, spec in local):
                continue
            if entry.name in names:
                found.append(path)  # a directory so named is reported too: it is an unusable memory file
            elif entry.name in also:
                extra.append(path)
            if is_dir:
                stack.append((path, local, git))
    return found, extra


def _rignore_walk(root: Path, names: frozenset[str], **options: object) -> Iterator[Path]:
    """What rignore yields under ROOT (memory files, .geminiignore files, directories), as Paths;
    the parts it cannot read are logged and skipped."""
    for found in scan_worker.walk(root, names, **options):
        if isinstance(found, OSError):
            _skipped(str(found))
        else:
            yield found if isinstance(found, Path) else Path(str(found))


def _walk_rignore(root: Path, names: frozenset[str], parallel: bool = True,
                  also: frozenset[str] = frozenset()) -> tuple[list[Path], list[Path]]:
    """Walk ROOT with rignore: the memory files, and the paths named in ALSO. A big tree is split
    into subtrees (the directories two levels down) walked here and by helper processes at once
    (see `parallel_walk`)."""
    found: list[Path] = []
    extra: list[Path] = []
    gemini_ignores: list[Path] = []

    def take(path: Path) -> None:
        if path.name == GEMINI_IGNORE:
            if not gemini_ignores and parallel:
                _prefetch_pathspec()
            gemini_ignores.append(path)
        elif path.name in names:
            found.append(path)
        elif path.name in also:
            extra.append(path)

    if not parallel:
        for path in _rignore_walk(root, names):
            take(path)
    else:
        subtrees: list[Path] = []
        for path in _rignore_walk(root, names, max_depth=SPLIT_DEPTH):
            take(path)
            if len(path.parts) - len(root.parts) == SPLIT_DEPTH and _is_real_dir(path):
                subtrees.append(path)
        for path in parallel_walk(subtrees, names, also):
            take(path)
    return _drop_gemini_ignored(found, gemini_ignores), extra


def _is_real_dir(path: Path) -> bool:
    """PATH is a directory and not a symlink (False when the system cannot say)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _parent(path: str) -> str:
    """`os.path.dirname` of a path as the walk gives them (no doubled or trailing separator),
    without its generality: the filter below asks for it thousands of times."""
    i = path.rfind(os.sep)
    return path[:i] if i > 0 else path[:i + 1]


def _drop_gemini_ignored(found: list[Path], gemini_ignores: list[Path]) -> list[Path]:
    """FOUND without what the GEMINI_IGNORES exclude: each applies to its own directory's tree,
    and excludes a file when it matches the file or one of the file's directories (git's rule).
    The directories are judged once each, not once per file in them."""
    specs: dict[str, list[pathspec.GitIgnoreSpec]] = {}
    for p in gemini_ignores:
        if spec := _spec(p):
            specs.setdefault(_parent(str(p)), []).append(spec)
    if not specs:
        return found
    # directory -> (excluded itself, the specs that judge its entries: (base directory, spec))
    judged: dict[str, tuple[bool, list[tuple[str, pathspec.GitIgnoreSpec]]]] = {}

    def matches(applying: list[tuple[str, pathspec.GitIgnoreSpec]], path: str, suffix: str) -> bool:
        for base, spec in applying:
            rel = path[len(base):].lstrip(os.sep)
            if spec.match_file((rel if os.sep == "/" else rel.replace(os.sep, "/")) + suffix):
                return True
        return False

    def judge(directory: str) -> tuple[bool, list[tuple[str, pathspec.GitIgnoreSpec]]]:
        chain = []  # (directory, parent): DIRECTORY and its parents not judged yet, from the bottom up
        d = directory
        while d not in judged:
            parent = _parent(d)
            if parent == d:  # the file system's root: nothing above judges it
                judged[d] = (False, [(d, s) for s in specs.get(d, ())])
                break
            chain.append((d, parent))
            d = parent
        for d, parent in reversed(chain):
            excluded, applying = judged[parent]
            excluded = excluded or matches(applying, d, "/")
            own = specs.get(d)
            judged[d] = (excluded, applying + [(d, s) for s in own] if own else applying)
        return judged[directory]

    kept: list[Path] = []
    for p in found:
        s = str(p)
        excluded, applying = judge(_parent(s))
        if not excluded and not matches(applying, s, ""):
            kept.append(p)
    return kept


# Parallel walking ---------------------------------------------------------------------------------
#
# rignore walks on one thread and holds the interpreter lock while it does, so threads cannot
# share a walk. Big trees are split instead, into the subtrees SPLIT_DEPTH levels down, walked one
# at a time by this process and by helper processes (`helper_count()`, `python -m
# memory_lens.core.scan_worker`), all taking the next subtree from one pipe as soon as they are
# done with one: no helper waits for this process to hand it work, however busy the machine. The
# helpers start at once when there are MANY_SUBTREES or more, else when the walk here has taken
# SERIAL_SECONDS and subtrees are left, so small trees never start a process. When other work
# keeps the other cores busy then (`busy_cpus`), a helper would share a core with it and start
# slowly: they start only once the walk here has taken BUSY_SERIAL_SECONDS and subtrees are left
# (on a busy 2-core machine, the 51k-file benchmark tree walks in ~90 ms alone and ~105 ms with a
# helper; the 311k-file one in ~400 ms alone and ~310 ms with one). Every POLL_EVERY entries the
# walk here takes what the helpers found. Once no subtree is left to hand out, this process walks
# the ones helpers are still walking, and keeps whichever walk ends first: a helper on a busy core
# is not waited for. The ignore crate reads the ignore files of a subtree's parents, so every
# subtree is walked exactly as within the whole walk. A subtree whose findings no helper
# delivered (it could not start, died, failed on it, said nothing for HELPER_TIMEOUT_SECONDS) is
# walked here.

SPLIT_DEPTH = 2
SERIAL_SECONDS = 0.04
BUSY_SERIAL_SECONDS = 0.1
MIN_PARALLEL_SUBTREES = 4
MANY_SUBTREES = 48
MAX_HELPERS = 3
POLL_EVERY = 16
HELPER_TIMEOUT_SECONDS = 120.0


def helper_count() -> int:
    """How many helper processes may walk beside this one: one per further core this process may
    run on, at most MAX_HELPERS; none on Windows (where `selectors` cannot wait on pipes)."""
    if os.name == "nt":
        return 0
    return max(0, min(MAX_HELPERS, usable_cpus() - 1))


def helper_command(names: frozenset[str]) -> tuple[list[str], str]:
    """The command line of a helper, and the directory it runs in: the one holding memory_lens,
    which `-m` puts first on the module path (`-E -s -S`: nothing from the environment, the
    user's or the site's packages; rignore's directory comes as an argument)."""
    import rignore

    import memory_lens

    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(memory_lens.__file__)))
    rignore_dir = os.path.dirname(os.path.dirname(os.path.abspath(rignore.__file__)))
    return [sys.executable, "-E", "-s", "-S", "-m", "memory_lens.core.scan_worker", rignore_dir, *sorted(names)], package_dir


def parallel_walk(subtrees: list[Path], names: frozenset[str], also: frozenset[str] = frozenset()) -> list[Path]:
    """Every memory file, .geminiignore file and path named in ALSO in SUBTREES (each walked with
    rignore)."""
    wanted = names | {GEMINI_IGNORE} | also
    found: list[Path] = []
    queue = deque(subtrees)
    started = time.perf_counter()
    crew: _Crew | None = None
    counts: tuple[int, int] | None = None  # helpers the CPUs allow, and those idle cores take: read once

    def look_at_helpers() -> None:
        nonlocal crew, counts
        if crew is not None:
            crew.collect(0)
            return
        walked = time.perf_counter() - started
        if len(queue) < MIN_PARALLEL_SUBTREES or (len(queue) < MANY_SUBTREES and walked < SERIAL_SECONDS):
            return
        if counts is None:
            allowed = helper_count()
            counts = (allowed, max(0, allowed - busy_cpus()) if allowed else 0)
        allowed, idle = counts
        helpers = idle or (allowed if walked >= BUSY_SERIAL_SECONDS else 0)
        if helpers:
            crew = _Crew(list(queue), names, also, helpers)  # from now on it hands out the subtrees left
            queue.clear()

    def walk_here(subtree: Path, given_up: Callable[[], bool] | None = None) -> list[Path] | None:
        """What SUBTREE holds; None as soon as GIVEN_UP says so (a helper delivered it first)."""
        got = []
        for i, path in enumerate(_rignore_walk(subtree, names)):
            if path.name in wanted:
                got.append(path)
            if not i % POLL_EVERY:
                look_at_helpers()
                if given_up is not None and given_up():
                    return None
        return got

    try:
        while queue:
            found += walk_here(queue.popleft()) or ()
        if crew is not None:
            while (subtree := crew.take()) is not None:
                found += walk_here(subtree) or ()
            for subtree in crew.finish(walk_here):
                found += walk_here(subtree) or ()
            found.extend(crew.found)
    finally:
        if crew is not None:
            crew.close()
    return found


class _Helper:
    """A helper process, the task it is walking and what it said about it so far."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.proc = proc
        self.pending = b""
        self.task: int | None = None
        self.records: list[bytes] = []
        self.failed = False


class _Crew:
    """SUBTREES handed out through a pipe to helper processes and to this one (`take`), and what
    the helpers found in them (`collect`)."""

    def __init__(self, subtrees: list[Path], names: frozenset[str], also: frozenset[str] = frozenset(),
                 helpers: int = 1) -> None:
        self.subtrees = subtrees
        self.found: list[Path] = []
        self.done: set[int] = set()  # tasks walked here or whose findings a helper delivered
        self.records = {i: scan_worker.task_record(i, os.path.abspath(s)) for i, s in enumerate(subtrees)}
        self.unsent = deque(i for i, record in self.records.items() if record is not None)
        self.kept = [i for i, record in self.records.items() if record is None]  # too long a path: walked here
        self.helpers: list[_Helper] = []
        self.selector = selectors.DefaultSelector()
        self.tasks_out, self.tasks_in = os.pipe()
        os.set_blocking(self.tasks_in, False)  # the write end only: the readers block
        self._grow_pipe(len(subtrees) * scan_worker.RECORD)
        self._send()
        try:
            command, cwd = helper_command(names | {"/" + n for n in also})  # `/NAME`: reported, not whitelisted
        except ImportError:
            return
        for _ in range(helpers):
            try:
                proc = subprocess.Popen(command, cwd=cwd, stdin=self.tasks_out, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
            except OSError:
                break
            self.helpers.append(_Helper(proc))
            self.selector.register(proc.stdout, selectors.EVENT_READ, self.helpers[-1])

    def _grow_pipe(self, size: int) -> None:
        import fcntl

        try:  # Linux: room for every task at once if the system allows it (up to 1 MiB)
            fcntl.fcntl(self.tasks_in, fcntl.F_SETPIPE_SZ, min(size, 1 << 20))
        except (AttributeError, OSError):
            pass

    def _send(self) -> None:
        """Put the tasks not sent yet into the pipe, as many as it takes; close it after the last."""
        while self.unsent:
            try:
                os.write(self.tasks_in, self.records[self.unsent[0]])
            except BlockingIOError:
                return
            self.unsent.popleft()
        self._close_tasks_in()

    def _close_tasks_in(self) -> None:
        if self.tasks_in >= 0:
            os.close(self.tasks_in)
            self.tasks_in = -1

    def take(self) -> Path | None:
        """The next subtree for this process to walk; None when every task was handed out."""
        self._send()
        if self.kept or self.unsent:
            index = (self.kept or self.unsent).pop()
        else:
            try:
                task = scan_worker.read_task(self.tasks_out)
            except ValueError:  # out of step: the tasks still in the pipe are walked in `finish`
                return None
            if task is None:
                return None
            index = task[0]
        self.done.add(index)
        return self.subtrees[index]

    def collect(self, timeout: float) -> bool:
        """Take what the helpers wrote (waiting at most TIMEOUT seconds): False when none did."""
        self._send()
        events = self.selector.select(timeout)
        for key, _ in events:
            helper: _Helper = key.data
            chunk = os.read(key.fd, 1 << 16)
            if not chunk:  # the helper ended: its unfinished task is walked here
                self.selector.unregister(key.fileobj)
                continue
            *records, helper.pending = (helper.pending + chunk).split(b"\0")
            for record in records:
                self._read(helper, record)
        return bool(events)

    def _read(self, helper: _Helper, record: bytes) -> None:
        kind = record[:1]
        if kind == b"\x03":
            number = record[1:]
            known = number.isdigit() and int(number) < len(self.subtrees)
            helper.task, helper.records, helper.failed = int(number) if known else None, [], False
        elif kind == b"\x02":
            _skipped(record[1:].decode("utf-8", "replace"))
        elif kind == b"\x01":
            helper.failed = True
        elif record:
            helper.records.append(record)
        elif helper.task is not None:  # the end of a task
            if not helper.failed and helper.task not in self.done:
                prefix = str(self.subtrees[helper.task])
                self.found.extend(Path(prefix + os.fsdecode(r)) for r in helper.records)
                self.done.add(helper.task)
            helper.task, helper.records = None, []

    def finish(self, walk: Callable[[Path, Callable[[], bool]], list[Path] | None]) -> list[Path]:
        """Once every task is handed out: until each is done or no helper is left, walk here
        (WALK) a subtree a helper is still walking, keeping whichever of the two ends first. A
        helper slowed down (its core busy with other work, a large subtree) is not waited for,
        and one still walking at the end is stopped (`close`). The subtrees whose findings
        nobody delivered."""
        self._close_tasks_in()
        while len(self.done) < len(self.subtrees) and self.selector.get_map():
            self.collect(0)
            busy = [h.task for h in self.helpers if h.task is not None and h.task not in self.done]
            if busy:
                index = busy[0]
                got = walk(self.subtrees[index], lambda: index in self.done)
                if got is not None and index not in self.done:
                    self.done.add(index)
                    self.found.extend(got)
            elif not self.collect(HELPER_TIMEOUT_SECONDS):  # a task read but not announced yet
                break
        return [subtree for i, subtree in enumerate(self.subtrees) if i not in self.done]

    def close(self) -> None:
        """Stop every helper (they end when the tasks run out; one still busy is killed)."""
        self.selector.close()
        self._close_tasks_in()
        os.close(self.tasks_out)
        for helper in self.helpers:
            try:
                helper.proc.stdout.close()
            except OSError:
                pass
            if helper.proc.poll() is None:
                helper.proc.kill()
            helper.proc.wait()


def rignore_available() -> bool:
    try:
        import rignore  # noqa: F401
    except ImportError:
        return False
    return True


class _Every(frozenset):
    """Every name (the Python walker's test of a name)."""

    def __contains__(self, name: object) -> bool:
        return True


def walk_everything(root: Path, patterns: Iterable[str] | None = None) -> Iterator[Path]:
    """Every directory under ROOT and every file matching one of PATTERNS (gitignore-style
    globs of names, `*.ts`; None: every file), lazily, as the scan walks (ignored paths pruned,
    `.git` never entered), in one process: a caller may stop at any point. Without rignore, every
    path (a superset)."""
    if rignore_available():
        yield from _rignore_walk(root, None if patterns is None else frozenset(patterns))  # type: ignore[arg-type]
    else:
        yield from _walk_python(root, _Every())[0]


def find_memory_files(root: Path, filenames: Iterable[str], engine: str = "auto", parallel: bool = True) -> list[Path]:
    """Every file named like a memory file under ROOT (ignored paths pruned), sorted.
    ENGINE: "rignore", "python" or "auto" (rignore when installed). PARALLEL: whether rignore
    may hand big subtrees to helper processes."""
    return scan_tree(root, filenames, (), engine, parallel)[0]


def scan_tree(root: Path, filenames: Iterable[str], also: Iterable[str] = (), engine: str = "auto",
              parallel: bool = True) -> tuple[list[Path], list[Path]]:
    """`find_memory_files`, and in the same walk every path under ROOT named one of ALSO (files
    or directories, not whitelisted: an ignored one is pruned as any other; `.geminiignore` not
    applied), both sorted."""
    names, more = frozenset(filenames), frozenset(also) - frozenset(filenames)
    if not os.path.isdir(root):
        return [], []
    use_rignore = engine == "rignore" or (engine == "auto" and rignore_available())
    found, extra = _walk_rignore(root, names, parallel, more) if use_rignore else _walk_python(root, names, more)
    # a path can be seen twice at a split
    return sorted(set(found)), sorted(set(extra))
