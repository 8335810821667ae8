"""`memory-lens check` on Claude Code's own files: an import it does not follow, a `~/.claude.json`
that is not JSON, an import loop, an AGENTS.md turned off with more in it, the auto memory's cut —
one line each, and the rest still shown."""

from __future__ import annotations

from sandbox import Workspace


def test_bad_claude_input_gives_one_line_each_and_show_still_shows(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/CLAUDE.md", "- project rule\n@a.md\nsee @~/notes.md\n")
    ws.write("p/a.md", "@b.md\n")
    ws.write("p/b.md", "@a.md\n")
    ws.write("home/notes.md", "private notes\n")
    ws.write("home/.claude.json", "{not json")
    ws.write("p/AGENTS.md", "- project rule\n- only here\n")
    result = ws.run("check", "--agent", "claude", str(ws.path("p")))
    claude_md, agents_md = ws.path("p/CLAUDE.md"), ws.path("p/AGENTS.md")
    lines = result.stdout.splitlines()
    assert [(line.split(":")[1], line.rsplit("[", 1)[1]) for line in lines] == [
        ("1", "not-loaded]"), ("2", "import-cycle]"), ("3", "import-outside-root]"), ("1", "not-loaded]")]
    assert lines[0].startswith(f"{agents_md}:1:1: information: claude: Claude Code does not load this file: this "
                               f"project has {claude_md}, so AGENTS.md is off")
    assert "1 of its lines is in no file Claude Code loads (the first: line 2)" in lines[0]
    assert lines[3].startswith(f"{claude_md}:1:1: information: claude: Claude Code loads nothing: ")
    assert "not valid JSON" in lines[3] and "refuses to start" in lines[3]
    assert "a.md is reached again through its own imports (a loop)" in lines[1]
    assert "until the project's external imports are approved" in lines[2]
    shown = ws.run("show", "--agent", "claude", cwd=ws.path("p"))
    assert shown.rc == 0 and "- project rule" in shown.stdout and "private notes" not in shown.stdout
