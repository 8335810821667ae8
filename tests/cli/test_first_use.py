"""What a new user meets first: `check` of a project covers every agent's files as `check FILE`
does and follows the agents asked for; no arguments, `--help`, JSON output and `add --agent
wave` say what they do."""

from __future__ import annotations

import pytest

from sandbox import Workspace


def _findings(ws: Workspace, *args: str) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["code"]) for f in ws.json("check", "--format", "json", *args, cwd=ws.path("p"))]


@pytest.mark.parametrize("name, text, code", [
    ("CLAUDE.md", "# C\n@./nope.md\n", "import-not-found"),
    ("AGENTS.md", "- Run the tests\n- Run the tests\n", "duplicate"),
    ("CLAUDE.local.md", "- a\n- a\n", "duplicate"),
    ("AGENTS.override.md", "\xff\n", "encoding"),
])
def test_the_project_check_finds_what_the_file_check_finds(ws: Workspace, name: str, text: str, code: str) -> None:
    ws.project("p")
    ws.write(f"p/{name}", text.encode("latin-1") if code == "encoding" else text)
    path = str(ws.path(f"p/{name}"))
    one = _findings(ws, name)
    assert (path, one[0][1], code) in one
    for args in ([], ["."], [str(ws.path("p"))]):
        assert set(one) <= set(_findings(ws, *args)), args
    result = ws.run("check", cwd=ws.path("p"))
    assert f"[{code}]" in result.stdout and "no problems found" not in result.stderr


def test_check_agent_claude_sees_the_broken_import_and_claude_s_own_chain(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/CLAUDE.md", "# C\n@./nope.md\n- Use pnpm\n")
    ws.write("p/src/CLAUDE.md", "- Use pnpm\n")
    ws.write("p/src/GEMINI.md", "- Use pnpm\n")  # not Claude Code's: nothing about it
    found = _findings(ws, "--agent", "claude")
    assert found == [(str(ws.path("p/CLAUDE.md")), 2, "import-not-found"),
                     (str(ws.path("p/src/CLAUDE.md")), 1, "redundant")]


def test_findings_follow_the_agents_asked_for(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- Use pnpm\n")
    ws.write("p/src/GEMINI.md", "- Use pnpm\n")
    ws.write("p/src/AGENTS.md", "- Use pnpm\n")
    redundant = (str(ws.path("p/src/GEMINI.md")), 1, "redundant")
    assert redundant in _findings(ws)  # gemini is checked by default
    assert redundant in _findings(ws, "--agent", "gemini")
    codex = ws.run("check", "--agent", "codex", cwd=ws.path("p"))
    # Codex loads neither GEMINI.md: nothing about them but a secret (none here), and its AGENTS.md
    # repeats no file of its own.
    assert codex.stdout == "" and codex.rc == 0
    assert codex.stderr == "memory-lens: checked 3 memory file(s) for codex: no problems found\n"


def test_no_arguments_prints_the_help(ws: Workspace) -> None:
    result = ws.run()
    assert result.rc == 0 and result.stderr == ""
    assert result.stdout == ws.run("--help").stdout and "COMMAND" in result.stdout


def test_help_says_what_each_command_takes(ws: Workspace) -> None:
    notes = ws.ok("notes", "list", "--help").stdout
    for flag in ("--filename", "--global-dir", "--max-file-size"):
        assert flag not in notes
        assert flag in ws.ok("mcp", "--help").stdout and flag in ws.ok("show", "--help").stdout
    check = " ".join(ws.ok("check", "--help").stdout.split()).replace("- ", "-")  # argparse wraps at a hyphen
    for code in ("unreadable", "too-large", "encoding", "duplicate", "redundant", "over-budget", "not-loaded",
                 "import-not-found", "import-outside-root", "import-cycle", "import-depth",
                 "rule-matches-nothing", "invalid-glob", "frontmatter", "stale", "drift"):
        assert f"{code} (" in check
    assert "docs/cli.md#check" in check
    assert "context.fileName" in " ".join(ws.ok("show", "--help").stdout.split())


@pytest.mark.parametrize("agent", ["gemini", "codex", "claude", "wave"])
def test_json_carries_the_warnings_and_stderr_stays_quiet(ws: Workspace, agent: str) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "x" * 40_000 + "\n")  # over Codex's 32 KiB: cut, with a warning
    ws.write("p/CLAUDE.md", b"- bad \xff byte\n")
    ws.mkdir("p/GEMINI.md")  # not a file: skipped, with a warning
    ws.write_global("\xff\n".encode("latin-1"), name="GEMINI.md")
    text = ws.run("show", "--agent", agent, cwd=ws.path("p"))
    shown = ws.run("show", "--agent", agent, "--format", "json", cwd=ws.path("p"))
    assert shown.rc == 0 and shown.stderr == ""
    warnings = shown.json()["warnings"]
    assert [f"memory-lens: warning: {w}" for w in warnings] == [
        line for line in text.stderr.splitlines() if line.startswith("memory-lens: warning: ")]
    if agent in ("gemini", "codex"):
        assert warnings


def test_add_as_wave_says_which_other_agents_load_the_file(ws: Workspace) -> None:
    ws.project("p")
    ws.mkdir("p/src/lib")
    result = ws.run("add", "--agent", "wave", "Use tabs", cwd=ws.path("p/src/lib"))
    agents_md = ws.path("p/src/lib/AGENTS.md")
    assert result.rc == 0 and ws.read("p/src/lib/AGENTS.md") == "- Use tabs\n"
    assert result.stderr == (f"memory-lens: saved to project memory {agents_md}:1 (file created); "
                             "Claude Code and Codex load this file too\n")
    ws.write("p/src/lib/CLAUDE.md", "# Claude's own\n")  # Claude Code reads that one instead
    again = ws.run("add", "--agent", "wave", "Use spaces", cwd=ws.path("p/src/lib"))
    assert again.stderr == f"memory-lens: saved to project memory {agents_md}:2; Codex loads this file too\n"
    gemini = ws.run("add", "Use pnpm", cwd=ws.path("p/src/lib"))
    assert gemini.stderr == f"memory-lens: saved to project memory {ws.path('p/GEMINI.md')}:2 (file created)\n"
