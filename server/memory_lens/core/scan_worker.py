"""How the scan calls rignore, and the helper process that walks subtrees for a big scan.

`walk` is the one place that asks rignore for a walk: the scan (core/scan.py) uses it in its own
process, and so does the helper, `python -m memory_lens.core.scan_worker RIGNORE_DIR NAME...`,
which core/scan.py starts to walk subtrees beside it. The helpers and the scanning process take
tasks from one pipe (fixed-size records, `task_record`: each read takes exactly one, so no task
goes to two of them and none waits for the scanning process to hand it the next). For each task
the helper writes NUL-terminated records:

- `\\x03` and the task's number;
- `/rel/path`: a memory file, `.geminiignore` or path named as one of the names given with a
  leading `/` (`/.claude`: reported, not whitelisted, so an ignored one stays pruned), relative to
  the subtree (the subtree's own directory is not repeated: the caller saw it when it listed the
  subtrees);
- `\\x02` and a message: a part of the subtree that could not be read and was skipped;
- `\\x01` and a message: the walk of the subtree could not go on (the caller walks it again);

then an empty record. The helper imports nothing but rignore (started with `-S`, it does not
even read the environment's site packages: RIGNORE_DIR is added to its path), and has rignore
yield plain text instead of `pathlib` paths (core/compat.py), so it starts in little more than
the time the interpreter takes.
"""

from __future__ import annotations

import os
import sys

from memory_lens.core import compat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from pathlib import Path
    from typing import BinaryIO

GEMINI_IGNORE = ".geminiignore"
MAX_ERRORS_IN_A_ROW = 10_000  # a walker that only fails from here on is given up


def overrides(names: Iterable[str]) -> list[str]:
    """rignore's overrides: only memory files and .geminiignore files are yielded (directories
    always are), and `.git` is never entered."""
    return sorted(names) + [GEMINI_IGNORE, "!.git/"]


def walk(root: str | Path, names: Iterable[str] | None, **options: object) -> Iterator[Path | OSError]:
    """What rignore yields under ROOT (memory files, .geminiignore files, directories; NAMES None:
    every file), and an
    OSError for each entry it could not read or name (a name that is not UTF-8): the walk goes on
    after one, and gives up after MAX_ERRORS_IN_A_ROW in a row. Symlinks are not followed; hidden
    files count. The ignore files read are the ones agents read (and the Python walker): the
    tree's `.gitignore` files and `.git/info/exclude`, not `.ignore` files or the user's global
    git excludes."""
    import rignore

    walker = iter(rignore.walk(root, ignore_hidden=False, overrides=overrides(names) if names is not None else ["!.git/"], follow_links=False,
                               read_ignore_files=False, read_global_git_ignore=False, **options))
    errors = 0
    while errors < MAX_ERRORS_IN_A_ROW:
        try:
            path = next(walker)
        except StopIteration:
            return
        except OSError as err:  # one entry failed (a path too long to open): the walk goes on
            errors += 1
            yield err
            continue
        except ValueError:  # rignore gives paths as text: a name that is not UTF-8 has none
            errors += 1
            yield OSError(f"a name that is not UTF-8 under {root}")
            continue
        errors = 0
        yield path


def _message(err: BaseException, start: str, root: str) -> bytes:
    """ERR's text, with the paths of a walk from START given under ROOT instead."""
    text = str(err)
    if start != root:
        text = (root + text[len(start):] if text.startswith(start + os.sep) else text).replace(
            f" {start}{os.sep}", f" {root}{os.sep}")
    return text.encode("utf-8", "replace").replace(b"\0", b" ")


def walk_subtree(subtree: bytes, names: frozenset[str], out: BinaryIO, from_inside: bool = False,
                 also: frozenset[str] = frozenset()) -> None:
    """Write SUBTREE's records to OUT, the empty record last (the format is in the docstring).
    FROM_INSIDE: walk from within SUBTREE (this process's working directory moves there), so that
    the system resolves short relative paths instead of long absolute ones, ~10% less time; for
    the helper process only. ALSO: further names reported, though not whitelisted."""
    root = os.fsdecode(subtree)
    start = root
    wanted = names | {GEMINI_IGNORE} | also
    if from_inside:
        try:
            os.chdir(root)
            start = os.curdir
        except OSError as err:
            out.write(b"\x02" + _message(err, root, root) + b"\0\0")
            out.flush()
            return
    prefix = start if start.endswith(os.sep) else start + os.sep
    try:
        for found in walk(start, names):
            if isinstance(found, OSError):
                out.write(b"\x02" + _message(found, start, root) + b"\0")
                continue
            path = str(found)  # from within: "./x/GEMINI.md" (or "x/GEMINI.md" from pathlib)
            if path != start and os.path.basename(path) in wanted:
                rel = path[len(prefix):] if path.startswith(prefix) else path
                out.write(os.fsencode(os.sep + rel) + b"\0")
    except Exception as err:
        out.write(b"\x01" + _message(err, start, root) + b"\0")
    out.write(b"\0")
    out.flush()


RECORD = 1024  # bytes of a task record: no more than PIPE_BUF, so each is written and read whole


def task_record(index: int, subtree: str) -> bytes | None:
    """Task INDEX, the walk of the absolute path SUBTREE, as a record; None when the path is too
    long for one."""
    body = b"%d\0%s\0" % (index, os.fsencode(subtree))
    return body.ljust(RECORD, b"\0") if len(body) <= RECORD else None


def read_task(fd: int) -> tuple[int, str] | None:
    """The next task on the pipe FD, None at its end; ValueError when what was read is not one
    whole record (something read part of one: the pipe is out of step)."""
    record = os.read(fd, RECORD)
    if not record:
        return None
    index, _, rest = record.partition(b"\0")
    path, _, padding = rest.partition(b"\0")
    if len(record) != RECORD or not index.isdigit() or not path.startswith(b"/") or padding.strip(b"\0"):
        raise ValueError("a task record out of step")
    return int(index), os.fsdecode(path)


def serve(names: frozenset[str], stdin: int = 0, out: BinaryIO | None = None, from_inside: bool = False,
          also: frozenset[str] = frozenset()) -> None:
    """Take tasks from the pipe STDIN until it ends or is out of step (other helpers may read the
    same pipe); for each, write its number, then its findings (FROM_INSIDE: see `walk_subtree`)."""
    out = out or sys.stdout.buffer
    while True:
        try:
            task = read_task(stdin)
        except ValueError:
            return
        if task is None:
            return
        index, subtree = task
        out.write(b"\x03%d\0" % index)
        walk_subtree(os.fsencode(subtree), names, out, from_inside, also)


def main(argv: list[str]) -> None:
    rignore_dir, *names = argv
    compat.rignore_yields_text()
    sys.path.append(rignore_dir)
    serve(frozenset(n for n in names if not n.startswith("/")), from_inside=True,
          also=frozenset(n[1:] for n in names if n.startswith("/")))


if __name__ == "__main__":
    main(sys.argv[1:])
