"""Where notes live: the two layouts, the project and global directories.

| layout | project notes | global notes |
|---|---|---|
| `memory-lens` (default) | `<project root>/.memory-lens/notes/` | `<user config dir>/memory-lens/notes/` |
| `aicoder` | `<project root>/.aicoder/memory/` | `~/.config/aicoder/memory/` |

The user config directory is `platformdirs.user_config_dir("memory-lens")` (`~/.config/memory-lens`
on Linux). `$MEMORY_LENS_NOTES_DIR` replaces the global directory in either layout, and
`$MEMORY_LENS_NOTES_LAYOUT` picks the layout; an explicit value (a CLI flag, an LSP setting) wins
over both. In the `aicoder` layout each directory also has an `index.json` kept in step with the
notes. The project root is the one memory files use: the nearest directory with `.git`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Mapping

from memory_lens.core.discovery import Scope
from memory_lens.core.notes.model import NoteInvalidError
from memory_lens.core.notes.naming import INDEX_FILE

ENV_NOTES_DIR = "MEMORY_LENS_NOTES_DIR"
ENV_NOTES_LAYOUT = "MEMORY_LENS_NOTES_LAYOUT"


class Layout(str, Enum):
    """How notes directories are named and kept."""

    MEMORY_LENS = "memory-lens"
    AICODER = "aicoder"

    @property
    def keeps_index(self) -> bool:
        """True when each directory has an `index.json` to keep in step."""
        return self is Layout.AICODER


@dataclass(frozen=True)
class NotesSettings:
    """The layout and the global notes directory."""

    layout: Layout
    global_dir: Path

    def project_dir(self, project_root: Path) -> Path:
        if self.layout is Layout.AICODER:
            return project_root / ".aicoder" / "memory"
        return project_root / ".memory-lens" / "notes"


@dataclass(frozen=True)
class Location:
    """One notes directory: its scope, its path, its layout."""

    scope: Scope
    directory: Path
    layout: Layout

    @property
    def index_file(self) -> Path | None:
        return self.directory / INDEX_FILE if self.layout.keeps_index else None


def parse_layout(value: str | Layout) -> Layout:
    try:
        return Layout(value)
    except ValueError:
        choices = ", ".join(layout.value for layout in Layout)
        raise NoteInvalidError(f"unknown notes layout {value!r}: use one of {choices}") from None


def default_global_dir(layout: Layout) -> Path:
    if layout is Layout.AICODER:
        return Path.home() / ".config" / "aicoder" / "memory"
    import platformdirs

    return Path(platformdirs.user_config_dir("memory-lens", appauthor=False)) / "notes"


def resolve_notes_settings(
    layout: str | Layout | None = None,
    global_dir: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> NotesSettings:
    """Explicit values, then `$MEMORY_LENS_NOTES_LAYOUT` / `$MEMORY_LENS_NOTES_DIR`, then defaults.
    Raises NoteInvalidError for an unknown layout."""
    env = os.environ if environ is None else environ
    if layout is None or layout == "":
        layout = env.get(ENV_NOTES_LAYOUT, "").strip() or Layout.MEMORY_LENS
    chosen = parse_layout(layout)
    raw = os.fspath(global_dir) if global_dir not in (None, "") else env.get(ENV_NOTES_DIR, "").strip()
    if raw:
        if "\0" in raw:
            raise NoteInvalidError(f"not a usable directory: {raw!r}")
        directory = Path(os.path.abspath(os.path.expanduser(raw)))
    else:
        directory = default_global_dir(chosen)
    return NotesSettings(chosen, directory)


def locations(settings: NotesSettings, project_root: Path | None) -> list[Location]:
    """The notes directories in resolution order: the project's (inside a project), then the
    global one."""
    out = []
    if project_root is not None:
        out.append(Location(Scope.PROJECT, settings.project_dir(project_root), settings.layout))
    out.append(Location(Scope.GLOBAL, settings.global_dir, settings.layout))
    return out
