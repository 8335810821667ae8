"""Where notes live: the two layouts, the project and global directories.

| layout | project notes | global notes |
|---|---|---|
| `memory-lens` (default) | `<project root>/.memory-lens/notes/` | `<user config dir>/memory-lens/notes/` |
| `aicoder` | `<project root>/.aicoder/memory/` | `~/.config/aicoder/memory/` |

The user config directory is `platformdirs.user_config_dir("memory-lens")` (`~/.config/memory-lens`
on Linux). `Settings.notes_dir` (`--notes-dir`, `$MEMORY_LENS_NOTES_DIR`, an absolute path)
replaces the global directory in either layout, and `Settings.notes_layout` (`--layout`,
`$MEMORY_LENS_NOTES_LAYOUT`) picks the layout; core/settings.py resolves both. In the `aicoder` layout each directory also has an `index.json` kept in step with the
notes. The project root is the one memory files use: the nearest directory with `.git`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from memory_lens.core.discovery import Scope
from memory_lens.core.notes.naming import INDEX_FILE
from memory_lens.core.settings import Settings


class Layout(str, Enum):
    """How notes directories are named and kept."""

    MEMORY_LENS = "memory-lens"
    AICODER = "aicoder"  # each directory has an `index.json` to keep in step


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
        return self.directory / INDEX_FILE if self.layout is Layout.AICODER else None


def default_global_dir(layout: Layout) -> Path:
    if layout is Layout.AICODER:
        return Path.home() / ".config" / "aicoder" / "memory"
    import platformdirs

    return Path(platformdirs.user_config_dir("memory-lens", appauthor=False)) / "notes"


def notes_settings(settings: Settings) -> NotesSettings:
    """The layout and global notes directory SETTINGS give (the directory: the layout's own
    when none is set)."""
    layout = Layout(settings.notes_layout)
    return NotesSettings(layout, settings.notes_dir or default_global_dir(layout))


def locations(settings: NotesSettings, project_root: Path | None) -> list[Location]:
    """The notes directories in resolution order: the project's (inside a project), then the
    global one."""
    out = []
    if project_root is not None:
        out.append(Location(Scope.PROJECT, settings.project_dir(project_root), settings.layout))
    out.append(Location(Scope.GLOBAL, settings.global_dir, settings.layout))
    return out
