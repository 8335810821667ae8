"""`memory-lens check` on built repositories: near-`redundant` entries across tiers and `drift`
between two agents' files; the bridge the quick fix writes keeps what each agent loads."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import Workspace

SHARED = "".join(f"- Shared rule number {n}: keep the build green and the tests fast\n" for n in range(40))


def findings(ws: Workspace, code: str, *args: str, cwd=None, env=None) -> list[dict]:
    return [f for f in ws.run("check", "--format", "json", *args, cwd=cwd, env=env).json() if f["code"] == code]


def test_an_entry_nearly_the_same_as_a_general_one_is_redundant_with_its_score(ws: Workspace) -> None:
    ws.write_global("- Always run the unit tests before pushing a branch\n- Use pnpm\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- Always run the unit tests before pushing any branch\n"   # near: 98
                            "- Use npm\n"                                                # short: not compared
                            "- Always run the linter before pushing a branch\n")        # too different
    found = findings(ws, "redundant", cwd=ws.path("p"))
    assert [(f["line"], f["severity"]) for f in found] == [(1, "information")]
    assert found[0]["message"] == (f"redundant entry: nearly the same (similarity 98%) as "
                                   f"{ws.global_dir / 'GEMINI.md'}:1, which loads before this file")


def test_two_agents_files_that_are_mostly_the_same_text_drift(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "# Rules\n" + SHARED + "- Codex only: one\n- Codex only: two\n- Codex only: three\n"
                            "- Codex only: four\n")
    ws.write("p/CLAUDE.md", "# Rules\n" + SHARED)
    ws.write("p/GEMINI.md", "# Gemini\n- Something else entirely\n")
    found = findings(ws, "drift", cwd=ws.path("p"))
    message = "drift: AGENTS.md and CLAUDE.md share 41 of 45 lines; 4 lines are only in AGENTS.md"
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [
        (str(ws.path("p/AGENTS.md")), 1, "information"), (str(ws.path("p/CLAUDE.md")), 1, "information")]
    assert found[0]["message"] == message
    assert found[1]["message"] == message + "; make AGENTS.md the source: put `@AGENTS.md` in CLAUDE.md in " \
                                            "place of the copy (quick fix)"


def test_files_that_merely_share_a_few_lines_do_not_drift(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "# Rules\n- One\n- Two\n" + "".join(f"- Codex {n}\n" for n in range(10)))
    ws.write("p/CLAUDE.md", "# Rules\n- One\n- Two\n" + "".join(f"- Claude {n}\n" for n in range(10)))
    assert findings(ws, "drift", cwd=ws.path("p")) == []


TRUSTED = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}  # Gemini CLI reads the project's .gemini/settings.json


def drifted(ws: Workspace, *names: str) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "# Rules\n" + SHARED + "- Codex only: sign every commit\n")
    for name in names:
        ws.write(f"p/{name}", "# Rules\n" + SHARED + ("- Gemini only: answer in French\n" if name == "GEMINI.md" else ""))


def test_copilot_instructions_drift_from_agents_md(ws: Workspace) -> None:
    drifted(ws, ".github/copilot-instructions.md")
    found = findings(ws, "drift", cwd=ws.path("p"))
    assert [f["message"] for f in found] == [
        "drift: .github/copilot-instructions.md and AGENTS.md share 41 of 42 lines; 1 line is only in AGENTS.md"]


def test_fix_drift_removes_a_copilot_copy_that_agents_md_holds_whole(ws: Workspace) -> None:
    drifted(ws, ".github/copilot-instructions.md")
    copilot_before = ws.json("show", "--agent", "copilot", cwd=ws.path("p"))["text"]
    result = ws.ok("check", "--fix", "drift", cwd=ws.path("p"))
    assert "copilot-instructions.md: removed (every line of it is in AGENTS.md)" in result.stderr
    assert not ws.path("p/.github/copilot-instructions.md").exists()
    assert findings(ws, "drift", cwd=ws.path("p")) == []
    after = ws.json("show", "--agent", "copilot", cwd=ws.path("p"))["text"]
    assert "- Codex only: sign every commit" in after and after.count("Shared rule number 7:") == 1
    assert copilot_before.count("Shared rule number 7:") == 2


def test_fix_drift_makes_claude_md_import_agents_md(ws: Workspace) -> None:
    drifted(ws, "CLAUDE.md")
    result = ws.ok("check", "--fix", "drift", cwd=ws.path("p"))
    assert f"{ws.path('p/CLAUDE.md')}: now imports AGENTS.md" in result.stderr
    assert ws.read("p/CLAUDE.md") == "@AGENTS.md\n"
    claude = ws.json("show", "--agent", "claude", cwd=ws.path("p"))
    assert "- Codex only: sign every commit" in claude["text"] and claude["text"].count("Shared rule number 7:") == 1


def test_fix_drift_points_gemini_cli_at_agents_md_through_its_settings(ws: Workspace) -> None:
    drifted(ws, "GEMINI.md")
    ws.write("p/.gemini/settings.json", '{\n  "ui": {"theme": "dark"},\n  "context": {"importFormat": "flat"}\n}\n')
    gemini_md = [f for f in findings(ws, "drift", cwd=ws.path("p"), env=TRUSTED) if f["path"].endswith("GEMINI.md")]
    assert [f["message"].split("; ", 2)[2] for f in gemini_md] == [  # what the fix below does, not an import
        "make AGENTS.md the source: add it to context.fileName in .gemini/settings.json, keep in GEMINI.md only its "
        "own lines (quick fix)"]
    result = ws.ok("check", "--fix", "drift", cwd=ws.path("p"), env=TRUSTED)
    assert "GEMINI.md: kept only the lines AGENTS.md lacks" in result.stderr
    assert json.loads(ws.read("p/.gemini/settings.json")) == {
        "ui": {"theme": "dark"}, "context": {"importFormat": "flat", "fileName": ["AGENTS.md", "GEMINI.md"]}}
    assert ws.read("p/GEMINI.md") == "- Gemini only: answer in French\n"
    gemini = ws.json("show", "--agent", "gemini", cwd=ws.path("p"), env=TRUSTED)
    assert gemini["text"].count("Shared rule number 7:") == 1
    assert "- Codex only: sign every commit" in gemini["text"] and "- Gemini only: answer in French" in gemini["text"]
    explain = ws.json("explain", str(ws.path("p")), "--agents", "gemini", cwd=ws.path("p"), env=TRUSTED)
    loaded = {f["path"] for f in explain["files"] if f["statuses"]["gemini"]["status"] == "loaded"}
    assert {str(ws.path("p/AGENTS.md")), str(ws.path("p/GEMINI.md"))} <= loaded
    assert findings(ws, "drift", cwd=ws.path("p"), env=TRUSTED) == []


def test_fix_drift_refuses_a_gemini_settings_file_with_comments(ws: Workspace) -> None:
    drifted(ws, "GEMINI.md")
    settings = '{\n  // mine\n  "ui": {"theme": "dark"}\n}\n'
    ws.write("p/.gemini/settings.json", settings)
    before = ws.read("p/GEMINI.md")
    result = ws.ok("check", "--fix", "drift", cwd=ws.path("p"), env=TRUSTED)
    assert (f"warning: {ws.path('p/.gemini/settings.json')}: holds comments, which rewriting it would lose; add the "
            "name to context.fileName by hand; nothing changed\n") in result.stderr
    assert ws.read("p/.gemini/settings.json") == settings and ws.read("p/GEMINI.md") == before
    assert len(findings(ws, "drift", cwd=ws.path("p"), env=TRUSTED)) == 2


def test_fix_drift_imports_agents_md_when_gemini_would_not_read_the_project_settings(ws: Workspace) -> None:
    drifted(ws, "GEMINI.md")
    [message] = [f["message"] for f in findings(ws, "drift", cwd=ws.path("p")) if f["path"].endswith("GEMINI.md")]
    assert message.endswith("; make AGENTS.md the source: put `@AGENTS.md` in GEMINI.md in place of the copy (quick fix)")
    ws.ok("check", "--fix", "drift", cwd=ws.path("p"))  # an untrusted folder: no settings file would count
    assert not ws.path("p/.gemini").exists()
    assert ws.read("p/GEMINI.md") == "@AGENTS.md\n\n- Gemini only: answer in French\n"
