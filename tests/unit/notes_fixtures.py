"""A sandbox for notes unit tests: HOME, the XDG directories and the lock directory under
`tmp_path`, a project with `.git`, and stores over them (never the real user's directories)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import Layout, NotesSettings, NotesStore


class NotesSandbox:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.project = root / "proj"
        (self.project / ".git").mkdir(parents=True)
        self.global_dir = root / "global-notes"
        self.index_dir = root / "index"

    def settings(self, layout: str = "memory-lens", global_dir: Path | None = None) -> NotesSettings:
        return NotesSettings(Layout(layout), global_dir or self.global_dir)

    def store(self, layout: str = "memory-lens", project: bool = True, **options: Any) -> NotesStore:
        options.setdefault("index_dir", self.index_dir)
        settings = self.settings(layout, options.pop("global_dir", None))
        return NotesStore(settings, self.project if project else None, **options)

    def project_dir(self, layout: str = "memory-lens") -> Path:
        return self.settings(layout).project_dir(self.project)

    def write_note(self, directory: Path, fname: str, data: Any) -> Path:
        """A note file written by hand (as a user, git or another tool would)."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / fname
        path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), encoding="utf-8")
        return path


def note_data(name: str, content: str = "text", tags: list[str] | None = None, scope: str = "project") -> dict:
    return {"name": name, "content": content, "tags": tags or [], "created_at": "2025-10-08T03:07:11Z",
            "updated_at": "2025-10-08T03:07:11Z", "scope": scope}


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NotesSandbox:
    for var in ("MEMORY_LENS_NOTES_DIR", "MEMORY_LENS_NOTES_LAYOUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(tmp_path / "locks"))
    return NotesSandbox(tmp_path)


__all__ = ["NotesSandbox", "Scope", "note_data", "sandbox"]
