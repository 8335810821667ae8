"""What a reader that is not the user is shown: the read side of docs/security.md.

An agent loads whatever its memory files and `@path` imports name, wherever their links lead. The
CLI and the editor show all of it (the user asked), and `check` reports a `link-outside` finding
where the real path of a memory file or an import leaves the places it belongs to: the project
(the write area of `write_policy`) and the global memory directory.

A client that is not the user — the MCP server's model, whose read-only tools clients often run
without asking — is shown a file's content only when its real path is inside a `ReadArea`: the
client's roots and the global memory directory. Any other file is listed with its path and the
reason, its content withheld.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from memory_lens.core.discovery import find_project_root
from memory_lens.core.files import FileRead, FileStatus, read_memory_file, realpath
from memory_lens.core.imports import IMPORTED, ImportNode
from memory_lens.core.node_paths import project_root_for
from memory_lens.core.write_policy import directory_area, is_inside, project_area

LINK_OUTSIDE = "link-outside"


@dataclass(frozen=True)
class ReadArea:
    """The directories whose files a client may be shown (links resolved)."""

    roots: tuple[Path, ...]
    what: str  # names them in messages

    def withheld(self, path: Path | str) -> str | None:
        """Why the content of existing file PATH is withheld (its real path leaves the area), or None."""
        if not os.path.exists(path) or is_inside(realpath(path), self.roots):
            return None
        return f"{_how(path)}, outside {self.what}; its content is withheld"

    def reader(self, max_bytes: int):
        """`read_memory_file` for a chain's files, refusing those outside the area unread."""

        def read(path: Path) -> FileRead:
            reason = self.withheld(path)
            if reason is not None:
                return FileRead(Path(path), FileStatus.UNUSABLE, reason=reason, real_path=Path(realpath(path)))
            return read_memory_file(path, max_bytes)

        return read


def read_area(roots: Sequence[Path], global_dir: Path, what: str) -> ReadArea:
    """The area of ROOTS (WHAT names them) and the global memory directory."""
    return ReadArea((*roots, global_dir), f"{what} and the global memory directory {global_dir}")


def _how(path: Path | str) -> str:
    """How PATH's real path is reached, for a message."""
    real = realpath(path)
    if os.path.islink(path):
        return f"{path} is a link to {real}"
    if real != os.path.abspath(path):
        return f"{path} resolves through a link to {real}"
    return f"{path}"


@dataclass(frozen=True)
class OutsideRead:
    """A file the agent loads from outside the places it belongs to: where to report it and why."""

    line: int  # 1-based; the file's own mention of an import, or 1 for the file itself
    start: int  # the mention's offset in the file's text (0 for the file itself)
    message: str


def outside_reads(path: Path, imports: Sequence[ImportNode], global_dir: Path,
                  markers: tuple[str, ...], real: Path | None = None) -> list[OutsideRead]:
    """Memory file PATH, and each file its IMPORTS read, whose real path leaves the project of
    PATH's directory (or that directory, outside a project) and the global memory directory GLOBAL_DIR.
    MARKERS (Gemini's `context.memoryBoundaryMarkers`) are named when they widen the import root.
    REAL: PATH's real path, when the caller knows it (a `realpath` costs a few system calls)."""
    linked = str(real or realpath(path)) != os.path.abspath(path)
    if not linked and not any(node.status == IMPORTED for node in imports):
        return []  # a file where it is, inside its own project, that imports nothing
    directory = Path(os.path.abspath(path)).parent
    root = find_project_root(directory)
    area = project_area(root) if root is not None else directory_area(directory)
    roots = (*area.roots, global_dir)
    found: list[OutsideRead] = []
    if linked and not is_inside(path, roots):
        found.append(OutsideRead(1, 0, f"{_how(path)}, outside {area.what}: the agent loads it; "
                                       "`memory-lens mcp` withholds it"))
    inside: dict[Path, bool] = {}  # each imported file's answer, for a file imported from many mentions
    for node in imports:
        leaving = next(_imports_outside(node, roots, inside), None)
        if leaving is None:
            continue
        import_root = project_root_for(str(directory), markers)
        why = (f" (context.memoryBoundaryMarkers {list(markers)} make the import root {import_root})"
               if not is_inside(import_root, roots) else "")
        found.append(OutsideRead(node.line, node.start,
                                 f"@{node.target} imports {realpath(leaving)}, outside {area.what}{why}: "
                                 "the agent loads it; `memory-lens mcp` withholds it"))
    return found


def _imports_outside(node: ImportNode, roots: tuple[Path, ...], inside: dict[Path, bool]):
    """The files NODE and the imports below it read from outside ROOTS (INSIDE: answers so far)."""
    if node.status != IMPORTED or node.path is None:
        return
    if node.path not in inside:
        inside[node.path] = is_inside(node.path, roots)
    if not inside[node.path]:
        yield node.path
        return
    for child in node.children:
        yield from _imports_outside(child, roots, inside)


__all__ = ["LINK_OUTSIDE", "OutsideRead", "ReadArea", "outside_reads", "read_area"]
