"""Which memory files apply to a directory: the target, the project root and the chain.

The chain is what Gemini CLI 0.61.0 looks for (`getGlobalMemoryPaths`,
`getEnvironmentMemoryPaths`): the global files first, then every memory file name in each
directory from the project root down to the target directory; without a project root, the
target directory alone. The walk up from the target stops at the global memory directory. The
candidates are planned root first; `merge.load_sources` puts the project files that exist in
Gemini's order (a string sort of their paths).
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Callable

from memory_lens.core.files import realpath
from memory_lens.core.settings import Settings

GIT_MARKER = ".git"


class Scope(str, Enum):
    """Where a memory file sits: the user's global directory or a project."""

    GLOBAL = "global"
    PROJECT = "project"


class TargetError(ValueError):
    """The path memory was asked for cannot be used (the message says what to do)."""


@dataclass(frozen=True)
class Candidate:
    """A path where a memory file may be, and the scope it would have."""

    path: Path
    scope: Scope


@dataclass(frozen=True)
class ChainPlan:
    """The candidate files for one target directory: the global ones, then the project ones root first."""

    target_dir: Path
    project_root: Path | None
    candidates: tuple[Candidate, ...]


def resolve_target(path: str | os.PathLike[str] | None = None, *, nearest_existing: bool = False) -> Path:
    """The directory memory is loaded for, the one rule every front end uses: PATH when it is a
    directory (a link to one means the real directory), else the directory PATH is in, symlinks
    resolved. A file that is a symlink counts where the link is, as an agent working in that
    directory loads it there. Default: the current directory.

    A PATH that does not exist (or cannot be looked at) is a TargetError saying what to do;
    with NEAREST_EXISTING (an editor's document, which may not be saved yet) it means the
    nearest existing directory above it instead. A PATH the system cannot take at all (a NUL
    byte, a name too long) is a TargetError either way."""
    try:
        raw = os.getcwd() if path is None or str(path) == "" else os.path.expanduser(os.fspath(path))
    except FileNotFoundError:
        raise TargetError("the current directory no longer exists; cd to an existing directory "
                          "or give a PATH") from None
    try:
        st = os.lstat(raw)
        if stat.S_ISLNK(st.st_mode):
            st = os.stat(raw)
    except ValueError:  # a NUL byte
        raise TargetError(f"{os.fspath(Path(raw))!r}: not a valid path; give an existing file or directory") from None
    except OSError as err:
        if nearest_existing and err.errno != errno.ENAMETOOLONG:
            return nearest_existing_dir(Path(os.path.abspath(raw)).parent)
        raise _target_error(Path(raw), err) from None
    # Strings, one Path at the end: this runs for every `memory/effective`.
    directory = raw if stat.S_ISDIR(st.st_mode) else os.path.dirname(os.path.abspath(raw))
    return Path(realpath(directory))


def _target_error(raw: Path, err: OSError) -> TargetError:
    if isinstance(err, (FileNotFoundError, NotADirectoryError)):
        if os.path.islink(raw):
            return TargetError(f"{raw}: a symlink to a missing target; give an existing file or directory")
        return TargetError(f"{raw}: no such file or directory; give an existing file or directory")
    if isinstance(err, PermissionError):
        return TargetError(f"{raw}: permission denied; give a path you are allowed to read")
    return TargetError(f"{raw}: {err.strerror or err}; give an existing file or directory")


def nearest_existing_dir(directory: Path) -> Path:
    """DIRECTORY, symlinks resolved, or its nearest ancestor that is an existing directory."""
    found = Path(realpath(directory))
    while not found.is_dir() and found != found.parent:
        found = found.parent
    return found


def document_target(path: Path) -> Path | None:
    """`resolve_target(PATH, nearest_existing=True)` for an editor's document; None when the
    system cannot take PATH at all (the language server then answers as for a non-file URI)."""
    try:
        return resolve_target(path, nearest_existing=True)
    except TargetError:
        return None


def has_git_marker(directory: str | os.PathLike[str]) -> bool:
    """True when DIRECTORY holds `.git` (a directory, or a file as in worktrees and submodules)."""
    return os.path.exists(os.path.join(directory, GIT_MARKER))


def has_marker(directory: str | os.PathLike[str], markers: tuple[str, ...] = (GIT_MARKER,)) -> bool:
    """True when DIRECTORY holds one of MARKERS (Gemini's `context.memoryBoundaryMarkers`; a
    marker that is absolute or has `..` in it is skipped, as Gemini skips it)."""
    return any(os.path.exists(os.path.join(directory, m)) for m in markers
               if not os.path.isabs(m) and ".." not in m)


def find_project_root(target_dir: Path, is_root: Callable[[str], bool] = has_git_marker,
                      known: dict[str, Path | None] | None = None) -> Path | None:
    """The nearest ancestor-or-self of TARGET_DIR holding a `.git` marker, else None. IS_ROOT
    is asked about each directory as a string (the walk makes no `Path` per level: it runs
    for every `memory/effective`).

    KNOWN: answers already found with the same IS_ROOT, by directory string (for one pass over
    many directories of a tree, which share most of their ancestors): the walk up stops at the
    first directory it holds, and the answer of every directory walked is added to it."""
    walked: list[str] = []
    root: Path | None = None
    directory = os.fspath(target_dir)
    while True:
        if known is not None and directory in known:
            root = known[directory]
            break
        walked.append(directory)
        if is_root(directory):
            root = Path(directory)
            break
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    if known is not None:
        known.update((directory, root) for directory in walked)
    return root


def local_dirs(target_dir: Path, project_root: Path | None, global_dir: Path | None = None) -> list[Path]:
    """The directories whose memory files apply, root first: from PROJECT_ROOT down to
    TARGET_DIR; TARGET_DIR alone without a root (or with one that is not above it), as Gemini
    CLI's `findUpwardGeminiFiles` stops at the working directory when no root is found. The walk
    up ends at GLOBAL_DIR: it and the directories above it are never project directories."""
    dirs: list[Path] = []
    for directory in (target_dir, *target_dir.parents):
        if directory == global_dir:
            break
        dirs.append(directory)
        if project_root is None or directory == project_root:
            break
    else:  # the root is not above the target: the target alone
        dirs = [target_dir]
    return dirs[::-1]


def plan_chain(
    target_dir: Path, settings: Settings, is_root: Callable[[Path], bool] = has_git_marker
) -> ChainPlan:
    """Every candidate memory path for TARGET_DIR (already resolved): global first, then root first."""
    return chain_for_root(target_dir, find_project_root(target_dir, is_root), settings)


def chain_for_root(target_dir: Path, project_root: Path | None, settings: Settings,
                   plans: dict | None = None) -> ChainPlan:
    """The chain plan for TARGET_DIR once its project root (or None) is known.

    PLANS: a dict that keeps the plans made (for one pass over many directories of a tree). A
    directory strictly below its root, and not the global directory, has its parent's plan
    plus its own candidates (`local_dirs` walks up through the parent the same way): a plan is
    then made from the nearest ancestor already planned, or the root, not from scratch."""
    if plans is None or project_root is None or not _under(str(target_dir), str(project_root)):
        return _plan_from_scratch(target_dir, project_root, settings)
    names, global_dir = settings.filenames, settings.global_dir
    below: list[Path] = []  # the directories to plan, deepest first
    directory = target_dir
    while True:
        known = plans.get((directory, project_root, names, global_dir))
        if known is not None:
            break
        if directory == project_root or directory == global_dir:
            known = plans[directory, project_root, names, global_dir] = _plan_from_scratch(
                directory, project_root, settings)
            break
        below.append(directory)
        directory = directory.parent
    for directory in reversed(below):
        known = plans[directory, project_root, names, global_dir] = ChainPlan(
            target_dir=directory, project_root=project_root,
            candidates=known.candidates + tuple(Candidate(directory / name, Scope.PROJECT) for name in names))
    return known


def _under(path: str, directory: str) -> bool:
    """Whether PATH is DIRECTORY or below it, as written (a spelling that differs only in case
    on a system that ignores it says no: the caller then takes the slower, general way)."""
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _plan_from_scratch(target_dir: Path, project_root: Path | None, settings: Settings) -> ChainPlan:
    cands = [Candidate(p, Scope.GLOBAL) for p in settings.global_files()]
    for directory in local_dirs(target_dir, project_root, settings.global_dir):
        cands.extend(Candidate(directory / name, Scope.PROJECT) for name in settings.filenames)
    return ChainPlan(target_dir=target_dir, project_root=project_root, candidates=tuple(cands))
