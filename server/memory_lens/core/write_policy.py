"""Where Memory Lens may write: the one rule every write of a memory file or a note follows.

A write belongs to an area: the project root for project memory and project notes, the global
memory directory for global memory, the notes directory for global notes. A file of the area is
written through symbolic links (its own, or its directories') only when the final target stays
inside the area. A cloned repository chooses its links, so without this rule its `GEMINI.md`
could point at `~/.bashrc` or `~/.ssh/authorized_keys` and an entry would be written there.

The user can allow writing through such links explicitly, never the repository: the CLI's
`--follow-outside-links`, `MEMORY_LENS_FOLLOW_OUTSIDE_LINKS=1` in the environment, or the
language server's machine-scoped setting `memoryLens.followOutsideLinks`
(`Settings.follow_outside_links`, resolved by core/settings.py).

`check_target` is called by the writer before it creates any directory and again under the
write lock, on the path it is about to replace. See docs/security.md.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from memory_lens.core.files import DEFAULT_MAX_FILE_BYTES

ENV_FOLLOW_OUTSIDE_LINKS = "MEMORY_LENS_FOLLOW_OUTSIDE_LINKS"
DEFAULT_HINT = f"use --follow-outside-links or set {ENV_FOLLOW_OUTSIDE_LINKS}=1 to allow"


class OutsideWriteError(ValueError):
    """A write would land outside its area (the message names the link and its target)."""


@dataclass(frozen=True)
class WriteArea:
    """The directories a write may land in, whether the user allowed leaving them
    (`Settings.follow_outside_links`), and the size past which a file is not rewritten. `hint` ends the refusal message: how the user allows it in
    the front end at hand."""

    roots: tuple[Path, ...]
    what: str
    follow_outside_links: bool = False
    hint: str = DEFAULT_HINT
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES  # a bigger file is not rewritten (`Settings.max_file_bytes`)


def project_area(root: Path, follow_outside_links: bool = False, hint: str = DEFAULT_HINT) -> WriteArea:
    """The area of project memory and project notes: the project root."""
    return WriteArea((Path(root),), f"the project {root}", follow_outside_links, hint)


def global_area(global_dir: Path, follow_outside_links: bool = False, hint: str = DEFAULT_HINT) -> WriteArea:
    """The area of global memory: the global memory directory."""
    return WriteArea((Path(global_dir),), f"the global memory directory {global_dir}", follow_outside_links, hint)


def directory_area(directory: Path, follow_outside_links: bool = False, hint: str = DEFAULT_HINT) -> WriteArea:
    """The area of a file that belongs to no project: its own directory."""
    return WriteArea((Path(directory),), f"its directory {directory}", follow_outside_links, hint)


def _real(path: Path | str) -> str:
    return os.path.realpath(os.path.abspath(os.fspath(path)))


def _within(real: str, roots: Iterable[Path | str]) -> bool:
    for root in roots:
        base = _real(root)
        if real == base or real.startswith(base.rstrip(os.sep) + os.sep):
            return True
    return False


def is_inside(path: Path | str, roots: Iterable[Path | str]) -> bool:
    """True when PATH, all symbolic links resolved, is one of ROOTS (resolved too) or below one."""
    return _within(_real(path), roots)


def check_target(path: Path, area: WriteArea | None) -> Path:
    """The file a write to PATH really changes (symlinks followed), when that is allowed.

    Raises OutsideWriteError when the final target leaves AREA (by default: PATH's own
    directory) and the user has not allowed it."""
    target = Path(_real(path))
    if area is None:
        area = directory_area(Path(os.path.abspath(path)).parent)
    if _within(str(target), area.roots) or area.follow_outside_links:  # resolved once: it may change meanwhile
        return target
    if str(target) == os.path.abspath(path):  # no link at all: the path itself is elsewhere
        raise OutsideWriteError(f"{path} is outside {area.what}; refusing to write there")
    parent = Path(os.path.abspath(path)).parent  # PATH may be a file again by now (a swap race)
    how = "is a link to" if os.path.islink(path) or _real(parent) == str(parent) else "resolves through a link to"
    raise OutsideWriteError(f"{path} {how} {target}, outside {area.what}; "
                            f"refusing to write through it ({area.hint})")


def check_requested_path(path: Path | str, roots: Iterable[Path], what: str) -> Path:
    """PATH, a file a client asked to change (the path of a `file:` URI), when it may be written:
    an absolute path without `..` segments that is inside one of ROOTS (WHAT names them for the
    message) once the links of its directories are resolved. PATH itself may still be a link: the
    writer judges where it leads with `check_target`. Raises OutsideWriteError otherwise."""
    raw = os.fspath(path)
    if not os.path.isabs(raw):
        raise OutsideWriteError(f"{raw} is not an absolute path on this system (a drive-letter path?); "
                                "refusing to write there")
    if ".." in Path(raw).parts:
        raise OutsideWriteError(f"{raw} has '..' segments; refusing to write there")
    if not _within(os.path.join(_real(Path(raw).parent), Path(raw).name), roots):
        raise OutsideWriteError(f"{raw} is outside {what}; refusing to write there")
    return Path(raw)


__all__ = [
    "check_requested_path",
    "DEFAULT_HINT",
    "ENV_FOLLOW_OUTSIDE_LINKS",
    "OutsideWriteError",
    "WriteArea",
    "check_target",
    "directory_area",
    "global_area",
    "is_inside",
    "project_area",
]
