"""`memory-lens show|explain --agent copilot-vscode`: Copilot Chat in VS Code through the CLI, by
the workspace's `.vscode/settings.json` (JSON with comments), else VS Code's defaults."""

from __future__ import annotations

from pathlib import Path

from sandbox import Workspace


def _ws(ws: Workspace) -> Path:
    ws.mkdir("app/.git")
    ws.write("app/AGENTS.md", "agents\n")
    ws.write("app/.github/copilot-instructions.md", "copilot\n")
    ws.write("app/.github/instructions/ts.instructions.md", "---\napplyTo: 'src/**/*.ts'\n---\nts\n")
    ws.write("app/src/x.ts", "")
    ws.write("app/src/y.py", "")
    return ws.path("app")


def test_show_a_file_by_the_defaults(ws: Workspace) -> None:
    root = _ws(ws)
    assert ws.ok("show", "src/x.ts", "--agent", "copilot-vscode", cwd=root).stdout == (
        "---\napplyTo: 'src/**/*.ts'\n---\nts\n\ncopilot\n\nagents\n")
    data = ws.json("show", "src/y.py", "--agent", "copilot-vscode", cwd=root)
    assert data["agent"] == "copilot-vscode" and data["project_root"] == str(root)
    assert [(Path(s["path"]).name, s["loaded"], s.get("when")) for s in data["sources"]] == [
        ("copilot-instructions.md", True, "start"), ("AGENTS.md", True, "start"),
        ("ts.instructions.md", False, "requestable")]


def test_settings_json_turns_files_off_and_bad_values_warn(ws: Workspace) -> None:
    root = _ws(ws)
    ws.write("app/.vscode/settings.json", '{\n  // mine\n  "chat.useAgentsMdFile": false,\n'
                                          '  "github.copilot.chat.codeGeneration.useInstructionFiles": 0,\n}\n')
    run = ws.ok("show", "src/x.ts", "--agent", "copilot-vscode", cwd=root)
    assert run.stdout == "---\napplyTo: 'src/**/*.ts'\n---\nts\n\ncopilot\n"
    assert run.stderr == ("memory-lens: warning: github.copilot.chat.codeGeneration.useInstructionFiles is 0, not "
                          "true or false: Memory Lens takes VS Code's default (true)\n")
    out = ws.ok("explain", "src/x.ts", "--agents", "copilot-vscode", cwd=root).stdout
    assert out == (f"{root / '.github/instructions/ts.instructions.md'}\n"
                   "  copilot-vscode  on-read: matched by src/**/*.ts\n"
                   f"{root / '.github/copilot-instructions.md'}\n"
                   "  copilot-vscode  loaded\n"
                   f"{root / 'AGENTS.md'}\n"
                   "  copilot-vscode  not-loaded: Copilot Chat: chat.useAgentsMdFile is off\n")
