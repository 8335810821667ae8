"""Memory files over the size limit (16 MiB by default; `--max-file-size`,
`MEMORY_LENS_MAX_FILE_SIZE`): `check` reports them `too-large` without reading them, `add` and
`remove` refuse them with one line, and `show` streams what the agent loads, byte for byte,
without ever holding the file in memory (peak memory of the child measured, not time)."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Result, Workspace

MiB = 1024 * 1024
# Runs the command given as arguments with stdout thrown away, then prints its exit status and
# its peak resident memory in KiB (the wrapper's only child, so the figure is that command's).
PEAK_RSS = (
    "import resource, subprocess, sys\n"
    "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode\n"
    "print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)
MEMORY_BOUND_KIB = 200 * 1024


@pytest.fixture
def proj(ws: Workspace) -> Workspace:
    ws.project("p")
    ws.write_global("# Global\n- Prefer small commits\n")
    return ws


def sparse(ws: Workspace, rel: str, size: int) -> None:
    with open(ws.path(rel), "wb") as f:
        f.truncate(size)


def peak(ws: Workspace, *args: str) -> tuple[int, int]:
    """(exit status, peak RSS in KiB) of `memory-lens ARGS` run in the project."""
    result: Result = ws.run(*args, cwd=ws.path("p"), prefix=[sys.executable, "-c", PEAK_RSS])
    rc, kib = result.stdout.split()
    return int(rc), int(kib)


def test_check_reports_a_17_mib_file_too_large_by_default(proj: Workspace) -> None:
    ws = proj
    sparse(ws, "p/GEMINI.md", 17 * MiB)
    result = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert result.rc == 0, result
    assert json.loads(result.stdout) == [{
        "path": str(ws.path("p/GEMINI.md")), "line": 1, "column": 1, "severity": "warning", "code": "too-large",
        "message": f"memory file too large to check: {17 * MiB} bytes, over the {16 * MiB}-byte limit; agents "
                   "load all of it. Shorten it, or raise the limit (--max-file-size, MEMORY_LENS_MAX_FILE_SIZE, "
                   "setting memoryLens.maxFileSize)."}]
    # The same file checked directly, and with the limit raised: then it is read (a NUL: unusable).
    assert [f["code"] for f in ws.json("check", "--format", "json", str(ws.path("p/GEMINI.md")))] == ["too-large"]
    raised = ws.run("check", "--format", "json", "--max-file-size", str(32 * MiB), cwd=ws.path("p"))
    assert "too-large" not in raised.stdout


def test_add_and_remove_refuse_a_too_large_file_in_one_line(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "## Gemini Added Memories\n- Use pnpm\n" + "x" * 100 + "\n")
    before = ws.read("p/GEMINI.md")
    for args in (["add", "Use tabs"], ["remove", "Use pnpm"]):
        result = ws.run(*args, "--max-file-size", "64", cwd=ws.path("p"))
        assert result.rc == 1, result
        errors = [line for line in result.stderr.splitlines() if "error" in line]
        assert errors == [f"memory-lens: error: {ws.path('p/GEMINI.md')}: is too large (137 bytes, over the 64-byte "
                          "limit): it is not checked or edited; raise the limit with --max-file-size or "
                          f"MEMORY_LENS_MAX_FILE_SIZE; nothing {'written' if args[0] == 'add' else 'removed'}"]
        assert ws.read("p/GEMINI.md") == before
    env = ws.run("add", "Use tabs", cwd=ws.path("p"), env={"MEMORY_LENS_MAX_FILE_SIZE": "64"})
    assert env.rc == 1 and "over the 64-byte limit" in env.stderr
    assert ws.read("p/GEMINI.md") == before


def test_a_raised_limit_lets_add_edit_a_file_over_16_mib(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "# Notes\n" + "word " * (17 * MiB // 5) + "\n")
    refused = ws.run("add", "Use tabs", cwd=ws.path("p"))
    assert refused.rc == 1 and "over the 16777216-byte limit" in refused.stderr
    ws.ok("add", "Use tabs", "--max-file-size", str(32 * MiB), cwd=ws.path("p"))
    with open(ws.path("p/GEMINI.md"), "rb") as f:
        f.seek(-40, os.SEEK_END)
        assert f.read().endswith(b"\n\n## Gemini Added Memories\n- Use tabs\n")


def test_bad_limits_are_usage_errors(proj: Workspace) -> None:
    ws = proj
    for args, env in ((["--max-file-size", "0"], None), (["--max-file-size", "big"], None),
                      ([], {"MEMORY_LENS_MAX_FILE_SIZE": "-5"})):
        result = ws.run("show", *args, cwd=ws.path("p"), env=env)
        assert result.rc == 2 and len(result.stderr.splitlines()) == 1, result


@pytest.mark.parametrize("fmt", ["text", "annotated"])
def test_show_streams_a_too_large_file_exactly_as_the_agent_loads_it(proj: Workspace, fmt: str) -> None:
    ws = proj
    # Whitespace the merge trims at both ends (Unicode spaces included), multi-byte text inside.
    body = "\u3000 \n\t# Big file\n" + "- caf\u00e9 \u2603 entry\n" * 50 + "tail \u00e9\u2028 \n\n"
    ws.write("p/GEMINI.md", body)
    expected = ws.run("show", "--format", fmt, cwd=ws.path("p"))
    streamed = ws.run("show", "--format", fmt, "--max-file-size", "100", cwd=ws.path("p"))
    assert streamed.rc == 0 and streamed.stdout == expected.stdout
    assert "# Big file" in streamed.stdout and "Prefer small commits" in streamed.stdout
    assert f"{ws.path('p/GEMINI.md')}: {len(body.encode())} bytes, over the 100-byte limit: shown as it is" in streamed.stderr


def test_show_json_leaves_a_too_large_file_out_and_says_why(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "- x" * 100)
    result = ws.run("show", "--format", "json", "--max-file-size", "100", cwd=ws.path("p"))
    data = json.loads(result.stdout)
    assert "- x" not in data["text"]
    assert [s["readable"] for s in data["sources"]] == [True, False]
    assert result.stderr == ""
    (warning,) = data["warnings"]
    assert "skipped: is too large (300 bytes, over the 100-byte limit)" in warning
    assert "is too large (300 bytes" in data["sources"][1]["reason"]


@pytest.mark.parametrize("command", [["check"], ["add", "Use tabs"], ["show"]])
def test_a_1_gib_sparse_file_is_never_read_whole(proj: Workspace, command: list[str]) -> None:
    ws = proj
    sparse(ws, "p/GEMINI.md", 1024 * MiB)
    rc, kib = peak(ws, *command)
    assert rc == (1 if command[0] == "add" else 0)
    assert kib < MEMORY_BOUND_KIB, f"{command}: peak RSS {kib} KiB"
    assert os.path.getsize(ws.path("p/GEMINI.md")) == 1024 * MiB
