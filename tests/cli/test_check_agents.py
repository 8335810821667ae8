"""`memory-lens check --agent`: over-budget and not-loaded findings per enabled agent."""

from __future__ import annotations

import os

from sandbox import Workspace

LINE = "x" * 63 + "\n"  # 64 bytes a line


def _codex_tree(ws: Workspace) -> None:
    """A project whose root AGENTS.md is over Codex's 32 KiB, and a directory where an
    AGENTS.override.md shadows the AGENTS.md next to it."""
    ws.project("p")
    ws.write("p/AGENTS.md", LINE * 600)  # 38400 bytes: Codex keeps 32768 of them, lines 1-512
    ws.write("p/sub/AGENTS.md", "- shadowed\n")
    ws.write("p/sub/AGENTS.override.md", "- the override\n")
    ws.write("p/GEMINI.md", "- gemini's own file\n")


def test_check_agent_codex_names_the_cut_line_and_the_shadowed_file(ws: Workspace) -> None:
    _codex_tree(ws)
    result = ws.run("check", "--agent", "codex", str(ws.path("p")))
    root, shadowed, override = ws.path("p/AGENTS.md"), ws.path("p/sub/AGENTS.md"), ws.path("p/sub/AGENTS.override.md")
    lines = result.stdout.splitlines()
    assert lines == [
        f"{root}:513:1: warning: codex: Codex cuts this file at byte 32768 of 38400 (project_doc_max_bytes is "
        "32768, shared by the AGENTS.md files from the project root down): it never sees line 513 onward "
        "[over-budget]",
        f"{shadowed}:1:1: information: codex: Codex does not load this file from here: it reads the first of its "
        "names in a directory and loads AGENTS.override.md of this directory instead [not-loaded]",
        # The root file used the whole shared budget: Codex reads nothing of the override.
        f"{override}:1:1: warning: codex: the 32768-byte project_doc_max_bytes budget is used up by the files "
        "above this one: Codex never sees this file, from line 1 on [over-budget]",
    ]
    assert result.rc == 0  # a warning fails only with --strict
    # GEMINI.md, which Codex does not load, is checked for secrets alone (docs/security.md#secrets)
    assert result.stderr == ("memory-lens: checked 4 memory file(s) for codex: 3 finding(s): 0 error(s), "
                             "2 warning(s)\n")
    data = ws.json("check", "--agent", "codex", "--format", "json", str(ws.path("p")))
    assert [(f["path"], f["line"], f["severity"], f["code"]) for f in data] == [
        (str(root), 513, "warning", "over-budget"), (str(shadowed), 1, "information", "not-loaded"),
        (str(override), 1, "warning", "over-budget")]
    # The cut falls where Codex's own view says it does.
    view = ws.json("show", str(ws.path("p")), "--agent", "codex")
    assert view["sources"][0]["cutAt"] == 32768 and view["sources"][0]["cutLine"] == 513


def test_check_default_agents_and_gemini_alone(ws: Workspace) -> None:
    _codex_tree(ws)
    # By default codex is enabled because its files exist: the same findings, and Gemini does
    # not flag the AGENTS.md files Codex loads.
    default = ws.run("check", str(ws.path("p")))
    assert [line.rsplit(" ", 1)[1] for line in default.stdout.splitlines()] == ["[over-budget]", "[not-loaded]",
                                                                                  "[over-budget]"]
    assert "for gemini, codex:" in default.stderr
    # Gemini alone: its merged memory is small, and the AGENTS.md files are not among its names.
    alone = ws.run("check", "--agent", "gemini", str(ws.path("p")))
    assert alone.stdout.splitlines() == [
        f"{ws.path(p)}:1:1: information: gemini: Gemini CLI does not load this file: its file names are GEMINI.md. "
        "Add AGENTS.md to context.fileName in .gemini/settings.json (or --filename, setting memoryLens.filenames), "
        "or enable the agent that reads it (--agent codex, setting memoryLens.agents) [not-loaded]"
        for p in ("p/AGENTS.md", "p/sub/AGENTS.md")]
    # Configured for AGENTS.md, Gemini loads them: nothing to say (its budget is not exceeded).
    configured = ws.run("check", "--agent", "gemini", "--filename", "GEMINI.md", "--filename", "AGENTS.md", "--budget", "100000",
                        str(ws.path("p")))
    assert configured.stdout == ""
    # Codex and Gemini together: the Gemini finding is left out, Codex's remain.
    both = ws.run("check", "--agent", "gemini,codex", str(ws.path("p")))
    assert both.stdout == ws.run("check", "--agent", "codex", str(ws.path("p"))).stdout


def test_check_agent_claude_large_file_and_bad_agent(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/CLAUDE.md", "a\n" * 19_999 + "b" * 10 + "\nlast\n")  # 40,014 characters: the 40,000th is a b
    # (--budget: Memory Lens's own budget of merged memory is not what this test is about)
    result = ws.run("check", "--agent", "claude", "--budget", "100000", str(ws.path("p/CLAUDE.md")))
    assert result.stdout == (
        f"{ws.path('p/CLAUDE.md')}:20000:1: warning: claude: 40014 characters, over Claude Code's 40000-character "
        "large-file warning threshold: line 20000 onward is past it (Claude Code warns that a large CLAUDE.md "
        "hurts performance) [over-budget]\n")
    ws.write("p/CLAUDE.md", "a\n" * 20_000)  # exactly 40,000 characters: no warning
    assert ws.run("check", "--agent", "claude", "--budget", "100000", str(ws.path("p/CLAUDE.md"))).stdout == ""
    bad = ws.run("check", "--agent", "nobody", str(ws.path("p")))
    assert bad.rc == 2 and bad.stdout == ""
    assert bad.stderr.startswith("memory-lens: error: --agent: unknown agent 'nobody': use one of gemini, claude, "
                                 "codex, wave") and bad.stderr.count("\n") == 1


def test_check_agent_claude_on_an_agents_md_it_reads_in_place_of_claude_md(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "a\n" * 19_999 + "b" * 10 + "\nlast\n")  # 40,014 characters
    agents_md = str(ws.path("p/AGENTS.md"))
    result = ws.run("check", "--agent", "claude", "--budget", "100000", agents_md)
    assert result.stdout == (
        f"{agents_md}:20000:1: warning: claude: 40014 characters, over Claude Code's 40000-character "
        "large-file warning threshold: line 20000 onward is past it (Claude Code warns that a large CLAUDE.md "
        "hurts performance) [over-budget]\n")
    # Claude Code reads AGENTS.md, so Gemini does not flag it as a file no enabled agent loads.
    both = ws.run("check", "--agent", "gemini,claude", "--budget", "100000", agents_md)
    assert both.stdout == result.stdout
    # With a CLAUDE.md next to it, Claude Code reads that file instead: AGENTS.md is off, and what
    # only it says is lost (not-loaded, with the reason); no size finding on a file not loaded.
    ws.write("p/CLAUDE.md", "- short\n")
    off = ws.run("check", "--agent", "claude", "--budget", "100000", agents_md).stdout
    assert off.startswith(f"{agents_md}:1:1: information: claude: Claude Code does not load this file: this project "
                          f"has {ws.path('p/CLAUDE.md')}, so AGENTS.md is off") and off.endswith("[not-loaded]\n")
    ws.write("p/CLAUDE.md", "- short\n@AGENTS.md\n")  # imported: loaded after all
    assert "[not-loaded]" not in ws.run("check", "--agent", "claude", "--budget", "100000", agents_md).stdout


def test_check_agent_claude_decides_agents_md_per_project_as_claude_code_does(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/sub/AGENTS.md", "a\n" * 19_999 + "b" * 10 + "\nlast\n")  # 40,014 characters
    agents_md = str(ws.path("p/sub/AGENTS.md"))
    assert "40014 characters" in ws.run("check", "--agent", "claude", "--budget", "100000", agents_md).stdout
    # A CLAUDE.local.md of the directory, or a CLAUDE.md above it, turns every AGENTS.md of the chain off.
    for other in ("p/sub/CLAUDE.local.md", "p/CLAUDE.md", "p/.claude/CLAUDE.md"):
        ws.write(other, "- short\n")
        out = ws.run("check", "--agent", "claude", "--budget", "100000", agents_md).stdout
        assert "so AGENTS.md is off" in out and out.count("\n") == 1 and "[not-loaded]" in out, other
        os.remove(ws.path(other))
