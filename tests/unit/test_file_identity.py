"""memory_lens.core.file_identity: one definition of "the same file, unchanged" for the server's
caches and watcher and the guarded replace."""

from __future__ import annotations

import os
from pathlib import Path

from memory_lens.core.file_identity import NOTHING, file_identity, quick_identity, stat_identity


def test_file_identity_changes_with_the_file(tmp_path: Path) -> None:
    path = tmp_path / "GEMINI.md"
    path.write_text("- one\n", encoding="utf-8")
    assert file_identity(tmp_path / "missing.md") is None
    first = file_identity(path)
    assert first is not None and first == file_identity(path) == stat_identity(os.stat(path))
    path.write_text("- changed\n", encoding="utf-8")
    assert file_identity(path) != first


def test_a_file_replaced_by_rename_is_another_file(tmp_path: Path) -> None:
    path, other = tmp_path / "GEMINI.md", tmp_path / "new.md"
    path.write_text("- same\n", encoding="utf-8")
    other.write_text("- same\n", encoding="utf-8")
    before = file_identity(path)
    os.replace(other, path)
    assert file_identity(path) != before


def test_quick_identity_tells_nothing_from_a_dangling_link(tmp_path: Path) -> None:
    assert quick_identity(tmp_path / "missing.md") is NOTHING
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    assert quick_identity(tmp_path / "dangling.md") is None
    assert file_identity(tmp_path / "dangling.md") is None


def test_quick_identity_follows_links_as_file_identity_does(tmp_path: Path) -> None:
    target = tmp_path / "real.md"
    target.write_text("- x\n", encoding="utf-8")
    (tmp_path / "link.md").symlink_to(target)
    assert quick_identity(tmp_path / "link.md") == file_identity(tmp_path / "link.md") == file_identity(target)
    assert quick_identity(target) == file_identity(target)
