"""`memory-lens show --agent copilot`: Copilot CLI's view through the CLI, for a directory and for
a file (its scoped instruction files marked `requestable`, with the glob that matches the file)."""

from __future__ import annotations

from pathlib import Path

from sandbox import Workspace


def _repo(ws: Workspace) -> Path:
    ws.write("app/.git/HEAD", "ref: refs/heads/main\n")
    ws.mkdir("app/.git/objects")
    ws.mkdir("app/.git/refs")
    ws.write("app/AGENTS.md", "agents\n")
    ws.write("app/.github/instructions/ts.instructions.md", "---\napplyTo: 'src/**/*.ts'\n---\nts\n")
    ws.write("app/.github/instructions/all.instructions.md", "always\n")
    ws.write("app/src/x.ts", "")
    return ws.path("app")


def test_show_directory_text_and_json(ws: Workspace) -> None:
    root = _repo(ws)
    text = ws.ok("show", str(root), "--agent", "copilot").stdout
    assert text.startswith("<custom_instruction>\nagents\n\n</custom_instruction>\n\nalways\n\n\nHere is a list")
    data = ws.json("show", str(root), "--agent", "copilot")
    assert data["agent"] == "copilot" and data["project_root"] == str(root)
    assert [(Path(s["path"]).name, s["loaded"], s["when"]) for s in data["sources"]] == [
        ("AGENTS.md", True, "start"), ("all.instructions.md", True, "start"),
        ("ts.instructions.md", False, "requestable")]
    assert "the model may open it" in data["sources"][2]["reason"]


def test_show_file_matches_apply_to(ws: Workspace) -> None:
    root = _repo(ws)
    ws.write("app/notes.md", "")
    ts = ws.json("show", "src/x.ts", "--agent", "copilot", cwd=root)["sources"][2]
    assert ts["matchedBy"] == "src/**/*.ts" and "reason" not in ts
    md = ws.json("show", "notes.md", "--agent", "copilot", cwd=root)["sources"][2]
    assert md["reason"] == f"applyTo `src/**/*.ts` does not match {ws.path('app/notes.md')}"
    started = ws.json("show", str(ws.path("app/src/x.ts")), "--agent", "copilot", "--start", str(root))
    assert started["target_dir"] == str(root) and started["sources"][2]["matchedBy"] == "src/**/*.ts"


def test_start_is_refused_for_an_agent_without_files(ws: Workspace) -> None:
    result = ws.run("show", "--agent", "codex", "--start", str(ws.home))
    assert result.rc == 2 and "--start applies to --agent claude, cursor, copilot and copilot-vscode only" in result.stderr


def test_check_accepts_copilot(ws: Workspace) -> None:
    root = _repo(ws)
    result = ws.run("check", str(root / "AGENTS.md"), "--agent", "copilot")
    assert result.rc == 0, str(result)
