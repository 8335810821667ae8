"""`check` over a project with a directory nested past PATH_MAX: that subtree is skipped with one
warning on stderr and every other memory file is checked (the walk used to fail as a whole)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import Workspace


def make_too_deep(parent: Path) -> None:
    """Directories under PARENT deeper than PATH_MAX (made one level at a time through directory
    descriptors), with a memory file at the bottom."""
    name, length = "d" * 200, len(str(parent))
    fd = os.open(parent, os.O_RDONLY)
    try:
        while length <= 4096 + 600:
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, length = child, length + len(name) + 1
        memory = os.open("GEMINI.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(memory, b"- too deep\n- too deep\n")
        os.close(memory)
    finally:
        os.close(fd)


def test_check_skips_a_path_past_path_max_and_checks_the_rest(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "# Project\n- Tabs\n")
    ws.write("p/zzz/GEMINI.md", "- twice\n- twice\n")  # walked after the deep subtree
    ws.mkdir("p/deep")
    make_too_deep(ws.path("p/deep"))
    result = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert result.rc == 0, result
    assert [(f["path"], f["code"]) for f in result.json()] == [(str(ws.path("p/zzz/GEMINI.md")), "duplicate")]
    warnings = [line for line in result.stderr.splitlines() if "skipped part of the workspace" in line]
    assert len(warnings) == 1, result.stderr
    assert str(ws.path("p/deep/ddd")) in warnings[0] and "File name too long" in warnings[0]
    assert "Traceback" not in result.stderr
