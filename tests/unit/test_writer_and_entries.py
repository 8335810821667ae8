"""memory_lens.core.writer and memory_lens.core.entries: safe writes, save, list and remove."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.discovery import Scope
from memory_lens.core.edit import EmptyEntryError
from memory_lens.core.entries import (
    EntryNotFoundError,
    NoProjectError,
    list_entries,
    remove_entry,
    remove_entry_at,
    resolve_scope,
    save_entry,
)
from memory_lens.core.merge import load_memory
from memory_lens.core.settings import Settings
from memory_lens.core.writer import MemoryFileError, lock_dir, update_memory_file

H = "## Gemini Added Memories"


@pytest.fixture
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = Path(os.path.realpath(tmp_path))
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(root / "locks"))
    (root / "home").mkdir()
    return root


def append(suffix: str):
    return lambda text: (text + suffix, text)


# update_memory_file ----------------------------------------------------------------------------------


def test_creates_the_file_and_its_parents(base: Path) -> None:
    target = base / "a" / "b" / "GEMINI.md"
    assert update_memory_file(target, append("x")) == ""
    assert target.read_text() == "x"


def test_missing_file_with_create_false(base: Path) -> None:
    with pytest.raises(MemoryFileError, match="does not exist"):
        update_memory_file(base / "GEMINI.md", append("x"), create=False)
    assert not (base / "GEMINI.md").exists()


def test_no_change_leaves_the_file_alone(base: Path) -> None:
    p = base / "GEMINI.md"
    p.write_text("same")
    before = os.stat(p)
    assert update_memory_file(p, lambda text: (None, "r")) == "r"
    assert update_memory_file(p, lambda text: (text, "r")) == "r"
    after = os.stat(p)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


@pytest.mark.parametrize("content", [b"\xff", b"a\x00"])
def test_unusable_file_is_refused_and_untouched(base: Path, content: bytes) -> None:
    p = base / "GEMINI.md"
    p.write_bytes(content)
    with pytest.raises(MemoryFileError, match="fix or remove it"):
        update_memory_file(p, append("x"))
    assert p.read_bytes() == content


def test_directory_and_dangling_link_are_refused(base: Path) -> None:
    (base / "dir.md").mkdir()
    os.symlink("nowhere", base / "dangling.md")
    for name in ("dir.md", "dangling.md"):
        with pytest.raises(MemoryFileError):
            update_memory_file(base / name, append("x"))
    assert os.readlink(base / "dangling.md") == "nowhere"
    assert not (base / "nowhere").exists()


def test_symlink_is_written_through(base: Path) -> None:
    (base / "real").mkdir()
    (base / "real" / "target.md").write_text("a")
    os.symlink("real/target.md", base / "link.md")
    update_memory_file(base / "link.md", append("b"))
    assert os.readlink(base / "link.md") == "real/target.md"
    assert (base / "real" / "target.md").read_text() == "ab"


def test_bom_and_mode_are_kept(base: Path) -> None:
    p = base / "GEMINI.md"
    p.write_bytes(b"\xef\xbb\xbfa")
    p.chmod(0o640)
    assert update_memory_file(p, append("b")) == "a"  # the change sees the text without BOM
    assert p.read_bytes() == b"\xef\xbb\xbfab"
    assert p.stat().st_mode & 0o777 == 0o640


def test_no_temporary_files_are_left(base: Path) -> None:
    p = base / "GEMINI.md"
    update_memory_file(p, append("x"))
    update_memory_file(p, append("y"))
    assert sorted(os.listdir(base)) == ["GEMINI.md", "home", "locks"]


def test_a_change_made_by_another_program_is_not_lost(base: Path) -> None:
    """If the file changes between the read and the write, the change is computed again."""
    p = base / "GEMINI.md"
    p.write_text("one\n")
    seen = []

    def change(text: str) -> tuple[str, None]:
        seen.append(text)
        if len(seen) == 1:
            p.write_text("sneaked in\none\n")  # another writer, ignoring the lock
        return text + "mine\n", None

    update_memory_file(p, change)
    assert seen == ["one\n", "sneaked in\none\n"]
    assert p.read_text() == "sneaked in\none\nmine\n"


def test_lock_dir_from_the_environment(base: Path) -> None:
    assert lock_dir() == base / "locks"
    assert (base / "locks").is_dir()


def test_lock_files_stay_out_of_the_repository(base: Path) -> None:
    project = base / "p"
    (project / ".git").mkdir(parents=True)
    update_memory_file(project / "GEMINI.md", append("x"))
    assert sorted(os.listdir(project)) == [".git", "GEMINI.md"]
    assert any(name.endswith(".lock") for name in os.listdir(base / "locks"))


# save_entry, list_entries, remove_entry --------------------------------------------------------------


@pytest.fixture
def project(base: Path) -> tuple[Path, Settings]:
    p = base / "home" / "p"
    (p / ".git").mkdir(parents=True)
    (p / "src").mkdir()
    return p, Settings(global_dir=base / "home" / ".gemini")


def test_resolve_scope(project: tuple[Path, Settings], base: Path) -> None:
    p, _ = project
    assert resolve_scope(None, p / "src") == (Scope.PROJECT, p)
    assert resolve_scope("global", p / "src") == (Scope.GLOBAL, p)
    assert resolve_scope(None, base / "home") == (Scope.GLOBAL, None)
    with pytest.raises(NoProjectError, match="not inside a project"):
        resolve_scope(Scope.PROJECT, base / "home")


def test_save_entry_results(project: tuple[Path, Settings]) -> None:
    p, settings = project
    first = save_entry("# Use pnpm", p / "src", settings)
    assert (first.path, first.scope, first.text, first.line, first.added, first.created) == (
        p / "GEMINI.md", Scope.PROJECT, "Use pnpm", 1, True, True)
    again = save_entry("use pnpm.", p / "src", settings)
    assert (again.added, again.created, again.line) == (False, False, 1)
    glob = save_entry("Global", p, settings, "global")
    assert glob.path == settings.global_file() and glob.created
    assert settings.global_file().read_text() == f"{H}\n- Global\n"


def test_save_entry_refuses_empty_text_before_touching_anything(project: tuple[Path, Settings]) -> None:
    p, settings = project
    with pytest.raises(EmptyEntryError):
        save_entry("# ", p, settings)
    assert not (p / "GEMINI.md").exists()


def test_save_entry_without_project(base: Path) -> None:
    settings = Settings(global_dir=base / "g")
    (base / "home" / "x").mkdir()
    with pytest.raises(NoProjectError):
        save_entry("x", base / "home" / "x", settings, "project")
    assert not (base / "g").exists()
    assert save_entry("x", base / "home" / "x", settings).scope is Scope.GLOBAL


def test_list_entries(project: tuple[Path, Settings]) -> None:
    p, settings = project
    settings.global_dir.mkdir()
    settings.global_file().write_text("- g1\n")
    (p / "GEMINI.md").write_text("# T\n- r1\n  more\n")
    (p / "src" / "GEMINI.md").write_text("- s1\n")
    memory = load_memory(p / "src", settings)
    everything = list_entries(memory)
    assert [(e.text, e.path, e.line, e.end_line, e.scope) for e in everything] == [
        ("g1", settings.global_file(), 1, 1, Scope.GLOBAL),
        ("r1\nmore", p / "GEMINI.md", 2, 3, Scope.PROJECT),
        ("s1", p / "src" / "GEMINI.md", 1, 1, Scope.PROJECT)]
    assert [e.text for e in list_entries(memory, [Scope.PROJECT])] == ["r1\nmore", "s1"]
    assert everything[1].to_json() == {"text": "r1\nmore", "path": str(p / "GEMINI.md"), "line": 2,
                                       "scope": "project"}


def test_remove_entry(project: tuple[Path, Settings]) -> None:
    p, settings = project
    (p / "GEMINI.md").write_text("- a\n- b\n")
    (p / "src" / "GEMINI.md").write_text("- b\n")
    removed = remove_entry("B.", p / "src", settings)
    assert (removed.path, removed.line, removed.text, removed.scope) == (p / "GEMINI.md", 2, "b", Scope.PROJECT)
    assert (p / "GEMINI.md").read_text() == "- a\n"
    with pytest.raises(EntryNotFoundError):
        remove_entry("b", p / "src", settings, "global")
    with pytest.raises(EntryNotFoundError, match="empty"):
        remove_entry("#", p / "src", settings)
    assert (p / "src" / "GEMINI.md").read_text() == "- b\n"


def test_remove_entry_at(project: tuple[Path, Settings]) -> None:
    p, _ = project
    f = p / "GEMINI.md"
    f.write_text("# T\n- a\n  more\n- b\n")
    assert remove_entry_at(f, 2).text == "a\nmore"
    assert f.read_text() == "# T\n- b\n"
    with pytest.raises(EntryNotFoundError):
        remove_entry_at(f, 0)
