"""`memory-lens show --agent` and `add --agent wave`: each agent's view through the CLI."""

from __future__ import annotations

from sandbox import Workspace

LINE = "x" * 63 + "\n"  # 64 bytes a line


def _big_codex_tree(ws: Workspace) -> tuple[bytes, bytes]:
    """A project whose AGENTS.md files add up to more than Codex's 32 KiB."""
    ws.project("p")
    root = b"".join(b"root %04d " % i + LINE[10:].encode() for i in range(400))  # 25600 bytes
    sub = "é".encode() * 3000 + b"\nlast line\n"  # 6011 bytes: the cut falls inside this file
    ws.write("p/AGENTS.md", root)
    ws.write("p/sub/AGENTS.md", sub)
    ws.write("p/sub/deeper/AGENTS.md", "never read\n")
    ws.write("p/GEMINI.md", "- gemini's file\n")
    return root, sub


def test_codex_over_32k_prints_exactly_what_codex_keeps_and_where_it_cut(ws: Workspace) -> None:
    root, sub = _big_codex_tree(ws)
    cut = 32 * 1024 - len(root)  # 7168 bytes of the second file fit... but it has only 6011
    assert cut > len(sub)
    deeper = ws.path("p/sub/deeper")
    ws.write("p/sub/deeper/AGENTS.md", "D" * 2000)  # 2000 bytes: 1157 of them fit
    result = ws.ok("show", str(deeper), "--agent", "codex")
    kept = 32 * 1024 - len(root) - len(sub)
    expected = (root.decode() + "\n\n" + sub.decode() + "\n\n" + "D" * kept)
    assert result.stdout == expected + "\n"
    assert len(result.stdout.encode()) - 1 - 4 == 32 * 1024  # the budget, the two separators aside
    path = ws.path("p/sub/deeper/AGENTS.md")
    assert (f"memory-lens: warning: {path}:1: Codex cuts this file at byte {kept} of 2000 "
            f"(project_doc_max_bytes is 32768); it never sees the rest\n") in result.stderr
    data = ws.json("show", str(deeper), "--agent", "codex")
    assert data["agent"] == "codex" and data["text"] == expected
    assert data["project_root"] == str(ws.path("p"))
    assert [(s["tier"], s["bytes"], s["loaded"], s.get("cutAt")) for s in data["sources"]] == [
        ("project", len(root), True, None), ("project", len(sub), True, None), ("project", 2000, True, kept)]


def test_codex_cut_mid_character_and_files_past_the_budget(ws: Workspace) -> None:
    root, sub = _big_codex_tree(ws)
    ws.write("p/AGENTS.md", root + root[:5000])  # 30600 bytes: 2168 left for the next file
    data = ws.json("show", str(ws.path("p/sub/deeper")), "--agent", "codex")
    first, second, third = data["sources"]
    assert second["cutAt"] == 2168 and second["cutLine"] == 1
    assert data["text"].endswith("é" * 1084)  # 2168 bytes: whole characters
    assert third["loaded"] is False and "budget is used up" in third["reason"]
    ws.write("p/AGENTS.md", root + root[:5001])  # one byte more: the cut splits an é
    text = ws.ok("show", str(ws.path("p/sub")), "--agent", "codex").stdout
    assert text.endswith("é" * 1083 + "\ufffd\n")


def test_codex_user_instructions_and_override(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "project\n")
    ws.write("p/AGENTS.override.md", "local override\n")
    ws.write("home/.codex/AGENTS.md", "\nuser rules\n\n")
    out = ws.ok("show", "--agent", "codex", cwd=ws.path("p")).stdout
    assert out == "user rules\n\n--- project-doc ---\n\nlocal override\n\n"
    other = ws.path("codex-home")
    ws.write("codex-home/AGENTS.md", "from CODEX_HOME")
    out = ws.ok("show", "--agent", "codex", cwd=ws.path("p"), env={"CODEX_HOME": str(other)}).stdout
    assert out.startswith("from CODEX_HOME\n\n--- project-doc ---")


def test_claude_on_a_claude_md_that_imports_agents_md_prints_the_imported_text(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/CLAUDE.md", "@AGENTS.md\n")
    ws.write("p/AGENTS.md", "# Agents\n- Use pnpm\n")
    claude_md, agents_md = ws.path("p/CLAUDE.md"), ws.path("p/AGENTS.md")
    out = ws.ok("show", str(claude_md), "--agent", "claude", cwd=ws.path("p")).stdout
    assert out == (f"Contents of {claude_md} (project instructions, checked into the codebase):\n\n@AGENTS.md\n\n"
                   f"Contents of {agents_md} (project instructions, checked into the codebase):\n\n"
                   "# Agents\n- Use pnpm\n")
    data = ws.json("show", str(claude_md), "--agent", "claude", cwd=ws.path("p"))
    assert [(s["path"], s["tier"], s.get("importedFrom")) for s in data["sources"]] == [
        (str(claude_md), "project", None), (str(agents_md), "import", str(claude_md))]


def test_claude_reads_agents_md_where_there_is_no_claude_md(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "- Use pnpm\n")
    agents_md = ws.path("p/AGENTS.md")
    out = ws.ok("show", "--agent", "claude", cwd=ws.path("p")).stdout
    assert out == f"Contents of {agents_md} (project instructions, checked into the codebase):\n\n- Use pnpm\n"
    data = ws.json("show", "--agent", "claude", cwd=ws.path("p"))
    assert [(s["path"], s["tier"]) for s in data["sources"]] == [(str(agents_md), "project")]
    ws.write("p/CLAUDE.md", "- Claude's own file\n")  # a CLAUDE.md takes AGENTS.md's place
    out = ws.ok("show", "--agent", "claude", cwd=ws.path("p")).stdout
    assert out == (f"Contents of {ws.path('p/CLAUDE.md')} (project instructions, checked into the codebase):\n\n"
                   "- Claude's own file\n")


def test_gemini_stays_the_default_and_other_agents_refuse_annotated(ws: Workspace) -> None:
    _big_codex_tree(ws)
    plain = ws.ok("show", cwd=ws.path("p"))
    assert plain.stdout == "- gemini's file\n"
    assert ws.ok("show", "--agent", "gemini", cwd=ws.path("p")).stdout == plain.stdout
    assert ws.json("show", cwd=ws.path("p")) == ws.json("show", "--agent", "gemini", cwd=ws.path("p"))
    bad = ws.run("show", "--agent", "codex", "--format", "annotated", cwd=ws.path("p"))
    assert bad.rc == 2 and bad.stdout == ""
    assert bad.stderr == ("memory-lens: error: --format annotated is Gemini CLI's form; with --agent codex use "
                          "--format text or json\n")
    unknown = ws.run("show", "--agent", "nobody")
    assert unknown.rc == 2 and "invalid choice: 'nobody'" in unknown.stderr and "\n" == unknown.stderr[-1]


def test_wave_add_writes_bullets_where_wave_reads_them(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "# Project\nSome prose.")
    sub = ws.mkdir("p/sub")
    saved = ws.ok("add", "--agent", "wave", "# Use pnpm instead of npm", cwd=ws.path("p"))
    assert ws.read("p/AGENTS.md") == "# Project\nSome prose.\n- Use pnpm instead of npm\n"
    assert f"saved to project memory {ws.path('p/AGENTS.md')}:3" in saved.stderr
    ws.ok("add", "--agent", "wave", "Use pnpm instead of npm", cwd=ws.path("p"))  # already there
    assert ws.read("p/AGENTS.md").count("pnpm") == 1
    ws.ok("add", "--agent", "wave", "--dir", str(sub), "Sub rule")  # the working directory's own file
    assert ws.read("p/sub/AGENTS.md") == "- Sub rule\n"
    created = ws.ok("add", "--agent", "wave", "--scope", "global", "My name is Alice", cwd=ws.path("p"))
    assert "(file created)" in created.stderr
    assert ws.read("home/.wave/memory.md") == "- My name is Alice\n"
    assert not ws.path("home/.gemini").exists()
    shown = ws.ok("show", "--agent", "wave", cwd=ws.path("p")).stdout
    assert shown == "- My name is Alice\n\n# Project\nSome prose.\n- Use pnpm instead of npm\n"


def test_wave_add_refuses_a_file_ending_in_an_open_fence(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "```\ncode\n")
    bad = ws.run("add", "--agent", "wave", "Use pnpm", cwd=ws.path("p"))
    assert bad.rc == 1 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert f"{ws.path('p/AGENTS.md')}:2: the file ends inside a code block" in bad.stderr
    assert ws.read("p/AGENTS.md") == "```\ncode\n"


def test_wave_add_goes_through_the_write_policy(ws: Workspace) -> None:
    ws.project("p")
    ws.write("outside/AGENTS.md", "- theirs\n")
    ws.symlink("p/AGENTS.md", str(ws.path("outside/AGENTS.md")))
    bad = ws.run("add", "--agent", "wave", "Use pnpm", cwd=ws.path("p"))
    assert bad.rc == 1 and "--follow-outside-links" in bad.stderr
    assert ws.read("outside/AGENTS.md") == "- theirs\n"


def test_claude_show_file_adds_what_loads_on_read_from_the_start_directory(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/CLAUDE.md", "root\n")
    ws.write("p/.claude/rules/py.md", "---\npaths: \"src/**/*.py\"\n---\npython rule\n")
    ws.write("p/src/CLAUDE.md", "src notes\n")
    ws.write("p/src/a.py", "")
    ws.write("p/src/b.txt", "")
    data = ws.json("show", "src/a.py", "--agent", "claude", cwd=ws.path("p"))
    assert [(s["path"], s["when"], s.get("matchedBy")) for s in data["sources"]] == [
        (str(ws.path("p/CLAUDE.md")), "start", None), (str(ws.path("p/src/CLAUDE.md")), "on-read", None),
        (str(ws.path("p/.claude/rules/py.md")), "on-read", "src/**/*.py")]
    assert data["text"].endswith(f"Contents of {ws.path('p/.claude/rules/py.md')}:\n\npython rule\n")
    other = ws.json("show", str(ws.path("p/src/b.txt")), "--agent", "claude", "--start", str(ws.path("p")))
    assert [(s["path"], s["when"], s["loaded"]) for s in other["sources"]] == [
        (str(ws.path("p/CLAUDE.md")), "start", True), (str(ws.path("p/src/CLAUDE.md")), "on-read", True),
        (str(ws.path("p/.claude/rules/py.md")), "on-read", False)]  # listed, with why it does not load
    assert other["sources"][2]["reason"] == f"paths: src/**/*.py does not match {ws.path('p/src/b.txt')}"
    bad = ws.run("show", "--agent", "codex", "--start", str(ws.path("p")))
    assert bad.rc == 2 and bad.stderr == "memory-lens: error: --start applies to --agent claude, cursor, copilot and copilot-vscode only\n"
