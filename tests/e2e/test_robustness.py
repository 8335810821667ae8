"""Bad input never crashes the server: garbage params, unknown URIs and positions out of range
get a JSON-RPC error or an empty result, odd files (FIFOs, link loops, dangling links) are
reported, odd paths work, and the process keeps answering."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

from .conftest import Starter
from .harness import (
    CMD_EFFECTIVE,
    CMD_LIST,
    CMD_MOVE,
    CMD_REFRESH,
    CMD_REMOVE,
    CMD_SAVE,
    EFFECTIVE,
    FEATURE_CLIENTS,
    METHOD_NOT_FOUND,
    Session,
    Workspace,
    uri_of,
)

EMPTY = (None, [], {})


async def error_or_empty(lsp: Session, method: str, params: Any) -> None:
    """METHOD with PARAMS answers a JSON-RPC error (not an internal one) or an empty result."""
    try:
        result = await lsp.raw_request(method, params)
    except JsonRpcInternalError as err:
        raise AssertionError(f"{method} {params!r}: internal error {err}") from None
    except JsonRpcException:
        pass
    else:
        assert result in EMPTY, (method, params, result)
    assert (await lsp.effective(lsp.ws.proj / "GEMINI.md"))["projectRoot"] == str(lsp.ws.proj), (method, params)


async def test_garbage_requests(lsp: Session) -> None:
    ws = lsp.ws
    memory_file = ws.proj / "GEMINI.md"
    lsp.open(memory_file)
    uri = lsp.uri(memory_file)
    missing = uri_of(ws.proj / "nowhere" / "GEMINI.md")
    far = {"line": 10**6, "character": 10**6}
    range_far = {"start": far, "end": {"line": 10**6 + 1, "character": 0}}
    requests: list[tuple[str, Any]] = [
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": far}),
        ("textDocument/hover", {"textDocument": {"uri": missing}, "position": {"line": 0, "character": 0}}),
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}),
        ("textDocument/hover", {"textDocument": 5}),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": range_far, "context": {"diagnostics": []}}),
        ("textDocument/codeAction", {"textDocument": {"uri": missing}, "context": {"diagnostics": []},
                                     "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}}),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": range_far, "context": {"diagnostics": [
            {"range": range_far, "message": "x", "source": "memory-lens", "code": "duplicate"}]}}),
        ("textDocument/codeAction", {"textDocument": {"uri": "untitled:1"}, "context": {"diagnostics": []},
                                     "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 4}}}),
        ("textDocument/documentSymbol", {"textDocument": {"uri": missing}}),
        ("textDocument/documentSymbol", {"textDocument": {"uri": "untitled:1"}}),
        ("textDocument/codeLens", {"textDocument": {"uri": missing}}),
        ("textDocument/codeLens", {"textDocument": {"uri": "untitled:1"}}),
        ("workspace/symbol", {"query": 5}),
        ("workspace/executeCommand", {"command": CMD_SAVE, "arguments": "x"}),
        ("workspace/executeCommand", {"command": CMD_LIST, "arguments": [[1, 2]]}),
        ("workspace/executeCommand", {"command": CMD_REMOVE, "arguments": [{"uri": "file:///", "line": 1}]}),
        ("workspace/executeCommand", {"command": CMD_REMOVE, "arguments": [{"uri": uri_of(ws.proj), "line": 1}]}),
        ("workspace/executeCommand", {"command": 7}),
    ]
    for method, params in requests:
        await error_or_empty(lsp, method, params)

    # A reversed range is read as the same selection the right way round.
    app = lsp.open(ws.proj / "src" / "app.py", language="python")
    reversed_range = await lsp.raw_request("textDocument/codeAction", {
        "textDocument": {"uri": app}, "context": {"diagnostics": []},
        "range": {"start": {"line": 1, "character": 18}, "end": {"line": 1, "character": 4}}})
    assert {a["title"] for a in reversed_range} == {"Save selection to project memory", "Save selection to global memory"}

    # Odd URIs for memory/effective: an answer (the nearest existing directory) or an error.
    for odd in ("file:///nonexistent/dir/x.md", "file:///", "file://", "not a uri", "file:///%ZZ/GEMINI.md"):
        try:
            result = await lsp.request(EFFECTIVE, {"textDocument": {"uri": odd}})
        except JsonRpcInternalError as err:
            raise AssertionError(f"{odd}: {err}") from None
        except JsonRpcException:
            continue
        assert isinstance(result["text"], str) and isinstance(result["sources"], list), odd

    with pytest.raises(JsonRpcException) as err:
        await lsp.request("memory/nope", {})
    assert err.value.code == METHOD_NOT_FOUND
    assert lsp.server_alive()


async def test_garbage_notifications(lsp: Session) -> None:
    ws = lsp.ws
    lsp.allow_server_errors = True  # a didChange for a document never opened is logged as an error
    notify = lsp.raw_notify
    notify("textDocument/didOpen", {"textDocument": {"uri": 5}})
    notify("textDocument/didChange", {"textDocument": {"uri": uri_of(ws.proj / "GEMINI.md"), "version": 2},
                                      "contentChanges": [{"text": "- not open\n"}]})
    notify("textDocument/didClose", {"textDocument": {"uri": uri_of(ws.proj / "unknown" / "GEMINI.md")}})
    notify("textDocument/didSave", {"textDocument": {"uri": uri_of(ws.proj / "unknown" / "GEMINI.md")}})
    notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": "file:///", "type": 2}, {"uri": "x", "type": 9}]})
    notify("workspace/didChangeWatchedFiles", {"changes": "nope"})
    notify("workspace/didChangeConfiguration", {})
    notify("workspace/didChangeWorkspaceFolders", {"event": {"added": [{"uri": "file:///nonexistent", "name": "x"}],
                                                             "removed": []}})
    notify("$/cancelRequest", {"id": 12345})
    notify("memory/unknownNotification", {"x": 1})
    memory_file = ws.proj / "GEMINI.md"
    lsp.open(memory_file)
    lsp.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=lsp.uri(memory_file), version=5),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(start=types.Position(line=500, character=3), end=types.Position(line=900, character=0)),
            text="- appended past the end\n- appended past the end\n")]))
    await lsp.wait_diagnostics(memory_file, lambda d: [x.code for x in d] == ["duplicate"])
    result = await lsp.effective(ws.proj / "pkg" / "GEMINI.md")
    assert result["projectRoot"] == str(ws.proj)
    assert lsp.server_alive()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_odd_files_are_reported_not_fatal(ws: Workspace, start: Starter) -> None:
    for name in ("pipe", "loop", "dangling"):
        (ws.proj / name).mkdir()
    os.mkfifo(ws.proj / "pipe" / "GEMINI.md")
    os.symlink("GEMINI.md", ws.proj / "loop" / "GEMINI.md")
    os.symlink("missing-target.md", ws.proj / "dangling" / "GEMINI.md")
    odd = ws.root / "work" / "proj" / "my dir #1" / "ünï"
    ws.write("work/proj/my dir #1/ünï/GEMINI.md", "- Odd path rule\n- odd PATH rule\n")
    lsp = await start()
    for name in ("pipe", "loop", "dangling"):
        path = ws.proj / name / "GEMINI.md"
        diags = await lsp.wait_diagnostics(path, lambda d: [x.code for x in d] == ["unreadable"])
        assert diags[0].severity == types.DiagnosticSeverity.Error
        result = await lsp.effective(ws.proj / name / "x.py")
        assert [s["readable"] for s in result["sources"] if s["path"] == str(path)] == [False]
    await lsp.wait_diagnostics(odd / "GEMINI.md", lambda d: [x.code for x in d] == ["duplicate"])
    uri = lsp.uri(odd / "GEMINI.md")
    assert "%20" in uri and "%23" in uri
    raw = "file://" + str(odd / "GEMINI.md").replace(" ", "%20").replace("#", "%23")  # ü, ï unescaped
    for variant in (uri, raw):
        result = await lsp.effective(variant)
        assert result["sources"][-1]["path"] == str(odd / "GEMINI.md"), variant
        assert result["sources"][-1]["uri"] == uri


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
async def test_fifos_that_are_not_open_get_empty_answers(ws: Workspace, start: Starter) -> None:
    """A document that is not open is read from disk the safe way, never opened when it is a
    FIFO: opening one blocks until a writer comes, which would stop the server for good."""
    (ws.proj / "pipe").mkdir()
    memory_fifo, other_fifo = ws.proj / "pipe" / "GEMINI.md", ws.proj / "notes.txt"
    os.mkfifo(memory_fifo)
    os.mkfifo(other_fifo)
    lsp = await start()
    at0 = {"line": 0, "character": 0}
    selection = {"start": at0, "end": {"line": 1, "character": 0}}
    try:
        uri = lsp.uri(memory_fifo)
        assert await lsp.raw_request("textDocument/hover", {"textDocument": {"uri": uri}, "position": at0}) is None
        assert await lsp.raw_request("textDocument/documentSymbol", {"textDocument": {"uri": uri}}) in EMPTY
        for fifo in (memory_fifo, other_fifo):
            actions = await lsp.raw_request("textDocument/codeAction", {
                "textDocument": {"uri": lsp.uri(fifo)}, "range": selection, "context": {"diagnostics": []}})
            assert actions in EMPTY, fifo
        # A didChange without changes for it (pygls then leaves the document unopened).
        lsp.raw_notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": []})
        assert (await lsp.effective(ws.proj))["projectRoot"] == str(ws.proj)  # still answering
    finally:
        for fifo in (memory_fifo, other_fifo):  # a server stuck reading one: let it go (end of file)
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader: nothing is stuck


async def test_uris_the_system_cannot_name(ws: Workspace, start: Starter) -> None:
    """`%00` (a NUL byte) and names too long: treated like non-file URIs (global memory only,
    empty answers, InvalidParams where a file is required), never an internal error, and an
    open document with such a URI does not stop the server's own watch."""
    lsp = await start(env={"MEMORY_LENS_WATCHER": "poll"})  # the poller alone must see changes
    nul = "file://" + str(ws.proj / "a%00b" / "GEMINI.md")
    too_long = lsp.uri(ws.proj / ("x" * 300) / "GEMINI.md")
    global_only = [str(ws.global_file)]
    for odd in (nul, too_long):
        lsp.raw_notify("textDocument/didOpen", {"textDocument": {
            "uri": odd, "languageId": "markdown", "version": 1, "text": "- dup\n- dup\n"}})
        for result in (await lsp.effective(odd), await lsp.command(CMD_EFFECTIVE, {"uri": odd})):
            assert [s["path"] for s in result["sources"]] == global_only, odd
            assert (result["projectRoot"], result["targetDir"]) == (None, None)
        at0 = {"line": 0, "character": 0}
        for method, params in [
            ("textDocument/hover", {"textDocument": {"uri": odd}, "position": at0}),
            ("textDocument/documentSymbol", {"textDocument": {"uri": odd}}),
            ("textDocument/codeLens", {"textDocument": {"uri": odd}}),
            ("workspace/executeCommand", {"command": CMD_REMOVE, "arguments": [{"uri": odd, "line": 1}]}),
            ("workspace/executeCommand", {"command": CMD_MOVE, "arguments": [{"uri": odd, "line": 1, "scope": "global"}]}),
        ]:
            await error_or_empty(lsp, method, params)
        saved = await lsp.command(CMD_SAVE, {"text": f"Saved from {len(odd)}", "uri": odd})
        assert saved["path"] == str(ws.proj / "GEMINI.md")  # as from an untitled buffer: the first folder
    ws.global_file.write_text("- twice\n- twice\n", encoding="utf-8")
    await lsp.wait_diagnostics(ws.global_file, lambda d: [x.code for x in d] == ["duplicate"])
    assert lsp.server_alive()


def make_too_deep(parent: Path) -> Path:
    """Directories under PARENT deeper than PATH_MAX (made one level at a time through directory
    descriptors), with a memory file at the bottom; that file's path."""
    name, path = "d" * 200, parent
    fd = os.open(parent, os.O_RDONLY)
    try:
        while len(str(path)) <= 4096 + 600:
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd, path = child, path / name
        memory = os.open("GEMINI.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(memory, b"- too deep to find\n")
        os.close(memory)
    finally:
        os.close(fd)
    return path / "GEMINI.md"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_a_path_past_path_max_does_not_stop_the_scan(ws: Workspace, start: Starter) -> None:
    """The subtree the system cannot open is skipped with one warning; every other memory file
    is found (before, the scan failed as a whole and refresh said {"files": 0})."""
    (ws.proj / "deep").mkdir()
    make_too_deep(ws.proj / "deep")
    later = ws.write("work/proj/zzz/GEMINI.md", "- twice\n- twice\n")  # walked after the deep subtree
    lsp = await start()
    assert await lsp.command(CMD_REFRESH) == {"files": 4}  # global, project, pkg, zzz
    await lsp.wait_diagnostics(later, lambda d: [x.code for x in d] == ["duplicate"])
    assert await lsp.command(CMD_REFRESH) == {"files": 4}
    warnings = [line for line in lsp.stderr if "skipped part of the workspace" in line]
    assert len(warnings) == 1, warnings
    assert str(ws.proj / "deep" / "ddd") in warnings[0]
