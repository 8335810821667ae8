"""Output formats of `show`, exit codes and the stdout/stderr split shared by every command."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace


@pytest.fixture
def sample(ws: Workspace) -> Workspace:
    ws.write_global("\n  Global rules  \n\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "# Project\r\n\r\n- Use pnpm\r\n")
    ws.write("p/empty/GEMINI.md", "\n\n")
    ws.write("p/empty/leaf/GEMINI.md", "Ünïcödé 漢字")
    return ws


def test_show_text(sample: Workspace) -> None:
    result = sample.ok("show", cwd=sample.path("p/empty/leaf"))
    assert result.stdout == "Global rules\n\n# Project\r\n\r\n- Use pnpm\n\nÜnïcödé 漢字\n"
    assert result.stderr == ""


def test_show_json(sample: Workspace) -> None:
    ws = sample
    result = ws.ok("show", "--format", "json", cwd=ws.path("p/empty/leaf"))
    shown = json.loads(result.stdout)
    assert shown == {
        "agent": "gemini",
        "text": "Global rules\n\n# Project\r\n\r\n- Use pnpm\n\nÜnïcödé 漢字",
        "project_root": str(ws.path("p")),
        "target_dir": str(ws.path("p/empty/leaf")),
        "tokens": shown["tokens"],
        "sources": [
            {"path": str(ws.global_dir / "GEMINI.md"), "scope": "global", "readable": True, "bytes": 19,
             "tokens": 3, "reason": "", "imports": []},
            {"path": str(ws.path("p/GEMINI.md")), "scope": "project", "readable": True, "bytes": 25,
             "tokens": 6, "reason": "", "imports": []},
            {"path": str(ws.path("p/empty/GEMINI.md")), "scope": "project", "readable": True, "bytes": 2,
             "tokens": 0, "reason": "", "imports": []},
            {"path": str(ws.path("p/empty/leaf/GEMINI.md")), "scope": "project", "readable": True,
             "bytes": len("Ünïcödé 漢字".encode()), "tokens": 3, "reason": "", "imports": []},
        ],
        "warnings": [],
    }
    assert list(shown) == ["agent", "text", "project_root", "target_dir", "tokens", "sources", "warnings"]
    assert result.stderr == ""


def test_show_annotated(sample: Workspace) -> None:
    ws = sample
    g, p, leaf = ws.global_dir / "GEMINI.md", ws.path("p/GEMINI.md"), ws.path("p/empty/leaf/GEMINI.md")
    result = ws.ok("show", "--format", "annotated", cwd=ws.path("p/empty/leaf"))
    assert result.stdout == (
        f"--- Context from: {g} ---\nGlobal rules\n--- End of Context from: {g} ---\n\n"
        f"--- Context from: {p} ---\n# Project\r\n\r\n- Use pnpm\n--- End of Context from: {p} ---\n\n"
        f"--- Context from: {leaf} ---\nÜnïcödé 漢字\n--- End of Context from: {leaf} ---\n"
    )


def test_show_with_nothing_prints_nothing(ws: Workspace) -> None:
    for fmt in ("text", "annotated"):
        result = ws.ok("show", "--format", fmt)
        assert result.stdout == ""  # only the hint, on stderr (tests/cli/test_guidance.py)
        assert result.stderr.startswith("memory-lens: no memory for ") and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [["frobnicate"], ["show", "--format", "xml"], ["add"], ["add", "x", "--scope", "all"],
     ["list", "--scope", "everything"], ["show", "--no-such-flag"], ["check", "--budget"]],
    ids=["unknown-command", "bad-format", "add-without-text", "add-bad-scope",
         "list-bad-scope", "unknown-flag", "missing-value"],
)
def test_usage_errors_exit_2(ws: Workspace, args: list[str]) -> None:
    result = ws.run(*args)
    assert result.rc == 2
    assert result.stdout == ""
    assert "usage" in result.stderr or "error" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_and_version(ws: Workspace) -> None:
    top = ws.ok("--help")
    for command in ("show", "add", "list", "remove", "check", "serve"):
        assert command in top.stdout
    sub = ws.ok("add", "--help")
    assert "--global-dir" in sub.stdout and "--filename" in sub.stdout and "--scope" in sub.stdout
    version = ws.ok("--version")
    assert version.stdout.startswith("memory-lens ")


def test_python_dash_m_runs_the_same_cli(sample: Workspace) -> None:
    ws = sample
    proc = subprocess.run([sys.executable, "-m", "memory_lens", "show"], cwd=ws.path("p"), env=ws.env(),
                          capture_output=True, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout.decode() == ws.ok("show", cwd=ws.path("p")).stdout
