"""`memory-lens check`: codes, severities, positions, FILE versus DIR, formats and exit codes."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace

KEYS = ["path", "line", "column", "severity", "code", "message"]


@pytest.fixture
def findings_tree(ws: Workspace) -> Workspace:
    ws.write_global("- Use pnpm\n- Global only\n")
    ws.project("p")
    ws.write("p/GEMINI.md", (
        "# Project\n"          # 1
        "- Tabs\n"             # 2
        "- use PNPM.\n"        # 3  redundant with the global file
        "- Spaces\n"           # 4
        "- tabs!\n"            # 5  duplicate of line 2
        "```\n"                # 6
        "- Tabs\n"             # 7  fenced: not an entry
        "```\n"                # 8
    ))
    ws.write("p/sub/GEMINI.md", "- Spaces\n- Own\n- Own\n")  # 1 redundant (root), 3 duplicate
    return ws


def test_dir_checks_every_file_of_the_chain(findings_tree: Workspace) -> None:
    ws = findings_tree
    result = ws.run("check", "--format", "json", cwd=ws.path("p/sub"))
    assert result.rc == 0, result  # warnings and information only
    root, sub = str(ws.path("p/GEMINI.md")), str(ws.path("p/sub/GEMINI.md"))
    findings = [(f["path"], f["line"], f["column"], f["severity"], f["code"]) for f in result.json()]
    assert findings == [
        (root, 3, 1, "information", "redundant"),
        (root, 5, 1, "warning", "duplicate"),
        (sub, 1, 1, "information", "redundant"),
        (sub, 3, 1, "warning", "duplicate"),
    ]
    messages = [f["message"] for f in result.json()]
    assert str(ws.global_dir / "GEMINI.md") in messages[0]
    assert "line 2" in messages[1]
    assert root in messages[2]


def test_json_shape_is_exact(findings_tree: Workspace) -> None:
    ws = findings_tree
    findings = ws.run("check", "--format", "json", cwd=ws.path("p")).json()
    assert isinstance(findings, list) and findings
    for f in findings:
        assert list(f) == KEYS
        assert isinstance(f["path"], str) and isinstance(f["message"], str) and f["message"]
        assert isinstance(f["line"], int) and f["line"] >= 1
        assert isinstance(f["column"], int) and f["column"] >= 1
        assert f["severity"] in ("error", "warning", "information", "hint")


def test_no_path_means_the_project_of_the_cwd(findings_tree: Workspace) -> None:
    ws = findings_tree
    by_cwd = ws.run("check", "--format", "json", cwd=ws.path("p/sub"))
    by_root = ws.run("check", "--format", "json", str(ws.path("p")))
    assert by_cwd.json() == by_root.json() and len(by_cwd.json()) == 4


def test_file_is_checked_against_more_general_files_only(findings_tree: Workspace) -> None:
    ws = findings_tree
    root = ws.run("check", "--format", "json", str(ws.path("p/GEMINI.md")))
    assert [(f["line"], f["code"]) for f in root.json()] == [(3, "redundant"), (5, "duplicate")]
    # The global file has nothing more general; the deeper file's problems are not its own.
    glob = ws.run("check", "--format", "json", str(ws.global_dir / "GEMINI.md"))
    assert glob.rc == 0 and glob.json() == []


def test_relative_file_path_reports_like_an_absolute_one(findings_tree: Workspace) -> None:
    ws = findings_tree
    rel = ws.run("check", "--format", "json", "GEMINI.md", cwd=ws.path("p/sub"))
    absolute = ws.run("check", "--format", "json", str(ws.path("p/sub/GEMINI.md")))
    assert rel.json() == absolute.json()
    assert rel.json()[0]["path"] == str(ws.path("p/sub/GEMINI.md"))


def test_same_file_given_twice_reports_once(findings_tree: Workspace) -> None:
    ws = findings_tree
    once = ws.run("check", "--format", "json", str(ws.path("p/sub"))).json()
    twice = ws.run("check", "--format", "json", "GEMINI.md", ".", str(ws.path("p/sub/GEMINI.md")),
                   cwd=ws.path("p/sub")).json()
    assert sorted(map(str, twice)) == sorted(map(str, once))


def test_text_format(findings_tree: Workspace) -> None:
    ws = findings_tree
    result = ws.run("check", str(ws.path("p/GEMINI.md")))
    root = str(ws.path("p/GEMINI.md"))
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{root}:3:1: information: ") and lines[0].endswith(" [redundant]")
    assert lines[1].startswith(f"{root}:5:1: warning: ") and lines[1].endswith(" [duplicate]")
    assert "2 finding(s)" in result.stderr  # the summary is not part of the output


def test_strict_turns_warnings_into_failure(findings_tree: Workspace) -> None:
    ws = findings_tree
    assert ws.run("check", cwd=ws.path("p")).rc == 0
    strict = ws.run("check", "--strict", "--format", "json", cwd=ws.path("p"))
    assert strict.rc == 1 and strict.json()  # the output is the same, only the status differs


def test_information_alone_passes_strict(ws: Workspace) -> None:
    ws.write_global("- Use pnpm\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- Use pnpm\n")
    result = ws.run("check", "--strict", "--format", "json", cwd=ws.path("p"))
    assert result.rc == 0
    assert [f["severity"] for f in result.json()] == ["information"]


def test_clean_tree(ws: Workspace) -> None:
    ws.write_global("- a\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- b\n```\n- b\n```\n* * *\n* * *\n")
    text = ws.run("check", "--strict", cwd=ws.path("p"))
    assert (text.rc, text.stdout) == (0, "")
    assert "no problems" in text.stderr
    as_json = ws.run("check", "--strict", "--format", "json", cwd=ws.path("p"))
    assert (as_json.rc, as_json.json()) == (0, [])


def test_empty_chain(ws: Workspace) -> None:
    ws.mkdir("home/nothing")
    assert ws.json("check", cwd=ws.path("home/nothing")) == []


def test_unreadable_is_an_error(ws: Workspace) -> None:
    ws.project("p")
    ws.symlink("p/GEMINI.md", "gone.md")  # bad bytes are not unreadable: tests/cli/test_encoding.py
    result = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert result.rc == 1
    assert [(f["path"], f["line"], f["column"], f["severity"], f["code"]) for f in result.json()] == [
        (str(ws.path("p/GEMINI.md")), 1, 1, "error", "unreadable")]


def test_nonexistent_file_fails(ws: Workspace) -> None:
    result = ws.run("check", str(ws.path("GEMINI.md")))
    assert result.rc == 1 and result.stdout == ""


# over-budget ------------------------------------------------------------------------------------


def _sized(n: int) -> str:
    return "x" * n


def test_default_budget_is_32768_bytes_of_merged_text(ws: Workspace) -> None:
    ws.project("p")
    ws.write_global(_sized(16000))
    ws.write("p/GEMINI.md", _sized(32768 - 16000 - 2) + "\n\n\n")  # merged: exactly 32768 bytes
    at_limit = ws.run("check", "--strict", "--format", "json", cwd=ws.path("p"))
    assert (at_limit.rc, at_limit.json()) == (0, [])

    ws.write("p/GEMINI.md", _sized(32768 - 16000 - 1))  # merged: 32769 bytes
    over = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert over.rc == 0  # a warning
    assert [(f["path"], f["line"], f["column"], f["severity"], f["code"]) for f in over.json()] == [
        (str(ws.path("p/GEMINI.md")), 1, 1, "warning", "over-budget")]
    assert "32769" in over.json()[0]["message"] and "32768" in over.json()[0]["message"]
    assert ws.run("check", "--strict", cwd=ws.path("p")).rc == 1


def test_budget_counts_utf8_bytes(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "é" * 16385)  # 16385 characters, 32770 bytes
    findings = ws.json("check", cwd=ws.path("p"))
    assert [f["code"] for f in findings] == ["over-budget"]


def test_budget_option_and_environment(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- 0123456789\n")  # 12 bytes merged
    assert ws.json("check", "--budget", "12", cwd=ws.path("p")) == []
    assert [f["code"] for f in ws.json("check", "--budget", "11", cwd=ws.path("p"))] == ["over-budget"]
    env = {"MEMORY_LENS_BUDGET": "11"}
    assert [f["code"] for f in ws.json("check", cwd=ws.path("p"), env=env)] == ["over-budget"]
    assert ws.json("check", "--budget", "100", cwd=ws.path("p"), env=env) == []


def test_token_budget(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "x" * 400)  # ~100 tokens
    assert ws.json("check", "--token-budget", "100", cwd=ws.path("p")) == []
    over = ws.json("check", "--token-budget", "99", cwd=ws.path("p"))
    assert [f["code"] for f in over] == ["over-budget"] and "token" in over[0]["message"]


def test_bad_budget_is_a_usage_error(ws: Workspace) -> None:
    result = ws.run("check", "--budget=-1")
    assert result.rc == 2 and result.stdout == "" and "budget" in result.stderr
    env_result = ws.run("check", env={"MEMORY_LENS_BUDGET": "lots"})
    assert env_result.rc == 2 and env_result.stdout == "" and "MEMORY_LENS_BUDGET" in env_result.stderr


def test_over_budget_is_reported_on_each_file_past_the_limit(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- small\n")
    ws.write("p/a/GEMINI.md", "- " + _sized(40))
    ws.write("p/a/b/GEMINI.md", "- tiny\n")
    findings = ws.json("check", "--budget", "20", cwd=ws.path("p/a/b"))
    assert [(f["path"], f["code"]) for f in findings] == [
        (str(ws.path("p/a/GEMINI.md")), "over-budget"), (str(ws.path("p/a/b/GEMINI.md")), "over-budget")]


def test_a_check_keeps_its_parses_in_the_parse_cache_and_the_next_gives_the_same_output(
        findings_tree: Workspace) -> None:
    import sqlite3

    ws = findings_tree
    first = ws.run("check", "--format", "json", cwd=ws.path("p"))
    [db] = [p for d in (ws.cache_dir, ws.home) for p in d.rglob("entries-*.sqlite3")]  # the user cache directory
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM entries").fetchone()[0] >= 3  # the global file and the two
    second = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert second.stdout == first.stdout and second.rc == first.rc
    # A secret's finding, found once and then read from the cache, is the same too.
    with (ws.path("p") / "GEMINI.md").open("a", encoding="utf-8") as fh:
        fh.write("- The deploy key is `AKIAIOSFODNN7EXAMPLF`\n")
    found = ws.run("check", "--format", "json", cwd=ws.path("p"))
    cached = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert '"code": "secret"' in found.stdout and cached.stdout == found.stdout and cached.rc == found.rc == 1
