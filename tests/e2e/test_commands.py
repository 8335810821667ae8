"""workspace/executeCommand: memoryLens.server.save, remove, move, list, effective, refresh.

Results are compared with the `memory-lens` CLI on copies of the same files; bad arguments
come back as JSON-RPC errors (InvalidParams for malformed ones, RequestFailed for requests that
cannot be carried out) and leave every file untouched.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from .harness import (
    CMD_EFFECTIVE,
    CMD_LIST,
    CMD_MOVE,
    CMD_REFRESH,
    CMD_REMOVE,
    CMD_SAVE,
    INVALID_PARAMS,
    REQUEST_FAILED,
    FEATURE_CLIENTS,
    Session,
    Workspace,
    apply_workspace_edit,
    uri_of,
    wait_for,
)


async def fails(lsp: Session, command: str, *arguments: Any, code: int) -> str:
    """Run COMMAND, expecting a JSON-RPC error CODE; return its message."""
    snapshot = {p: p.read_bytes() for p in lsp.ws.root.rglob("GEMINI.md") if p.is_file()}
    with pytest.raises(JsonRpcException) as err:
        await lsp.command(command, *arguments)
    assert err.value.code == code, (command, arguments, err.value)
    assert {p: p.read_bytes() for p in lsp.ws.root.rglob("GEMINI.md") if p.is_file()} == snapshot
    return str(err.value)


async def cli_remove_on_copy(ws: Workspace, memory_file: Path, text: str) -> bytes:
    copy = ws.root / "cli-remove-copy"
    (copy / ".git").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(memory_file, copy / "GEMINI.md")
    await ws.cli("remove", "--scope", "project", "--dir", str(copy), "--", text)
    return (copy / "GEMINI.md").read_bytes()


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_save(lsp: Session) -> None:
    ws = lsp.ws
    project_file, app = ws.proj / "GEMINI.md", ws.proj / "src" / "app.py"
    expected = await ws.cli_add_on_copy(project_file, "Use tabs\n  even in Makefiles", "project")
    result = await lsp.command(CMD_SAVE, {"text": "Use tabs\n  even in Makefiles", "scope": "project", "uri": lsp.uri(app)})
    assert project_file.read_bytes() == expected
    assert result == {"path": str(project_file), "uri": uri_of(project_file), "scope": "project",
                      "text": "Use tabs\n  even in Makefiles", "line": 11, "added": True, "created": False}
    assert "Use tabs" in (await lsp.effective(app))["text"]

    again = await lsp.command(CMD_SAVE, {"text": "- use TABS\n even in makefiles.", "uri": lsp.uri(app)})
    assert (again["added"], again["line"], again["scope"]) == (False, 11, "project")  # default scope here
    assert project_file.read_bytes() == expected

    expected_global = await ws.cli_add_on_copy(ws.global_file, "Say please", "global")
    result = await lsp.command(CMD_SAVE, {"text": "Say please", "scope": "global"})
    assert (result["scope"], result["path"], result["added"]) == ("global", str(ws.global_file), True)
    assert ws.global_file.read_bytes() == expected_global

    no_uri = await lsp.command(CMD_SAVE, {"text": "From the palette"})  # the first workspace folder
    assert (no_uri["scope"], no_uri["path"]) == ("project", str(project_file))

    fresh = ws.project("work/proj/vendor/fresh")
    created = await lsp.command(CMD_SAVE, {"text": "New here", "uri": lsp.uri(fresh / "a.py")})
    assert (created["created"], created["path"]) == (True, str(fresh / "GEMINI.md"))
    assert (fresh / "GEMINI.md").read_text(encoding="utf-8") == "## Gemini Added Memories\n- New here\n"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_save_errors(lsp: Session) -> None:
    ws = lsp.ws
    outside = ws.write("work/loose/notes.txt", "x\n")
    message = await fails(lsp, CMD_SAVE, {"text": "x", "scope": "project", "uri": lsp.uri(outside)}, code=REQUEST_FAILED)
    assert "is outside the workspace folders" in message  # outside the workspace: refused (docs/security.md)
    await fails(lsp, CMD_SAVE, {"text": "- ", "scope": "global"}, code=REQUEST_FAILED)
    for bad in ({"text": ""}, {"text": "   "}, {"text": 5}, {"scope": "global"}, {"text": "x", "scope": "team"},
                {"text": "x", "uri": 7}):
        await fails(lsp, CMD_SAVE, bad, code=INVALID_PARAMS)
    await fails(lsp, CMD_SAVE, code=INVALID_PARAMS)  # no arguments at all
    await fails(lsp, CMD_SAVE, "text", code=INVALID_PARAMS)
    await fails(lsp, CMD_SAVE, {"text": "a"}, {"text": "b"}, code=INVALID_PARAMS)
    ws.write("home/.gemini/GEMINI.md", b"- caf\xe9\n")  # an unusable file is never written over
    assert "UTF-8" in await fails(lsp, CMD_SAVE, {"text": "x", "scope": "global"}, code=REQUEST_FAILED)
    assert lsp.server_alive()


async def test_save_into_an_open_buffer_with_unsaved_edits(lsp: Session) -> None:
    ws = lsp.ws
    project_file = ws.proj / "GEMINI.md"
    disk = project_file.read_bytes()
    lsp.open(project_file)
    buffer = disk.decode("utf-8") + "- Typed, not saved\n"
    lsp.change(project_file, buffer)
    copy = ws.write("buffer-copy/GEMINI.md", buffer)
    expected = await ws.cli_add_on_copy(copy, "From the palette", "project")
    result = await lsp.command(CMD_SAVE, {"text": "From the palette", "scope": "project", "uri": lsp.uri(project_file)})
    if lsp.supports("workspace.apply_edit"):  # the edit goes to the buffer, the user saves it
        assert result["unsaved"] is True and result["added"] is True
        assert project_file.read_bytes() == disk
        (applied,) = lsp.applied
        assert apply_workspace_edit(applied.edit, lsp.encoding, buffers={lsp.uri(project_file): buffer}) == {
            project_file: expected}
    else:
        assert lsp.applied == [] and "unsaved" not in result
        assert b"- From the palette" in project_file.read_bytes()


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_remove(lsp: Session) -> None:
    ws = lsp.ws
    project_file = ws.proj / "GEMINI.md"
    expected = await cli_remove_on_copy(ws, project_file, "Keep functions short")
    result = await lsp.command(CMD_REMOVE, {"uri": lsp.uri(project_file), "line": 7})
    assert result == {"path": str(project_file), "uri": lsp.uri(project_file), "scope": "project",
                      "text": "Keep functions short", "line": 7}
    assert project_file.read_bytes() == expected

    result = await lsp.command(CMD_REMOVE, {"text": "use PNPM.", "scope": "global"})
    assert (result["path"], result["scope"], result["line"]) == (str(ws.global_file), "global", 3)
    assert "pnpm" not in ws.global_file.read_text(encoding="utf-8")

    result = await lsp.command(CMD_REMOVE, {"text": "run tests with PYTEST", "uri": lsp.uri(ws.proj / "src" / "app.py")})
    assert (result["path"], result["line"]) == (str(project_file), 6)

    assert "no memory entry" in await fails(lsp, CMD_REMOVE, {"uri": lsp.uri(project_file), "line": 1}, code=REQUEST_FAILED)
    await fails(lsp, CMD_REMOVE, {"uri": lsp.uri(project_file), "line": 999}, code=REQUEST_FAILED)
    await fails(lsp, CMD_REMOVE, {"uri": lsp.uri(ws.proj / "nope" / "GEMINI.md"), "line": 1}, code=REQUEST_FAILED)
    await fails(lsp, CMD_REMOVE, {"text": "not there at all"}, code=REQUEST_FAILED)
    for bad in ({"uri": lsp.uri(project_file), "line": 0}, {"uri": lsp.uri(project_file), "line": "7"},
                {"uri": lsp.uri(project_file), "line": True}, {"uri": "untitled:x", "line": 1}, {"line": 1},
                {"text": ""}, {"text": "x", "scope": "all"}):
        await fails(lsp, CMD_REMOVE, bad, code=INVALID_PARAMS)


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_move(lsp: Session) -> None:
    ws = lsp.ws
    project_file = ws.proj / "GEMINI.md"
    expected_global = await ws.cli_add_on_copy(ws.global_file, "The API lives in src/api", "global")
    expected_project = await cli_remove_on_copy(ws, project_file, "The API lives in src/api")
    result = await lsp.command(CMD_MOVE, {"uri": lsp.uri(project_file), "line": 10, "scope": "global"})
    assert (result["path"], result["scope"], result["added"]) == (str(ws.global_file), "global", True)
    assert ws.global_file.read_bytes() == expected_global
    assert project_file.read_bytes() == expected_project

    await fails(lsp, CMD_MOVE, {"uri": lsp.uri(project_file), "line": 6}, code=INVALID_PARAMS)  # no destination
    await fails(lsp, CMD_MOVE, {"uri": lsp.uri(project_file), "line": 1, "scope": "global"}, code=REQUEST_FAILED)


async def test_list(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    ws.write("work/proj/pkg/GEMINI.md", "# Package\n- Package rule: café 😀\n  on two lines\n")
    for scope in ("all", "project", "global"):
        listed = await lsp.command(CMD_LIST, {"scope": scope, "uri": lsp.uri(target)})
        cli = await ws.cli_json("list", "--scope", scope, "--dir", str(target.parent))
        assert [{k: e[k] for k in ("text", "path", "line", "scope")} for e in listed] == cli
        for e in listed:
            assert e["uri"] == uri_of(e["path"])
            assert e["range"]["start"] == {"line": e["line"] - 1, "character": 0}
            assert e["range"]["end"]["line"] == e["endLine"] - 1
    (two_lines,) = [e for e in await lsp.command(CMD_LIST, {"uri": lsp.uri(target)}) if "café" in e["text"]]
    assert (two_lines["line"], two_lines["endLine"]) == (2, 3)
    assert two_lines["range"]["end"]["character"] == len("  on two lines")

    default = await lsp.command(CMD_LIST)  # the first workspace folder, every scope
    assert [{k: e[k] for k in ("text", "path", "line", "scope")} for e in default] == await ws.cli_json(
        "list", "--dir", str(ws.proj))
    await fails(lsp, CMD_LIST, {"scope": "bogus"}, code=INVALID_PARAMS)
    await fails(lsp, CMD_LIST, {"scope": "all"}, {"scope": "global"}, code=INVALID_PARAMS)  # one object only


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_effective_and_refresh(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    assert await lsp.command(CMD_EFFECTIVE, {"uri": lsp.uri(target)}) == await lsp.effective(target)
    annotated = await lsp.command(CMD_EFFECTIVE, {"uri": lsp.uri(target), "annotated": True})
    assert annotated["annotated"].startswith("--- Context from: ")
    for bad in ({}, {"uri": 5}, {"uri": ""}):
        await fails(lsp, CMD_EFFECTIVE, bad, code=INVALID_PARAMS)

    assert await lsp.command(CMD_REFRESH) == {"files": 3}
    hidden = ws.write("work/proj/deep/down/GEMINI.md", "- dup\n- dup\n")  # in no open chain
    assert await lsp.command(CMD_REFRESH) == {"files": 4}
    await lsp.wait_diagnostics(hidden, lambda d: [x.code for x in d] == ["duplicate"])

    with pytest.raises(JsonRpcException):
        await lsp.command("memoryLens.server.nope", {})
    await wait_for(lsp.server_alive)


async def test_move_a_global_entry_to_project_memory(lsp: Session) -> None:
    ws = lsp.ws
    project_file = ws.proj / "GEMINI.md"
    expected_project = await ws.cli_add_on_copy(project_file, "Prefer small commits", "project")
    # Without contextUri the destination is the first workspace folder's project.
    result = await lsp.command(CMD_MOVE, {"uri": lsp.uri(ws.global_file), "line": 2, "scope": "project"})
    assert (result["path"], result["scope"], result["added"]) == (str(project_file), "project", True)
    assert project_file.read_bytes() == expected_project
    assert ws.global_file.read_text(encoding="utf-8") == "# Global\n- Use pnpm\n"
    # With contextUri: the project of that document (a workspace folder: commands write nowhere else).
    other = ws.project("work/other")
    ws.write("work/other/main.py", "x = 1\n")
    lsp.raw_notify("workspace/didChangeWorkspaceFolders", {"event": {
        "added": [{"uri": lsp.uri(other), "name": "other"}], "removed": []}})
    result = await lsp.command(CMD_MOVE, {"uri": lsp.uri(ws.global_file), "line": 2, "scope": "project",
                                          "contextUri": lsp.uri(other / "main.py")})
    assert result["path"] == str(other / "GEMINI.md")
    assert (other / "GEMINI.md").read_text(encoding="utf-8") == "## Gemini Added Memories\n- Use pnpm\n"
    assert ws.global_file.read_text(encoding="utf-8") == "# Global\n"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_remove_and_move_edit_memory_files_only(lsp: Session) -> None:
    ws = lsp.ws
    readme = ws.write("work/proj/README.md", "# Readme\n- Important bullet\n")
    code = ws.write("work/proj/src/app2.py", "x = 1\n- y\n")
    for path in (readme, code):
        before = path.read_bytes()
        for command, args in ((CMD_REMOVE, {"uri": lsp.uri(path), "line": 2}),
                              (CMD_MOVE, {"uri": lsp.uri(path), "line": 2, "scope": "global"})):
            message = await fails(lsp, command, args, code=REQUEST_FAILED)
            assert "not a memory file" in message and "GEMINI.md" in message and "\n" not in message
            assert path.read_bytes() == before
    assert "Important bullet" not in ws.global_file.read_text(encoding="utf-8")


async def test_remove_from_an_open_buffer_with_unsaved_edits(lsp: Session) -> None:
    """Like save: the entry goes from the buffer, not the disk, when the client can apply edits.
    `line` is a line of the file on disk (as `list` gives it): the buffer's copy of that entry
    goes, wherever the unsaved edits have moved it."""
    ws = lsp.ws
    project_file = ws.proj / "GEMINI.md"
    disk = project_file.read_bytes()
    lsp.open(project_file)
    buffer = "- Typed, not saved\n" + disk.decode("utf-8")  # every entry one line further down
    lsp.change(project_file, buffer)
    copy = ws.write("buffer-copy/GEMINI.md", buffer)
    expected = await cli_remove_on_copy(ws, copy, "Keep functions short")
    result = await lsp.command(CMD_REMOVE, {"uri": lsp.uri(project_file), "line": 7})
    assert (result["text"], result["path"], result["scope"]) == ("Keep functions short", str(project_file), "project")
    if lsp.supports("workspace.apply_edit"):
        assert result["unsaved"] is True and result["line"] == 8  # where it is in the buffer
        assert project_file.read_bytes() == disk
        (applied,) = lsp.applied
        assert apply_workspace_edit(applied.edit, lsp.encoding, buffers={lsp.uri(project_file): buffer}) == {
            project_file: expected}
        # By text, too; and an entry the buffer no longer has is refused, nothing removed anywhere.
        result = await lsp.command(CMD_REMOVE, {"text": "the API lives in SRC/API", "uri": lsp.uri(project_file)})
        assert (result["unsaved"], result["line"]) == (True, 11)
        lsp.change(project_file, buffer.replace("- Run tests with pytest\n", ""))
        message = await fails(lsp, CMD_REMOVE, {"uri": lsp.uri(project_file), "line": 6}, code=REQUEST_FAILED)
        assert "unsaved" in message
        await fails(lsp, CMD_MOVE, {"uri": lsp.uri(project_file), "line": 6, "scope": "global"}, code=REQUEST_FAILED)
        assert len(lsp.applied) == 2 and project_file.read_bytes() == disk
        assert "Run tests" not in ws.global_file.read_text(encoding="utf-8")
    else:
        assert lsp.applied == [] and "unsaved" not in result and result["line"] == 7
        assert b"Keep functions short" not in project_file.read_bytes()
