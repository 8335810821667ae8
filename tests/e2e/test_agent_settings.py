"""Gemini's settings.json in the language server: `~/.gemini/settings.json` and each project's own
`.gemini/settings.json` choose the memory files and the import format of memory/effective, edits
are followed while the server runs, and the `memoryLens.filenames` setting still wins."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Workspace, path_of, wait_for

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)


def configure(ws: Workspace) -> None:
    ws.write("home/.gemini/settings.json",
             json.dumps({"context": {"fileName": "AGENTS.md", "importFormat": "flat"}}))
    ws.write("work/proj/AGENTS.md", "agents @./more.md\n")
    ws.write("work/proj/more.md", "more\n")


async def test_settings_json_names_and_flat_imports(ws: Workspace, start: Starter) -> None:
    configure(ws)
    lsp = await start()
    result = await lsp.effective(ws.proj)
    paths = [s["path"] for s in result["sources"]]
    assert paths == [str(ws.global_dir / "GEMINI.md"), str(ws.proj / "AGENTS.md"), str(ws.proj / "GEMINI.md")]
    assert (f"--- File: {ws.proj} ---\nagents @./more.md\n--- End of File: {ws.proj} ---\n\n"
            f"--- File: {ws.proj}/more.md ---\nmore\n--- End of File: {ws.proj}/more.md ---") in result["text"]
    show = await ws.cli_json("show", str(ws.proj))  # the CLI, run from the same home, agrees
    assert result["text"] == show["text"]


async def test_filenames_setting_beats_settings_json(ws: Workspace, start: Starter) -> None:
    configure(ws)
    lsp = await start(init_options={"memoryLens": {"filenames": ["GEMINI.md"]}})
    result = await lsp.effective(ws.proj)
    assert [s["path"] for s in result["sources"]] == [str(ws.global_dir / "GEMINI.md"), str(ws.proj / "GEMINI.md")]
    assert "--- File: " in result["text"]  # the import format still comes from settings.json


def two_trusted_projects(ws: Workspace) -> tuple[Path, Path]:
    """work/a and work/b, each a git project with an AGENTS.md and a GEMINI.md; work/ is trusted,
    so Gemini reads each project's own .gemini/settings.json."""
    ws.write("home/.gemini/trustedFolders.json",
             json.dumps({os.path.realpath(ws.root / "work"): "TRUST_FOLDER"}))
    a, b = ws.project("work/a"), ws.project("work/b")
    for p in (a, b):
        ws.write(p / "AGENTS.md", f"{p.name} agents\n")
        ws.write(p / "GEMINI.md", f"{p.name} gemini\n")
    ws.write("work/a/.gemini/settings.json", json.dumps({"context": {"fileName": "AGENTS.md"}}))
    return a, b


def names(result: dict) -> list[str]:
    return [Path(s["path"]).relative_to(Path(s["path"]).parents[1]).as_posix() for s in result["sources"]
            if s["scope"] == "project"]


async def test_each_project_has_its_own_settings_json(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)
    lsp = await start(folders=[a, b])
    assert names(await lsp.effective(a / "GEMINI.md")) == ["a/AGENTS.md", "a/GEMINI.md"]
    assert names(await lsp.effective(b / "GEMINI.md")) == ["b/GEMINI.md"]
    for p in (a, b):  # the CLI, run from the same home, agrees
        assert (await lsp.effective(p / "GEMINI.md"))["text"] == (await ws.cli_json("show", str(p)))["text"]


async def test_settings_json_edited_while_the_server_runs(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)
    lsp = await start(folders=[a, b])
    assert names(await lsp.effective(b / "GEMINI.md")) == ["b/GEMINI.md"]
    ws.write("work/b/.gemini/settings.json", json.dumps({"context": {"fileName": ["AGENTS.md"]}}))
    result = await lsp.effective(b / "GEMINI.md")
    assert names(result) == ["b/AGENTS.md", "b/GEMINI.md"]
    assert result["text"].endswith("b agents\n\nb gemini")
    # Edited in place: a's file now asks for flat imports and no longer names AGENTS.md.
    ws.write("work/a/.gemini/settings.json", json.dumps({"context": {"importFormat": "flat"}}))
    result = await lsp.effective(a / "GEMINI.md")
    assert names(result) == ["a/GEMINI.md"]
    assert f"--- File: {a} ---\na gemini\n--- End of File: {a} ---" in result["text"]
    ws.write("home/.gemini/trustedFolders.json", "{}")  # no longer trusted: the user's settings alone
    assert "--- File: " not in (await lsp.effective(a / "GEMINI.md"))["text"]


async def test_unusable_project_settings_json_is_one_warning(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)
    lsp = await start(folders=[a, b])
    ws.write("work/a/.gemini/settings.json", "{not json")
    assert names(await lsp.effective(a / "GEMINI.md")) == ["a/GEMINI.md"]
    assert names(await lsp.effective(a / "notes.txt")) == ["a/GEMINI.md"]
    warning = f"ignoring {a}/.gemini/settings.json: not valid JSON"
    await wait_for(lambda: any(warning in line for line in lsp.stderr))
    assert sum(warning in line for line in lsp.stderr) == 1


DUPLICATED = "- run the tests before committing\n- run the tests before committing\n"


def codes(diags: list | None) -> set:
    return {d.code for d in diags or []}


async def test_each_project_checks_its_own_memory_names(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)  # only a's settings.json names AGENTS.md
    for p in (a, b):
        ws.write(p / "AGENTS.md", DUPLICATED)
    lsp = await start(folders=[a, b])
    await lsp.wait_diagnostics(a / "AGENTS.md", lambda d: "duplicate" in codes(d))
    await lsp.wait_ready()
    assert "duplicate" not in codes(lsp.diagnostics(b / "AGENTS.md"))
    assert lsp.uri(a / "AGENTS.md") in lsp.changed_uris()
    assert lsp.uri(b / "AGENTS.md") not in lsp.changed_uris()
    hover = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=lsp.uri(a / "AGENTS.md")),
                              position=types.Position(line=0, character=3))
    assert await lsp.request(types.TEXT_DOCUMENT_HOVER, hover) is not None
    hover.text_document.uri = lsp.uri(b / "AGENTS.md")
    assert await lsp.request(types.TEXT_DOCUMENT_HOVER, hover) is None
    if lsp.supports("workspace.did_change_watched_files.dynamic_registration"):
        # The client watches every project's names and the projects' settings.json files.
        await wait_for(lambda: "**/AGENTS.md" in watched_globs(lsp), what="a file watcher for AGENTS.md")
        assert "**/.gemini/settings.json" in watched_globs(lsp)


def watched_globs(lsp) -> list:
    """The glob patterns of the file watchers last registered with the client."""
    registrations = [r for r in lsp.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    if not registrations:
        return []
    options = registrations[-1].register_options
    watchers = options["watchers"] if isinstance(options, dict) else options.watchers
    return [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers]


async def test_settings_json_edit_adds_and_removes_a_memory_name(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)
    ws.write(b / "AGENTS.md", DUPLICATED)
    lsp = await start(folders=[a, b])
    await lsp.wait_ready()
    assert "duplicate" not in codes(lsp.diagnostics(b / "AGENTS.md"))
    since = len(lsp.did_change)
    ws.write("work/b/.gemini/settings.json", json.dumps({"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}))
    await lsp.wait_diagnostics(b / "AGENTS.md", lambda d: "duplicate" in codes(d))
    await lsp.wait_changed(b / "AGENTS.md", since)
    ws.write("work/b/.gemini/settings.json", json.dumps({"context": {}}))  # edited again: GEMINI.md alone
    await lsp.wait_diagnostics(b / "AGENTS.md", lambda d: "duplicate" not in codes(d))


async def test_untrusted_workspace_ignores_project_settings_json(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)
    ws.write(a / "AGENTS.md", DUPLICATED)
    lsp = await start(folders=[a, b], init_options={"trusted": False})
    assert names(await lsp.effective(a / "GEMINI.md")) == ["a/GEMINI.md"]
    await lsp.wait_ready()
    assert "duplicate" not in codes(lsp.diagnostics(a / "AGENTS.md"))


async def test_projects_inside_one_folder_have_their_own_names(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)  # one folder above both: a's names are found by the walk
    for p in (a, b):
        ws.write(p / "AGENTS.md", DUPLICATED)
    lsp = await start(folders=[ws.root / "work"])
    await lsp.wait_diagnostics(a / "AGENTS.md", lambda d: "duplicate" in codes(d))
    await lsp.wait_ready()
    assert "duplicate" not in codes(lsp.diagnostics(b / "AGENTS.md"))
    found = await lsp.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="tests before committing"))
    assert {path_of(s.location.uri) for s in found or []} == {a / "AGENTS.md"}


async def test_filenames_setting_beats_each_projects_settings_json(ws: Workspace, start: Starter) -> None:
    a, b = two_trusted_projects(ws)  # a's settings.json names AGENTS.md; the editor setting wins
    for p in (a, b):
        ws.write(p / "AGENTS.md", DUPLICATED)
        ws.write(p / "GEMINI.md", DUPLICATED)
    lsp = await start(folders=[a, b], init_options={"memoryLens": {"filenames": ["GEMINI.md"]}})
    for p in (a, b):
        await lsp.wait_diagnostics(p / "GEMINI.md", lambda d: "duplicate" in codes(d))
    await lsp.wait_ready()
    assert "duplicate" not in codes(lsp.diagnostics(a / "AGENTS.md"))
    hover = types.HoverParams(text_document=types.TextDocumentIdentifier(uri=lsp.uri(a / "AGENTS.md")),
                              position=types.Position(line=0, character=3))
    assert await lsp.request(types.TEXT_DOCUMENT_HOVER, hover) is None
    hover.text_document.uri = lsp.uri(a / "GEMINI.md")
    assert await lsp.request(types.TEXT_DOCUMENT_HOVER, hover) is not None


async def test_user_settings_json_edit_adds_a_memory_name(ws: Workspace, start: Starter) -> None:
    ws.write("work/proj/AGENTS.md", DUPLICATED)
    lsp = await start()
    await lsp.wait_ready()
    assert "duplicate" not in codes(lsp.diagnostics(ws.proj / "AGENTS.md"))
    since = len(lsp.did_change)
    ws.write("home/.gemini/settings.json", json.dumps({"context": {"fileName": "AGENTS.md"}}))
    await lsp.wait_diagnostics(ws.proj / "AGENTS.md", lambda d: "duplicate" in codes(d))
    await lsp.wait_changed(ws.proj / "AGENTS.md", since)
