"""memory_lens.core.write_policy and its use by the writer: where a write may land."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.write_policy import (
    ENV_FOLLOW_OUTSIDE_LINKS,
    OutsideWriteError,
    check_target,
    global_area,
    is_inside,
    project_area,
)
from memory_lens.core.writer import OutsideLinkError, update_memory_file


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.delenv(ENV_FOLLOW_OUTSIDE_LINKS, raising=False)
    base = Path(os.path.realpath(tmp_path))
    (base / "repo" / "docs").mkdir(parents=True)
    (base / "home").mkdir()
    return base


def test_is_inside_compares_resolved_paths_by_component(root: Path) -> None:
    assert is_inside(root / "repo" / "a.md", [root / "repo"])
    assert is_inside(root / "repo", [root / "repo"])
    assert not is_inside(root / "repo-other" / "a.md", [root / "repo"])  # a prefix is not a parent
    assert not is_inside(root / "repo" / ".." / "home" / "a", [root / "repo"])


def test_check_target_names_the_link_and_its_target(root: Path) -> None:
    (root / "home" / ".bashrc").write_text("x")
    link = root / "repo" / "GEMINI.md"
    os.symlink(root / "home" / ".bashrc", link)
    with pytest.raises(OutsideWriteError) as err:
        check_target(link, project_area(root / "repo"))
    assert str(err.value) == (f"{link} is a link to {root / 'home' / '.bashrc'}, outside the project "
                              f"{root / 'repo'}; refusing to write through it (use --follow-outside-links "
                              f"or set {ENV_FOLLOW_OUTSIDE_LINKS}=1 to allow)")
    assert check_target(link, project_area(root / "repo", follow_outside_links=True)) == root / "home" / ".bashrc"
    assert check_target(link, global_area(root / "home")) == root / "home" / ".bashrc"


def test_the_default_area_is_the_files_own_directory(root: Path) -> None:
    (root / "home" / "notes.json").write_text("{}")
    link = root / "repo" / "docs" / "n.json"
    os.symlink("../../home/notes.json", link)
    with pytest.raises(OutsideLinkError):
        update_memory_file(link, lambda text: ("changed", None))
    assert (root / "home" / "notes.json").read_text() == "{}"


def test_a_directory_swapped_under_the_lock_is_caught_before_the_replace(root: Path) -> None:
    """The link was inside when the write started; while the writer holds the lock (inside CHANGE)
    an attacker turns the directory the link points into into a link to the home directory. The
    writer checks the final target again right before replacing the file, and refuses."""
    (root / "repo" / "docs" / "memory.md").write_text("# Team\n")
    (root / "home" / "memory.md").write_text("# home file\n")
    link = root / "repo" / "GEMINI.md"
    os.symlink("docs/memory.md", link)

    def swap_then_change(text: str) -> tuple[str, None]:
        if not (root / "repo" / "docs").is_symlink():
            os.rename(root / "repo" / "docs", root / "repo" / "docs.old")
            os.symlink(root / "home", root / "repo" / "docs")
        return text + "- planted\n", None

    with pytest.raises(OutsideLinkError) as err:
        update_memory_file(link, swap_then_change, area=project_area(root / "repo"))
    assert f"outside the project {root / 'repo'}" in str(err.value)
    assert (root / "home" / "memory.md").read_text() == "# home file\n"
    assert (root / "repo" / "docs.old" / "memory.md").read_text() == "# Team\n"


def test_nothing_is_created_for_a_refused_write(root: Path) -> None:
    os.symlink(root / "home" / "new" / "deeper", root / "repo" / "out")
    target = root / "repo" / "out" / "GEMINI.md"
    with pytest.raises(OutsideLinkError):
        update_memory_file(target, lambda text: ("x", None), area=project_area(root / "repo"))
    assert not (root / "home" / "new").exists()


def test_the_path_is_judged_by_one_resolution(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A swap race: the file was inside the project when it was resolved and turned into a link
    out of it a moment later. It was judged twice before, and refused as "GEMINI.md is outside
    the project" though it is in it; it is judged by one resolution."""
    memory = root / "repo" / "GEMINI.md"
    memory.write_text("x")
    real, looks = os.path.realpath, []

    def swapped_after_the_first_look(path: str, *args, **kwargs) -> str:
        if os.fspath(path) == str(memory):
            looks.append(path)
            if len(looks) > 1:
                return str(root / "home" / ".bashrc")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os.path, "realpath", swapped_after_the_first_look)
    assert check_target(memory, project_area(root / "repo")) == memory


def test_a_file_that_was_a_link_when_resolved_is_named_as_one(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A swap race: the path was a link out of the project when resolved and is a file again when
    the message is made; no directory on its way is a link, so the file was ("resolves through a
    link" said otherwise)."""
    memory = root / "repo" / "GEMINI.md"
    memory.write_text("x")
    real = os.path.realpath
    outside = str(root / "home" / ".bashrc")
    monkeypatch.setattr(os.path, "realpath",
                        lambda path, *a, **k: outside if os.fspath(path) == str(memory) else real(path, *a, **k))
    with pytest.raises(OutsideWriteError) as caught:
        check_target(memory, project_area(root / "repo"))
    assert str(caught.value).startswith(f"{memory} is a link to {outside}, outside the project")
