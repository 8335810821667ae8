"""A workspace with a path longer than PATH_MAX: the walk skips that subtree with one logged
warning and finds every other memory file, with each engine and with the helper processes."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from memory_lens.core import scan
from memory_lens.core.scan import find_memory_files

NAMES = ["GEMINI.md"]
PATH_MAX = os.pathconf("/", "PC_PATH_MAX") if hasattr(os, "pathconf") else 4096


def make_too_deep(parent: Path, levels_past: int = 3) -> int:
    """Directories under PARENT deeper than PATH_MAX (made through directory descriptors, one
    level at a time), with a memory file at the bottom; the length of the bottom path."""
    name = "d" * 200
    fd = os.open(parent, os.O_RDONLY)
    length = len(str(parent))
    try:
        while length <= PATH_MAX + levels_past * (len(name) + 1):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
            length += len(name) + 1
        memory = os.open("GEMINI.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(memory, b"- too deep to find\n")
        os.close(memory)
    finally:
        os.close(fd)
    return length


def long_path_workspace(root: Path) -> set[Path]:
    """ROOT with memory files around a subtree too deep for the system; the ones to find."""
    expected = set()
    for rel in ("GEMINI.md", "a/GEMINI.md", "a/b/GEMINI.md", "m/GEMINI.md", "z/y/x/GEMINI.md",
                *(f"pkg{i}/mod/GEMINI.md" for i in range(6))):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("- x\n", encoding="utf-8")
        expected.add(path)
    (root / "m" / "deep").mkdir()
    assert make_too_deep(root / "m" / "deep") > PATH_MAX
    return expected


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "_warned", set(), raising=False)


def skip_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "memory_lens.scan" and r.levelno == logging.WARNING]


@pytest.mark.parametrize("engine,parallel,helpers", [
    ("rignore", False, False), ("rignore", True, False), ("rignore", True, True), ("python", False, False)])
def test_a_path_past_path_max_is_skipped_and_the_rest_found(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        fresh_warnings: None, engine: str, parallel: bool, helpers: bool) -> None:
    if engine == "rignore" and not scan.rignore_available():
        pytest.skip("rignore is not installed")
    if helpers:  # every subtree goes to the helper processes
        monkeypatch.setattr(scan, "MANY_SUBTREES", 1)
        monkeypatch.setattr(scan, "helper_count", lambda: 2)
    root = tmp_path / "ws"
    expected = long_path_workspace(root)
    caplog.set_level(logging.WARNING, logger="memory_lens.scan")
    assert find_memory_files(root, NAMES, engine=engine, parallel=parallel) == sorted(expected)
    warnings = skip_warnings(caplog)
    assert len(warnings) == 1, warnings
    assert str(root / "m" / "deep" / "ddd") in warnings[0]
    assert len(warnings[0]) < 600  # the path is shortened in the log line
    # A second walk (the server rescans now and then) finds the same and warns no more.
    caplog.clear()
    assert find_memory_files(root, NAMES, engine=engine, parallel=parallel) == sorted(expected)
    assert skip_warnings(caplog) == []



@pytest.mark.parametrize("parallel,helpers", [(False, False), (True, True)])
def test_a_name_that_is_not_utf8_is_skipped_by_rignore_and_the_rest_found(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch,
        fresh_warnings: None, parallel: bool, helpers: bool) -> None:
    """rignore gives paths as text, so it cannot name such a directory: skipped, with a warning
    (the Python walker, which has bytes to go by, finds its memory file too)."""
    if not scan.rignore_available():
        pytest.skip("rignore is not installed")
    if helpers:
        monkeypatch.setattr(scan, "MANY_SUBTREES", 1)
        monkeypatch.setattr(scan, "helper_count", lambda: 2)
    root = tmp_path / "ws"
    expected = long_path_workspace(root)
    try:
        os.mkdir(os.fsencode(root / "pkg1" / "mod") + b"/bad-\xff")
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    bad = Path(os.fsdecode(os.fsencode(root / "pkg1" / "mod") + b"/bad-\xff"))
    (bad / "GEMINI.md").write_text("- x\n", encoding="utf-8")
    caplog.set_level(logging.WARNING, logger="memory_lens.scan")
    assert find_memory_files(root, NAMES, engine="rignore", parallel=parallel) == sorted(expected)
    assert any("not UTF-8" in message for message in skip_warnings(caplog))
    assert bad / "GEMINI.md" in find_memory_files(root, NAMES, engine="python")
