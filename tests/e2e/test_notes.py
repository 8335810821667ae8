"""workspace/executeCommand `memoryLens.server.notes.*`, note documents, `memory/notesDidChange`
and notes in workspace/symbol, over LSP stdio; the notes are the same files the CLI sees."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from .conftest import Starter
from .harness import FEATURE_CLIENTS, INVALID_PARAMS, REQUEST_FAILED, Session, wait_for

LIST, SEARCH, READ = "memoryLens.server.notes.list", "memoryLens.server.notes.search", "memoryLens.server.notes.read"
CREATE, EDIT, DELETE = "memoryLens.server.notes.create", "memoryLens.server.notes.edit", "memoryLens.server.notes.delete"
READ_DOC, WRITE_DOC = "memoryLens.server.notes.readDocument", "memoryLens.server.notes.writeDocument"
SUGGEST = "memoryLens.server.notes.suggestName"


async def fails(lsp: Session, command: str, args: dict[str, Any], code: int) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as err:
        await lsp.command(command, args)
    assert err.value.code == code, err.value
    return err.value


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_notes_commands(lsp: Session) -> None:
    ws = lsp.ws
    notes_dir = ws.proj / ".memory-lens" / "notes"
    app = lsp.uri(ws.proj / "src" / "app.py")
    created = await lsp.command(CREATE, {"name": "api_key_rotation", "content": "Rotate API keys every 90 days",
                                         "tags": ["security"], "uri": app})
    path = notes_dir / "api_key_rotation.json"
    root = str(ws.proj)
    assert created == {
        "name": "api_key_rotation", "scope": "project", "tags": ["security"], "content": "Rotate API keys every 90 days",
        "createdAt": created["createdAt"], "updatedAt": created["createdAt"], "revision": created["revision"],
        "path": str(path), "fileUri": lsp.uri(path),
        "documentUri": f"memory-lens-note:/project/api_key_rotation.md?root={root.replace('/', '%2F')}",
        "markdown": "---\ntags: security\n---\nRotate API keys every 90 days"}
    await lsp.command(CREATE, {"name": "Style guide", "content": "Use tabs", "scope": "global"})
    cli = await ws.cli_json("notes", "read", "api_key_rotation", cwd=ws.proj)
    assert cli["content"] == "Rotate API keys every 90 days" and cli["revision"] == created["revision"]

    page = await lsp.command(LIST, {})
    assert [(n["scope"], n["name"]) for n in page["notes"]] == [("project", "api_key_rotation"), ("global", "Style guide")]
    first = page["notes"][0]
    assert set(first) == {"name", "scope", "tags", "snippet", "createdAt", "updatedAt", "shadowed", "revision", "path",
                          "fileUri", "documentUri"}
    assert first["snippet"] == "Rotate API keys every 90 days" and page["total"] == 2 and page["nextCursor"] is None
    assert page["projectRoot"] == root and page["layout"] == "memory-lens"
    assert page["directories"] == {"project": str(notes_dir), "global": str(ws.home / ".config" / "memory-lens" / "notes")}
    found = await lsp.command(SEARCH, {"query": "rot*"})
    assert [n["name"] for n in found["notes"]] == ["api_key_rotation"] and found["notes"][0]["score"] > 0
    assert [n["name"] for n in (await lsp.command(SEARCH, {"query": "rot* AND NOT tabs"}))["notes"]] == ["api_key_rotation"]
    assert (await lsp.command(LIST, {"tags": ["SECURITY"]}))["total"] == 1

    read = await lsp.command(READ, {"name": "Style guide"})
    assert read["scope"] == "global" and read["content"] == "Use tabs"
    edited = await lsp.command(EDIT, {"name": "api_key_rotation", "content": "Every 30 days", "tags": ["ops"],
                                      "revision": created["revision"]})
    assert edited["changed"] is True and edited["note"]["tags"] == ["ops"]
    stale = await fails(lsp, EDIT, {"name": "api_key_rotation", "content": "x", "revision": created["revision"]},
                        REQUEST_FAILED)
    assert "changed since it was read" in stale.message
    assert stale.data == {"conflict": True, "revision": edited["note"]["revision"]}
    assert json.loads(path.read_text())["content"] == "Every 30 days"

    exists = await fails(lsp, CREATE, {"name": "api_key_rotation", "content": "again"}, REQUEST_FAILED)
    assert exists.message == "a project note named 'api_key_rotation' already exists; edit it, or delete it first"
    await fails(lsp, CREATE, {"content": "no name"}, INVALID_PARAMS)
    await fails(lsp, LIST, {"scope": "team"}, INVALID_PARAMS)
    await fails(lsp, LIST, {"limit": 0}, INVALID_PARAMS)
    assert "at most 128" in (await fails(lsp, CREATE, {"name": "x" * 129, "content": "c"}, REQUEST_FAILED)).message

    deleted = await lsp.command(DELETE, {"name": "api_key_rotation"})
    assert deleted["deleted"]["path"] == str(path) and not path.exists()
    assert "no note named" in (await fails(lsp, READ, {"name": "api_key_rotation"}, REQUEST_FAILED)).message


async def test_pages_and_problems(ws, start: Starter) -> None:
    for i in range(25):
        ws.write(f"work/proj/.memory-lens/notes/n{i:02d}.json", json.dumps({
            "name": f"n{i:02d}", "content": f"body {i}", "tags": [], "created_at": "2025-10-08T03:07:11Z",
            "updated_at": "2025-10-08T03:07:11Z"}))
    bad = ws.write("work/proj/.memory-lens/notes/zz-bad.json", "[]")
    lsp = await start()
    first = await lsp.command(LIST, {"limit": 10})
    assert len(first["notes"]) == 10 and first["total"] == 25 and first["nextCursor"]
    assert first["problems"] == [{"scope": "project", "path": str(bad), "uri": lsp.uri(bad),
                                  "reason": "is not a note: expected a JSON object, found list"}]
    names = [n["name"] for n in first["notes"]]
    cursor = first["nextCursor"]
    while cursor:
        page = await lsp.command(LIST, {"limit": 10, "cursor": cursor})
        names += [n["name"] for n in page["notes"]]
        cursor = page["nextCursor"]
    assert names == [f"n{i:02d}" for i in range(25)]


async def test_note_documents_open_and_save_as_markdown(lsp: Session) -> None:
    ws = lsp.ws
    note = await lsp.command(CREATE, {"name": "Deploy / staging", "content": "make deploy\n", "tags": ["ops"]})
    uri = note["documentUri"]
    assert uri.startswith("memory-lens-note:/project/Deploy%20%2F%20staging.md?root=")
    doc = await lsp.command(READ_DOC, {"documentUri": uri})
    assert doc["markdown"] == "---\ntags: ops\n---\nmake deploy\n" and doc["size"] == len(doc["markdown"].encode())
    assert doc["name"] == "Deploy / staging" and doc["scope"] == "project" and doc["mtime"] > 0

    saved = await lsp.command(WRITE_DOC, {"documentUri": uri, "markdown": "---\ntags: ops, ci\n---\nmake deploy ENV=staging\n"})
    assert saved["changed"] is True and saved["note"]["tags"] == ["ops", "ci"]
    assert (await ws.cli_json("notes", "read", "Deploy / staging", cwd=ws.proj))["content"] == "make deploy ENV=staging\n"

    # Changed on disk by someone else since it was read: the save is refused, then forced.
    await ws.cli("notes", "edit", "Deploy / staging", "changed by an agent", cwd=ws.proj)
    conflict = await fails(lsp, WRITE_DOC, {"documentUri": uri, "markdown": "mine"}, REQUEST_FAILED)
    assert "changed on disk since it was opened" in conflict.message and conflict.data["conflict"] is True
    assert (await ws.cli_json("notes", "read", "Deploy / staging", cwd=ws.proj))["content"] == "changed by an agent"
    forced = await lsp.command(WRITE_DOC, {"documentUri": uri, "markdown": "mine", "force": True})
    assert forced["note"]["content"] == "mine" and forced["note"]["tags"] == ["ops", "ci"]  # no front matter: tags kept
    again = await lsp.command(WRITE_DOC, {"documentUri": uri, "markdown": "mine, again"})  # the new revision is known
    assert again["note"]["content"] == "mine, again"

    bad_front = await fails(lsp, WRITE_DOC, {"documentUri": uri, "markdown": "---\nname: x\n---\nbody"}, REQUEST_FAILED)
    assert "only 'tags" in bad_front.message
    await fails(lsp, READ_DOC, {"documentUri": "file:///etc/passwd"}, INVALID_PARAMS)
    await fails(lsp, READ_DOC, {"documentUri": "memory-lens-note:/project/x.md"}, INVALID_PARAMS)  # no root
    global_note = await lsp.command(CREATE, {"name": "prefs", "content": "tabs", "scope": "global"})
    assert global_note["documentUri"] == "memory-lens-note:/global/prefs.md"
    assert (await lsp.command(READ_DOC, {"documentUri": global_note["documentUri"]}))["markdown"].endswith("tabs")

    suggested = await lsp.command(SUGGEST, {"content": "\n  # Deploy / staging\nmore lines"})
    assert suggested == {"name": "Deploy / staging (2)", "scope": "project"}
    long = await lsp.command(SUGGEST, {"content": "word " * 40, "scope": "global"})
    assert long["scope"] == "global" and len(long["name"]) <= 60 and not long["name"].endswith(" ")


async def test_notes_did_change_reports_changes_from_anywhere(lsp: Session) -> None:
    ws = lsp.ws
    await lsp.command(LIST, {})  # the server starts watching notes on first use
    await ws.cli("notes", "create", "from the cli", "text", cwd=ws.proj)
    expected = "memory-lens-note:/project/from%20the%20cli.md?root=" + str(ws.proj).replace("/", "%2F")
    await wait_for(lambda: any(expected in uris for uris in lsp.notes_changed), what="memory/notesDidChange")
    lsp.notes_changed.clear()
    ws.write("home/.config/memory-lens/notes/hand.json", json.dumps({
        "name": "hand written", "content": "x", "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z"}))
    await wait_for(lambda: any("memory-lens-note:/global/hand%20written.md" in uris for uris in lsp.notes_changed),
                   what="memory/notesDidChange for a global note")
    lsp.notes_changed.clear()
    ws.write("work/proj/.memory-lens/notes/broken.json", "{")
    await wait_for(lambda: lsp.notes_changed, what="memory/notesDidChange for a broken file")
    assert "broken.json" in (await lsp.command(LIST, {}))["problems"][0]["path"]


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_workspace_symbols_include_notes(ws, start: Starter) -> None:
    lsp = await start()
    checklist = await lsp.command(CREATE, {"name": "deploy checklist", "content": "staging first", "tags": ["ops"]})
    await lsp.command(CREATE, {"name": "pnpm tips", "content": "pnpm dlx", "scope": "global"})
    found = list(await lsp.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="depl")) or [])
    notes = [s for s in found if s.kind == types.SymbolKind.Object]
    assert [(s.name, s.container_name, s.location.uri) for s in notes] == [
        ("deploy checklist", "project note · ops", checklist["fileUri"])]
    pnpm = list(await lsp.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="PNPM")) or [])
    assert {(s.name, s.kind) for s in pnpm} == {("Use pnpm", types.SymbolKind.String),
                                                ("pnpm tips", types.SymbolKind.Object)}
    everything = list(await lsp.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="")) or [])
    assert {s.name for s in everything if s.kind == types.SymbolKind.Object} == {"deploy checklist", "pnpm tips"}

    documents = await start(init_options={"memoryLens": {"noteDocuments": True}})
    (symbol,) = [s for s in await documents.client.workspace_symbol_async(types.WorkspaceSymbolParams(query="checklist"))
                 if s.kind == types.SymbolKind.Object]
    assert symbol.location.uri.startswith("memory-lens-note:/project/deploy%20checklist.md?root=")


async def test_notes_settings_pick_the_layout_and_directory(ws, start: Starter) -> None:
    elsewhere = ws.root / "elsewhere"
    lsp = await start(init_options={"memoryLens": {"notes": {"layout": "aicoder", "globalDir": str(elsewhere)}}})
    await lsp.command(CREATE, {"name": "build_issues", "content": "node 20"})
    await lsp.command(CREATE, {"name": "prefs", "content": "tabs", "scope": "global"})
    assert (ws.proj / ".aicoder" / "memory" / "build_issues.json").is_file()
    assert json.loads((ws.proj / ".aicoder" / "memory" / "index.json").read_text())["notes"]["build_issues"]
    assert (elsewhere / "prefs.json").is_file()
    page = await lsp.command(LIST, {})
    assert page["layout"] == "aicoder" and page["directories"]["global"] == str(elsewhere)
    bad = await start(init_options={"memoryLens": {"notes": {"layout": "vim"}}})
    assert (await bad.command(LIST, {}))["layout"] == "memory-lens"
