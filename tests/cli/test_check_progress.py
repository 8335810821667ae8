"""`memory-lens check` over a tree: a progress bar on stderr when stderr is a terminal (a pty
here), and not a byte of it when stderr is piped."""

from __future__ import annotations

import errno
import os
import pty
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from sandbox import MEMORY_LENS, RUN_TIMEOUT_SECONDS

if TYPE_CHECKING:
    from sandbox import Workspace

ERASE = "\r\x1b[K"
FILES = 60  # memory files under the project root, besides its own and the global one


def big_tree(ws: Workspace) -> Path:
    ws.write_global("- Use pnpm\n")
    root = ws.project("p")
    ws.write("p/GEMINI.md", "- Root rule\n")
    for i in range(FILES):
        ws.write(f"p/area{i}/GEMINI.md", f"- Rule {i}\n")
    return root


def run_with_terminal_stderr(ws: Workspace, *args: str, cwd: Path) -> tuple[int, str, str]:
    """Run `memory-lens ARGS` with stderr on a pseudo-terminal: (status, stdout, what the terminal got)."""
    main, secondary = pty.openpty()
    try:
        proc = subprocess.Popen([*MEMORY_LENS, *args], cwd=str(cwd), env=ws.env(), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=secondary)
    finally:
        os.close(secondary)
    received = bytearray()
    try:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError as err:  # EIO: the process closed its end
                if err.errno != errno.EIO:
                    raise
                break
            if not chunk:
                break
            received += chunk
    finally:
        os.close(main)
    out = proc.stdout.read() if proc.stdout else b""
    if proc.stdout:
        proc.stdout.close()
    status = proc.wait(timeout=RUN_TIMEOUT_SECONDS)
    # The terminal turns each "\n" into "\r\n"; the bar's own carriage returns stay.
    return status, out.decode("utf-8"), received.decode("utf-8").replace("\r\n", "\n")


def test_check_draws_a_progress_bar_on_a_terminal(ws: Workspace) -> None:
    root = big_tree(ws)
    status, out, terminal = run_with_terminal_stderr(ws, "check", cwd=root)
    total = FILES + 2
    assert status == 0 and out == ""
    assert terminal.startswith(f"{ERASE}scanning ")  # the walk, then the bar
    assert f"] checked {total} of {total} memory files" in terminal
    assert f"{ERASE}[{'#' * 24}] checked {total} of {total} memory files{ERASE}" in terminal  # then erased
    # After the bar's line is erased, the summary stands alone.
    assert terminal.rsplit(ERASE, 1)[1] == f"memory-lens: checked {total} memory file(s): no problems found\n"

    status, out, terminal = run_with_terminal_stderr(ws, "check", "--format", "json", str(root), cwd=ws.home)
    assert status == 0 and out.strip() == "[]"
    assert f"] checked {total} of {total} memory files{ERASE}" in terminal


def test_check_piped_writes_no_progress(ws: Workspace) -> None:
    root = big_tree(ws)
    result = ws.run("check", cwd=root)
    assert result.rc == 0, result
    assert result.stderr == f"memory-lens: checked {FILES + 2} memory file(s): no problems found\n"
    assert "\r" not in result.stderr and "\x1b" not in result.stderr


def test_a_single_file_check_draws_nothing_even_on_a_terminal(ws: Workspace) -> None:
    """Only a tree walk shows progress: checking one file is immediate."""
    root = big_tree(ws)
    status, _, terminal = run_with_terminal_stderr(ws, "check", str(root / "area3" / "GEMINI.md"), cwd=root)
    assert status == 0
    assert "\x1b" not in terminal and terminal == "memory-lens: checked 1 memory file(s): no problems found\n"
