"""`disk.create_files`, the batch writer of restore and import: a listing of the directory while a
batch's temporary files wait for the flush (another process's `notes list`, a server's background
refresh) leaves them alone, and a name already taken is reported, not overwritten."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.notes import disk


def test_a_listing_during_a_batch_leaves_its_temporary_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = tmp_path / "notes"
    directory.mkdir()
    (directory / "b.json").write_text("already here", encoding="utf-8")
    seen: list[list[str]] = []
    real_sync = getattr(os, "sync", None)

    def listing_meanwhile() -> None:  # another process lists the directory right now
        disk.list_note_files(directory)
        seen.append(sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp")))
        if real_sync is not None:
            real_sync()

    monkeypatch.setattr(os, "sync", listing_meanwhile, raising=False)
    taken = disk.create_files(directory, [("a.json", "A"), ("b.json", "B"), ("c.json", "C")])
    assert taken == ["b.json"]
    assert len(seen) == 1 and len(seen[0]) == 3  # the three temporary files survived the sweep
    assert {p.name: p.read_text(encoding="utf-8") for p in directory.iterdir()} == {
        "a.json": "A", "b.json": "already here", "c.json": "C"}


def test_temporary_files_of_a_killed_batch_are_swept(tmp_path: Path) -> None:
    directory = tmp_path / "notes"
    directory.mkdir()
    (directory / "n.json").write_text("{}", encoding="utf-8")
    left = directory / f".{disk.BATCH_FILE}.ml999999-abcdefgh.tmp"
    left.write_text("half", encoding="utf-8")
    disk.list_note_files(directory)
    assert not left.exists()
