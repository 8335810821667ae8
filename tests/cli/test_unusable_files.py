"""Existing but unusable memory files: skipped with a warning, never a crash, never a hang.

Each kind is put in the middle of a chain; `show`, `list` and `check` must still work, report the
file as unreadable, and leave stdout to the requested output. `add` must refuse to write to one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace

MIDDLE = "p/mid/GEMINI.md"


def _dangling(ws: Workspace, rel: str) -> None:
    ws.symlink(rel, "does-not-exist.md")


def _loop(ws: Workspace, rel: str) -> None:
    ws.symlink(rel, "GEMINI.md")  # points at itself


def _loop_of_two(ws: Workspace, rel: str) -> None:
    ws.symlink(rel, "other.md")
    ws.symlink(str(Path(rel).parent / "other.md"), "GEMINI.md")


def _directory(ws: Workspace, rel: str) -> None:
    ws.mkdir(rel)


def _fifo(ws: Workspace, rel: str) -> None:
    ws.mkdir(Path(rel).parent)
    os.mkfifo(ws.path(rel))


def _device(ws: Workspace, rel: str) -> None:
    ws.symlink(rel, "/dev/null")  # a character device


KINDS: dict[str, tuple[Callable[[Workspace, str], None], str]] = {
    "dangling-symlink": (_dangling, "dangling"),
    "symlink-loop": (_loop, "loop"),
    "symlink-loop-of-two": (_loop_of_two, "loop"),
    "directory": (_directory, "directory"),
    "fifo": (_fifo, "FIFO"),
    "device": (_device, "device"),
}
# Files with bad bytes (invalid UTF-8, NUL) are loaded as the agent loads them: tests/cli/test_encoding.py.


def _build(ws: Workspace, kind: str) -> str:
    """A chain global -> p -> p/mid (unusable) -> p/mid/leaf; returns the reason word to expect."""
    make, word = KINDS[kind]
    ws.write_global("- global entry\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- root entry\n")
    ws.mkdir("p/mid")
    make(ws, MIDDLE)
    ws.write("p/mid/leaf/GEMINI.md", "- leaf entry\n")
    return word


@pytest.fixture(params=list(KINDS))
def broken(request: pytest.FixtureRequest, ws: Workspace) -> tuple[Workspace, str]:
    """Every kind of unusable file."""
    return ws, _build(ws, request.param)


@pytest.fixture(params=["fifo", "dangling-symlink", "symlink-loop"])
def broken_sample(request: pytest.FixtureRequest, ws: Workspace) -> tuple[Workspace, str]:
    """One kind per way of failing (not opened, no target, no end), for the other commands."""
    return ws, _build(ws, request.param)


def test_show_skips_with_a_warning_and_lists_it_unreadable(broken: tuple[Workspace, str]) -> None:
    ws, word = broken
    result = ws.run("show", "--format", "json", cwd=ws.path("p/mid/leaf"), timeout=20)
    assert result.rc == 0, result
    assert result.stderr == ""  # with --format json the warnings are in the document
    shown = result.json()
    (warning,) = shown["warnings"]
    assert str(ws.path(MIDDLE)) in warning and word in warning
    assert ws.run("show", cwd=ws.path("p/mid/leaf"), timeout=20).stderr == f"memory-lens: warning: {warning}\n"
    assert shown["text"] == "- global entry\n\n- root entry\n\n- leaf entry"
    assert [(s["path"], s["readable"]) for s in shown["sources"]] == [
        (str(ws.global_dir / "GEMINI.md"), True), (str(ws.path("p/GEMINI.md")), True),
        (str(ws.path(MIDDLE)), False), (str(ws.path("p/mid/leaf/GEMINI.md")), True)]
    middle = shown["sources"][2]
    assert middle["scope"] == "project" and middle["tokens"] == 0 and isinstance(middle["bytes"], int)


def test_check_reports_it_as_an_error(broken_sample: tuple[Workspace, str]) -> None:
    ws, word = broken_sample
    result = ws.run("check", "--format", "json", cwd=ws.path("p/mid/leaf"), timeout=20)
    assert result.rc == 1, result
    (finding,) = result.json()
    assert finding == {"path": str(ws.path(MIDDLE)), "line": 1, "column": 1, "severity": "error",
                       "code": "unreadable", "message": finding["message"]}
    assert word in finding["message"]


def test_annotated_skips_it(broken_sample: tuple[Workspace, str]) -> None:
    ws, _ = broken_sample
    annotated = ws.run("show", "--format", "annotated", cwd=ws.path("p/mid/leaf"), timeout=20)
    assert annotated.rc == 0 and str(ws.path(MIDDLE)) not in annotated.stdout
    assert annotated.stdout.count("--- Context from:") == 3


def test_check_file_reports_it(broken_sample: tuple[Workspace, str]) -> None:
    ws, _ = broken_sample
    result = ws.run("check", "--format", "json", str(ws.path(MIDDLE)), timeout=20)
    assert result.rc == 1 and [f["code"] for f in result.json()] == ["unreadable"]


def test_list_skips_it_with_a_warning(broken_sample: tuple[Workspace, str]) -> None:
    ws, _ = broken_sample
    result = ws.run("list", "--format", "json", cwd=ws.path("p/mid/leaf"), timeout=20)
    assert result.rc == 0, result
    assert [e["text"] for e in result.json()] == ["global entry", "root entry", "leaf entry"]
    assert str(ws.path(MIDDLE)) in result.stderr


def test_remove_skips_it(broken_sample: tuple[Workspace, str]) -> None:
    ws, _ = broken_sample
    result = ws.run("remove", "leaf entry", cwd=ws.path("p/mid/leaf"), timeout=20)
    assert result.rc == 0, result
    assert ws.read("p/mid/leaf/GEMINI.md") == ""
    assert "warning" in result.stderr and str(ws.path(MIDDLE)) in result.stderr
    missing = ws.run("remove", "no such entry", cwd=ws.path("p/mid/leaf"), timeout=20)
    assert missing.rc == 1 and str(ws.path(MIDDLE)) in missing.stderr  # warned before the error


@pytest.mark.parametrize("kind", ["fifo", "dangling-symlink", "directory"])
def test_add_refuses_an_unusable_memory_file(ws: Workspace, kind: str) -> None:
    """The unusable file is the one `add` would write (p/mid is the project root here)."""
    word = _build(ws, kind)
    ws.project("p/mid")
    before = ws.snapshot()
    result = ws.run("add", "new entry", cwd=ws.path("p/mid"), timeout=20)
    assert result.rc == 1, result
    assert result.stdout == ""
    assert str(ws.path(MIDDLE)) in result.stderr and word in result.stderr
    assert ws.snapshot() == before


# Permission denied --------------------------------------------------------------------------------
#
# As root, file permissions do not stop reads (CAP_DAC_OVERRIDE). To make the denial real there, the
# CLI runs under `setpriv` with the capabilities that bypass permission checks removed from its
# bounding set: it stays uid 0 (so it can still run the interpreter) but obeys mode 000.

_NO_OVERRIDE = ["--bounding-set=-dac_override,-dac_read_search",
                "--inh-caps=-dac_override,-dac_read_search", "--"]


def _denial_prefix(probe: Path) -> list[str]:
    """A command prefix under which reading PROBE (mode 000) really fails, or skip."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and setpriv (util-linux) is missing: cannot deny a read")
    prefix = [setpriv, *_NO_OVERRIDE]
    works = subprocess.run([*prefix, "true"], capture_output=True, timeout=30)
    if works.returncode != 0:
        pytest.skip(f"running as root and setpriv cannot drop capabilities here: {works.stderr.decode().strip()}")
    read = subprocess.run([*prefix, "cat", str(probe)], capture_output=True, timeout=30)
    if read.returncode == 0 or b"Permission denied" not in read.stderr:
        pytest.skip("running as root and dropping CAP_DAC_OVERRIDE does not deny reads here")
    return prefix


@pytest.fixture
def denied(ws: Workspace) -> tuple[Workspace, list[str]]:
    ws.write_global("- global entry\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- root entry\n")
    secret = ws.write("p/mid/GEMINI.md", "- secret entry\n")
    ws.write("p/mid/leaf/GEMINI.md", "- leaf entry\n")
    secret.chmod(0)
    prefix = _denial_prefix(secret)
    yield ws, prefix
    secret.chmod(0o644)


def test_permission_denied_is_skipped_with_a_warning(denied: tuple[Workspace, list[str]]) -> None:
    ws, prefix = denied
    result = ws.run("show", cwd=ws.path("p/mid/leaf"), prefix=prefix)
    assert result.rc == 0, result
    assert result.stdout == "- global entry\n\n- root entry\n\n- leaf entry\n"
    assert "permission denied" in result.stderr and str(ws.path("p/mid/GEMINI.md")) in result.stderr

    shown = ws.run("show", "--format", "json", cwd=ws.path("p/mid/leaf"), prefix=prefix).json()
    middle = shown["sources"][2]
    assert middle == {"path": str(ws.path("p/mid/GEMINI.md")), "scope": "project", "readable": False,
                      "bytes": len("- secret entry\n"), "tokens": 0, "reason": middle["reason"], "imports": []}
    assert "permission denied" in middle["reason"]


def test_permission_denied_in_check_and_add(denied: tuple[Workspace, list[str]]) -> None:
    ws, prefix = denied
    check = ws.run("check", "--format", "json", cwd=ws.path("p/mid/leaf"), prefix=prefix)
    assert check.rc == 1
    assert [(f["path"], f["code"], f["severity"]) for f in check.json()] == [
        (str(ws.path("p/mid/GEMINI.md")), "unreadable", "error")]

    ws.project("p/mid")
    add = ws.run("add", "x", cwd=ws.path("p/mid"), prefix=prefix)
    assert add.rc == 1 and "permission denied" in add.stderr
    os.chmod(ws.path("p/mid/GEMINI.md"), 0o644)
    assert ws.read("p/mid/GEMINI.md") == "- secret entry\n"


@pytest.fixture
def no_override(ws: Workspace) -> list[str]:
    """A prefix under which file permissions bind, even for root (see `_denial_prefix`)."""
    probe = ws.write("probe", "x")
    probe.chmod(0)
    try:
        return _denial_prefix(probe)
    finally:
        probe.chmod(0o644)


def test_add_refuses_a_read_only_memory_file(ws: Workspace, no_override: list[str]) -> None:
    """The atomic replace only needs the directory: the file's own permission is respected."""
    ws.project("p")
    memory = ws.write("p/GEMINI.md", "- one\n")
    memory.chmod(0o444)
    try:
        result = ws.run("add", "two", cwd=ws.path("p"), prefix=no_override)
        assert result.rc == 1, result
        assert result.stderr.splitlines() == [
            f"memory-lens: error: {memory}: the file is read-only; make it writable (chmod u+w) and try again"]
        assert ws.read("p/GEMINI.md") == "- one\n"
        assert ws.run("remove", "one", cwd=ws.path("p"), prefix=no_override).rc == 1
        assert ws.read("p/GEMINI.md") == "- one\n"
    finally:
        memory.chmod(0o644)


def test_add_names_a_directory_it_cannot_write(ws: Workspace, no_override: list[str]) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- one\n")
    ws.path("p").chmod(0o555)
    try:
        result = ws.run("add", "two", cwd=ws.path("p"), prefix=no_override)
        assert result.rc == 1, result
        assert len(result.stderr.splitlines()) == 1
        assert f"its directory {ws.path('p')} is not writable" in result.stderr
        assert ws.read("p/GEMINI.md") == "- one\n"
    finally:
        ws.path("p").chmod(0o755)


def test_an_unreadable_path_fails_with_one_line(ws: Workspace, no_override: list[str]) -> None:
    closed = ws.mkdir("closed")
    ws.write("closed/inner/GEMINI.md", "x")
    closed.chmod(0)
    try:
        result = ws.run("show", str(ws.path("closed/inner")), prefix=no_override)
        assert result.rc == 1 and result.stdout == ""
        assert result.stderr.splitlines() == [
            f"memory-lens: error: {ws.path('closed/inner')}: permission denied; give a path you are allowed to read"]
    finally:
        closed.chmod(0o755)
