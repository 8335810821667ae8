"""`link-outside`: the CLI shows what the agent loads from outside the project (the user asked),
and `check` says so: a memory file linked out of the project, an import that a widened import root
lets out. Neither is reported for a link that stays inside (docs/security.md)."""

from __future__ import annotations

import json

from sandbox import Workspace


def test_a_memory_file_linked_out_of_the_project_is_shown_and_warned_about(ws: Workspace) -> None:
    proj = ws.project("proj")
    key = ws.write("home/.ssh/id_ed25519", "planted key\n")
    ws.symlink("proj/sub/GEMINI.md", str(key))
    ws.write("proj/docs/memory.md", "- inside\n")
    ws.symlink("proj/GEMINI.md", "docs/memory.md")  # a link that stays inside: no finding
    assert "planted key" in ws.ok("show", "sub", cwd=proj).stdout
    found = ws.json("check", "--format", "json", cwd=proj)
    link = proj / "sub" / "GEMINI.md"
    assert [(f["path"], f["line"], f["severity"], f["code"]) for f in found] == [
        (str(link), 1, "warning", "link-outside")]
    assert found[0]["message"] == (
        f"{link} is a link to {key}, outside the project {proj}: the agent loads it; `memory-lens mcp` withholds it")


def test_an_import_let_out_by_the_boundary_markers_is_warned_about_on_its_mention(ws: Workspace) -> None:
    ws.mkdir("etc")  # what `["etc"]` finds at `/` on a real system
    proj = ws.project("proj")
    key = ws.write("home/.ssh/id_ed25519", "planted key\n")
    ws.write_global(json.dumps({"context": {"memoryBoundaryMarkers": ["etc"]}}), name="settings.json")
    ws.write("proj/GEMINI.md", f"- rule\n  see @{key}\n")
    assert "planted key" in ws.ok("show", cwd=proj).stdout
    found = ws.run("check", str(proj / "GEMINI.md"), cwd=proj)
    assert found.stdout.splitlines()[0] == (
        f"{proj / 'GEMINI.md'}:2:7: warning: @{key} imports {key}, outside the project {proj} "
        f"(context.memoryBoundaryMarkers ['etc'] make the import root {ws.root}): the agent loads it; "
        "`memory-lens mcp` withholds it [link-outside]")
