"""Files with bad bytes (invalid UTF-8, NUL) through the CLI: loaded exactly as the agent loads
them (U+FFFD for each bad sequence, NUL kept), reported with the `encoding` warning at the first
bad byte, and never rewritten by `add` or `remove`."""

from __future__ import annotations

import pytest

from sandbox import Workspace

BAD = b"- first entry\n- caf\xe9 au lait\n- after \x00 NUL\n"
AGENT_TEXT = "- first entry\n- caf\ufffd au lait\n- after \x00 NUL"


@pytest.fixture
def bad(ws: Workspace) -> Workspace:
    ws.write_global("- global entry\n")
    ws.project("p")
    ws.write("p/GEMINI.md", BAD)
    ws.write("p/sub/GEMINI.md", "- sub entry\n")
    return ws


def test_show_loads_the_file_as_the_agent_does_and_warns(bad: Workspace) -> None:
    ws = bad
    result = ws.run("show", cwd=ws.path("p/sub"))
    assert result.rc == 0, result
    assert result.stdout == f"- global entry\n\n{AGENT_TEXT}\n\n- sub entry\n"
    (warning,) = [line for line in result.stderr.splitlines() if "warning" in line]
    assert f"{ws.path('p/GEMINI.md')}:2: is not valid UTF-8 (bad byte at offset 19)" in warning
    shown = ws.json("show", cwd=ws.path("p/sub"))
    assert [s["readable"] for s in shown["sources"]] == [True, True, True]
    annotated = ws.ok("show", "--format", "annotated", cwd=ws.path("p/sub")).stdout
    assert f"--- Context from: {ws.path('p/GEMINI.md')} ---\n{AGENT_TEXT}\n" in annotated


def test_check_reports_encoding_at_the_first_bad_byte(bad: Workspace) -> None:
    ws = bad
    result = ws.run("check", "--format", "json", str(ws.path("p/GEMINI.md")))
    assert result.rc == 0, result  # a warning: fails only with --strict
    (finding,) = result.json()
    assert finding == {"path": str(ws.path("p/GEMINI.md")), "line": 2, "column": 6, "severity": "warning",
                       "code": "encoding", "message": finding["message"]}
    assert "offset 19" in finding["message"] and "U+FFFD" in finding["message"]
    assert ws.run("check", "--strict", str(ws.path("p/GEMINI.md"))).rc == 1
    whole = ws.run("check", "--format", "json", cwd=ws.path("p/sub")).json()
    assert [(f["path"], f["code"]) for f in whole] == [(str(ws.path("p/GEMINI.md")), "encoding")]


def test_a_nul_before_any_invalid_sequence_is_the_first_bad_byte(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", b"ok\n\tx\x00y \xff\n")
    (finding,) = ws.run("check", "--format", "json", str(ws.path("p/GEMINI.md"))).json()
    assert (finding["line"], finding["column"], finding["code"]) == (2, 3, "encoding")
    assert "NUL byte at offset 5" in finding["message"]


def test_list_shows_its_entries_but_add_and_remove_refuse_to_rewrite_it(bad: Workspace) -> None:
    ws = bad
    listed = ws.json("list", cwd=ws.path("p"))
    assert [e["text"] for e in listed] == ["global entry", "first entry", "caf\ufffd au lait", "after \x00 NUL"]
    before = ws.snapshot()
    for args in (("add", "new entry"), ("remove", "first entry")):
        result = ws.run(*args, cwd=ws.path("p"))
        assert result.rc == 1, result
        (line,) = result.stderr.strip().splitlines()[-1:]
        assert line.startswith("memory-lens: error: ") and str(ws.path("p/GEMINI.md")) in line
        assert "not valid UTF-8" in line and "Traceback" not in result.stderr
    assert ws.snapshot() == before
    assert ws.path("p/GEMINI.md").read_bytes() == BAD
