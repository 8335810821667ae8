"""Gemini CLI's settings.json through the CLI: it chooses the memory files, the project root and
the import format, and flags and MEMORY_LENS_* still win (docs/agents.md, "Gemini's settings")."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace


@pytest.fixture
def configured(ws: Workspace) -> Workspace:
    """A project with GEMINI.md and AGENTS.md; the user's settings.json names AGENTS.md."""
    ws.write("home/.gemini/settings.json", json.dumps({"context": {"fileName": "AGENTS.md"}}))
    ws.project("p")
    ws.write("p/GEMINI.md", "gemini")
    ws.write("p/AGENTS.md", "agents")
    return ws


def test_settings_json_file_name_is_loaded_before_gemini_md(configured: Workspace) -> None:
    assert configured.ok("show", cwd=configured.path("p")).stdout == "agents\n\ngemini\n"


def test_filename_flag_beats_settings_json(configured: Workspace) -> None:
    result = configured.ok("show", "--filename", "GEMINI.md", cwd=configured.path("p"))
    assert result.stdout == "gemini\n"


def test_environment_beats_settings_json(configured: Workspace) -> None:
    result = configured.ok("show", cwd=configured.path("p"), env={"MEMORY_LENS_FILENAMES": "GEMINI.md"})
    assert result.stdout == "gemini\n"


def test_add_writes_to_the_first_configured_name(configured: Workspace) -> None:
    configured.ok("add", "use pnpm", cwd=configured.path("p"))
    assert "use pnpm" in configured.read("p/AGENTS.md")
    assert configured.read("p/GEMINI.md") == "gemini"


@pytest.mark.parametrize("content, why", [
    ("{\"context\": {\"fileName\": \"AGENTS.md\"", "not valid JSON"),
    ("[\"AGENTS.md\"]", "expected a JSON object"),
    ("{\"context\": {\"fileName\": 7}}", "context.fileName must be a string or a list of strings"),
    ("{\"context\": {\"memoryBoundaryMarkers\": \".git\"}}", "context.memoryBoundaryMarkers must be a list"),
])
def test_malformed_settings_json_is_one_warning_and_ignored(ws: Workspace, content: str, why: str) -> None:
    settings = ws.write("home/.gemini/settings.json", content)
    ws.project("p")
    ws.write("p/GEMINI.md", "gemini")
    ws.write("p/AGENTS.md", "agents")
    result = ws.ok("show", cwd=ws.path("p"))
    assert result.stdout == "gemini\n"
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"memory-lens: warning: ignoring {settings}: ") and why in lines[0]


def test_import_format_flat_from_project_settings_of_a_trusted_folder(ws: Workspace) -> None:
    ws.project("p")
    ws.write("home/.gemini/trustedFolders.json", json.dumps({str(ws.path("p")): "TRUST_FOLDER"}))
    ws.write("p/.gemini/settings.json", '{"context": {"importFormat": "flat"}} // project')
    ws.write("p/GEMINI.md", "root @./a.md\n")
    ws.write("p/a.md", " a \n")
    p = ws.path("p")
    assert ws.ok("show", cwd=p).stdout == (
        f"--- File: {p} ---\nroot @./a.md\n--- End of File: {p} ---\n\n"
        f"--- File: {p}/a.md ---\na\n--- End of File: {p}/a.md ---\n")
    ws.write("home/.gemini/trustedFolders.json", json.dumps({str(ws.path("p")): "DO_NOT_TRUST"}))
    assert ws.ok("show", cwd=p).stdout.startswith("root <!-- Imported from: ./a.md -->")


def test_boundary_markers_choose_the_project_root(ws: Workspace) -> None:
    ws.write("home/.gemini/settings.json", json.dumps({"context": {"memoryBoundaryMarkers": ["package.json"]}}))
    ws.project("repo")
    ws.write("repo/GEMINI.md", "repo")
    ws.write("repo/pkg/package.json", "{}")
    ws.write("repo/pkg/GEMINI.md", "pkg")
    shown = ws.ok("show", "--format", "json", cwd=ws.path("repo/pkg")).json()
    assert shown["project_root"] == str(ws.path("repo/pkg"))
    assert shown["text"] == "pkg"


def test_check_reads_the_project_settings_of_the_file_it_checks(ws: Workspace) -> None:
    ws.project("p")
    ws.write("home/.gemini/trustedFolders.json", json.dumps({str(ws.path("p")): "TRUST_FOLDER"}))
    ws.write("p/.gemini/settings.json", '{"context": {"fileName": "AGENTS.md"}}')
    ws.write("p/AGENTS.md", "- use pnpm\n")
    ws.write("p/GEMINI.md", "- use pnpm\n")
    result = ws.run("check", str(ws.path("p/GEMINI.md")), "--format", "json", cwd=ws.home)
    # AGENTS.md loads before GEMINI.md in this project's chain, so GEMINI.md's entry is redundant.
    assert [(f["code"], f["path"]) for f in result.json()] == [("redundant", str(ws.path("p/GEMINI.md")))], result


def test_check_follows_the_import_format(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "@./l1.md\n")
    for i in range(1, 7):
        ws.write(f"p/l{i}.md", f"level {i} @./l{i + 1}.md\n")
    ws.write("p/l7.md", "level 7\n")
    tree = ws.run("check", str(ws.path("p/GEMINI.md")), "--format", "json", cwd=ws.path("p"))
    assert "import-depth" in {f["code"] for f in tree.json()}, tree
    ws.write("home/.gemini/settings.json", '{"context": {"importFormat": "flat"}}')
    flat = ws.run("check", str(ws.path("p/GEMINI.md")), "--format", "json", cwd=ws.path("p"))
    assert flat.json() == [], flat  # Gemini's flat format has no depth limit
