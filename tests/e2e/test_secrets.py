"""The secrets guard over LSP: the save command (and the save code action, even with
`save.preview`) and the notes commands refuse text holding a secret with a distinct RequestFailed
error (`data.secret`: kind, line, column; never the secret), and succeed when sent again with
`allowSecret`; a memory file holding one gets a `secret` diagnostic (error) whose quick fix removes
the entry. Samples: tests/secret_samples.py."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from secret_samples import SECRETS

from .conftest import Starter
from .harness import CMD_SAVE, REQUEST_FAILED, Session, Workspace, apply_workspace_edit

CREATE, EDIT = "memoryLens.server.notes.create", "memoryLens.server.notes.edit"
WRITE_DOC = "memoryLens.server.notes.writeDocument"
KEY = SECRETS["stripe live key"]  # "Stripe sk_live_...": the key at column 8
PREVIEW = {"memoryLens": {"save": {"preview": True}}}


def never_echoed(output: str) -> None:
    for text in SECRETS.values():
        for word in re.split(r"[\s\"'`=:@]+", text):
            assert len(word) < 12 or word not in output, word


async def refused(lsp: Session, command: str, args: dict[str, Any]) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as err:
        await lsp.command(command, args)
    assert err.value.code == REQUEST_FAILED, err.value
    never_echoed(str(err.value) + str(err.value.data))
    return err.value


@pytest.mark.clients("visual-studio-code")  # what is refused does not depend on the client
async def test_every_sample_is_refused_by_save_and_notes_create(lsp: Session) -> None:
    project_file = lsp.ws.proj / "GEMINI.md"
    before = project_file.read_bytes()
    app = lsp.uri(lsp.ws.proj / "src" / "app.py")
    for name, text in SECRETS.items():
        for command, args in ((CMD_SAVE, {"text": text, "uri": app}),
                              (CREATE, {"name": name, "content": text, "uri": app})):
            err = await refused(lsp, command, args)
            secret = err.data["secret"]
            assert set(secret) == {"kind", "line", "column"}
            assert str(err).startswith("looks like") or str(err).startswith("the note looks like"), str(err)
            assert "; not saved (send it again with allowSecret: true to save it anyway)" in str(err)
    assert project_file.read_bytes() == before
    assert not (lsp.ws.proj / ".memory-lens").exists()


async def test_allow_secret_saves_and_the_diagnostic_s_quick_fix_removes_the_entry(lsp: Session) -> None:
    project_file = lsp.ws.proj / "GEMINI.md"
    app = lsp.uri(lsp.ws.proj / "src" / "app.py")
    err = await refused(lsp, CMD_SAVE, {"text": KEY, "uri": app})
    assert err.data == {"secret": {"kind": "Stripe Access Key", "line": 1, "column": 8}}
    assert str(err).startswith("looks like a Stripe Access Key at column 8; not saved")
    saved = await lsp.command(CMD_SAVE, {"text": KEY, "uri": app, "allowSecret": True})
    assert saved["added"] is True
    text = project_file.read_text()
    line = text.split("\n").index(f"- {KEY}")

    lsp.open(project_file)
    diags = await lsp.wait_diagnostics(project_file, lambda d: any(x.code == "secret" for x in d))
    (diag,) = [d for d in diags if d.code == "secret"]
    assert diag.severity == types.DiagnosticSeverity.Error and diag.range.start.line == line
    assert diag.message.startswith("looks like a Stripe Access Key at column 10: ")
    actions = await lsp.code_actions(project_file, (line, 0), (line, 0), diagnostics=[diag])
    (fix,) = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert fix.title == "Remove the entry holding a secret"
    fixed = apply_workspace_edit(fix.edit, lsp.encoding, buffers={lsp.uri(project_file): text})
    assert fixed == {project_file: text.replace(f"- {KEY}\n", "").encode("utf-8")}


@pytest.mark.clients("visual-studio-code")
async def test_notes_edit_and_note_documents_refuse_unless_allowed(lsp: Session) -> None:
    await lsp.command(CREATE, {"name": "deploy", "content": "Deploy notes"})
    err = await refused(lsp, EDIT, {"name": "deploy", "content": "Deploy notes\n" + KEY})
    assert err.data == {"secret": {"kind": "Stripe Access Key", "line": 2, "column": 8}}
    edited = await lsp.command(EDIT, {"name": "deploy", "content": "Deploy notes\n" + KEY, "allowSecret": True})
    assert edited["changed"] is True
    uri = edited["note"]["documentUri"]
    err = await refused(lsp, WRITE_DOC, {"documentUri": uri, "markdown": "Other\n" + SECRETS["rsa private key"],
                                         "force": True})
    assert err.data["secret"]["kind"] == "Private Key"


@pytest.mark.clients("visual-studio-code")  # the client that gets the preview edit otherwise
async def test_a_selection_holding_a_secret_is_saved_by_the_command_even_with_preview(ws: Workspace,
                                                                                      start: Starter) -> None:
    notes = ws.write("work/proj/notes.txt", f"deploy: {KEY}\n")
    lsp = await start(init_options=PREVIEW)
    lsp.open(notes)
    end = len(f"deploy: {KEY}")
    actions = await lsp.code_actions(notes, (0, 8), (0, end))
    saves = [a for a in actions if a.kind != types.CodeActionKind.QuickFix]
    assert saves and all(a.edit is None and a.command is not None for a in saves)
    with pytest.raises(JsonRpcException) as err:
        await lsp.command(saves[0].command.command, *saves[0].command.arguments)
    assert err.value.data == {"secret": {"kind": "Stripe Access Key", "line": 1, "column": 8}}


@pytest.mark.clients("visual-studio-code")
async def test_an_open_note_keeps_its_secret_diagnostic_through_a_full_rescan(ws: Workspace, start: Starter) -> None:
    """A project's `.gemini/settings.json` written on disk makes the server scan the workspace
    again and drop what it published under the old settings; an open note file's `secret`
    diagnostic is worked out again, not dropped until its next edit."""
    lsp = await start()
    await lsp.wait_ready()
    created = await ws.cli_json("notes", "create", "deploy", f"deploy: {KEY}", "--allow-secret", cwd=ws.proj)
    note = Path(created["path"])  # the note file itself, opened as a file
    lsp.open(note)
    [found] = await lsp.wait_diagnostics(note, lambda d: [x.code for x in d] == ["secret"])
    since = len(lsp.did_change)
    ws.write("work/proj/.gemini/settings.json", "{}\n")  # settings: a full pass
    await lsp.wait_changed(ws.proj / "GEMINI.md", since)  # the full pass has ended
    await asyncio.sleep(0.5)  # nothing taken away after it either
    assert [(d.code, d.range) for d in lsp.diagnostics(note) or []] == [(found.code, found.range)]
    assert lsp.server_alive()
