"""`memory-lens explain PATH`: each agent's status for each instruction file, as text or JSON, and
one-line errors for bad input."""

from __future__ import annotations

from sandbox import Workspace


def test_text_names_each_file_and_each_agents_status(ws: Workspace) -> None:
    proj = ws.project("p")
    ws.write("p/AGENTS.md", "- agents\n")
    ws.write("p/CLAUDE.md", "- claude\n")
    ws.write("p/.claude/rules/ts.md", "---\npaths: src/**/*.ts\n---\nts\n")
    ws.write("p/src/a.ts", "")
    out = ws.ok("explain", "src/a.ts", "--agents", "codex,claude", cwd=proj).stdout
    assert out == (f"{proj / 'AGENTS.md'}\n"  # in the order the agents asked for load them
                   "  codex   loaded\n"
                   "  claude  not-loaded: Claude Code: this project has a CLAUDE.md, so AGENTS.md is off "
                   "(Claude Code's instructionFiles mode claude-md-or-agents-md)\n"
                   f"{proj / 'CLAUDE.md'}\n"
                   "  codex   not-loaded: Codex does not read CLAUDE.md\n"
                   "  claude  loaded\n"
                   f"{proj / '.claude/rules/ts.md'}\n"
                   "  codex   not-loaded: Codex does not read ts.md\n"
                   "  claude  on-read: matched by src/**/*.ts\n")
    data = ws.json("explain", str(proj / "src"), "--agents", "codex", cwd=proj)
    assert data == {"path": str(proj / "src"), "agents": ["codex"], "files": [
        {"path": str(proj / "AGENTS.md"), "statuses": {"codex": {"status": "loaded"}}}]}


def test_bad_input_is_one_line(ws: Workspace) -> None:
    proj = ws.project("p")
    missing = ws.run("explain", "nowhere.md", cwd=proj)
    assert missing.rc == 1 and missing.stderr.count("\n") == 1 and "no such file or directory" in missing.stderr
    unknown = ws.run("explain", ".", "--agents", "bob", cwd=proj)
    assert unknown.rc == 2 and "unknown agent 'bob': use one of gemini, claude, codex, wave" in unknown.stderr
