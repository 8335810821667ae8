"""The end-to-end harness: the sandbox, the client session, and helpers to wait and to apply edits.

`conftest.py` turns these into fixtures. A `Session` is one `memory-lens serve` process and the
pytest-lsp client talking to it over stdio; it answers what a real client answers
(`client/registerCapability`, `workspace/applyEdit`, `workspace/codeLens/refresh`), records what
the server sends (`memory/didChange`, diagnostics, edits, registrations), and notes every
message the client did not declare support for.

Waiting is always `wait_for(predicate)`: it polls until the predicate holds; its timeouts are
generous upper bounds against hangs, never performance assertions.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Callable, Union

import pytest_lsp
from lsprotocol import types
from pygls.capabilities import get_capability
from pytest_lsp import LanguageClient

import sandbox

CLIENTS = ("visual-studio-code", "neovim", "neovim@v0.7.0", "bare")
# Every feature test runs at least with these: VS Code's, Neovim's and a bare client's capabilities.
# A test whose server behaviour does not depend on the capabilities may leave out Neovim 0.7.
FEATURE_CLIENTS = ("visual-studio-code", "neovim", "bare")
WAIT_SECONDS = 20.0  # upper bound against hangs; live updates normally take well under a second
REQUEST_SECONDS = 30.0

EFFECTIVE = "memory/effective"
DID_CHANGE = "memory/didChange"
NOTES_DID_CHANGE = "memory/notesDidChange"
CMD_SAVE = "memoryLens.server.save"
CMD_REMOVE = "memoryLens.server.remove"
CMD_MOVE = "memoryLens.server.move"
CMD_LIST = "memoryLens.server.list"
CMD_EFFECTIVE = "memoryLens.server.effective"
CMD_REFRESH = "memoryLens.server.refresh"
SAVE_PROJECT = "Save selection to project memory"
SAVE_GLOBAL = "Save selection to global memory"
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
REQUEST_FAILED = -32803

GLOBAL_TEXT = "# Global\n- Prefer small commits\n- Use pnpm\n"
PROJECT_TEXT = (
    "# Project\n"
    "\n"
    "Notes for agents working here.\n"
    "\n"
    "## Conventions\n"
    "- Run tests with pytest\n"
    "- Keep functions short\n"
    "\n"
    "## Gemini Added Memories\n"
    "- The API lives in src/api\n"
)
PACKAGE_TEXT = "# Package\n- Package rule: no globals\n"


# Capabilities ------------------------------------------------------------------------------


def capabilities_for(name: str) -> types.ClientCapabilities:
    """The capabilities a client of that NAME declares (`bare`: none at all)."""
    if name == "bare":
        return types.ClientCapabilities()
    return pytest_lsp.client_capabilities(name)


def supports(caps: types.ClientCapabilities, field: str) -> bool:
    try:
        return bool(get_capability(caps, field, None))
    except Exception:
        return False


# JSON values: results as plain JSON values, the way the server reads params.

from memory_lens.lsp.convert import json_values  # noqa: E402


# Text edits --------------------------------------------------------------------------------

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lsp_lines(text: str) -> list[str]:
    """TEXT split into LSP lines, each keeping its line ending."""
    return _LINE.findall(text)


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def offset_at(text: str, pos: types.Position, encoding: str) -> int:
    """The string offset of LSP position POS in TEXT (characters counted in ENCODING)."""
    lines = lsp_lines(text)
    if pos.line >= len(lines):
        assert pos.character == 0 or pos.line == len(lines) - 1, f"position {pos} is past the end"
        return len(text)
    start = sum(len(line) for line in lines[: pos.line])
    body = lines[pos.line].rstrip("\r\n")
    count = 0
    for i, ch in enumerate(body):
        if count >= pos.character:
            assert count == pos.character, f"position {pos} splits a character"
            return start + i
        count += _units(ch, encoding)
    assert count == pos.character, f"position {pos} is past the end of line {body!r}"
    return start + len(body)


def position_at(text: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of string OFFSET in TEXT."""
    start = 0
    for n, line in enumerate(lsp_lines(text)):
        if offset <= start + len(line.rstrip("\r\n")):
            return types.Position(line=n, character=_units(text[start:offset], encoding))
        start += len(line)
    return types.Position(line=len(lsp_lines(text)), character=0)


def apply_text_edits(text: str, edits: list[Any], encoding: str) -> str:
    """TEXT with the LSP text EDITS applied (all ranges refer to the original text)."""
    spans = sorted(((offset_at(text, e.range.start, encoding), offset_at(text, e.range.end, encoding), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def uri_of(path: Path | str) -> str:
    from pygls.uris import from_fs_path

    return from_fs_path(os.fspath(path)) or Path(path).as_uri()


def path_of(uri: str) -> Path:
    from pygls.uris import to_fs_path

    fs = to_fs_path(uri)
    assert fs, uri
    return Path(fs)


def apply_workspace_edit(edit: types.WorkspaceEdit, encoding: str,
                         buffers: dict[str, str] | None = None) -> dict[Path, bytes]:
    """Apply EDIT the way an editor would: resource operations and text edits, in order, to the
    files on disk (or to BUFFERS, the open documents' texts by URI). Returns the new bytes of
    every file it touched; writes nothing."""
    buffers = buffers or {}
    state: dict[str, str | None] = {}

    def current(uri: str) -> str:
        if uri not in state:
            if uri in buffers:
                state[uri] = buffers[uri]
            else:
                p = path_of(uri)
                state[uri] = p.read_bytes().decode("utf-8") if p.exists() else None
        value = state[uri]
        assert value is not None, f"edit of {uri}, which does not exist (no CreateFile before it?)"
        return value

    if edit.document_changes is not None:
        assert edit.changes is None, "both changes and documentChanges"
        for change in edit.document_changes:
            if isinstance(change, types.CreateFile):
                exists = state.get(change.uri) is not None or (change.uri not in state and path_of(change.uri).exists())
                if not exists:
                    state[change.uri] = ""
                else:
                    opts = change.options
                    assert opts is not None and (opts.ignore_if_exists or opts.overwrite), "CreateFile of an existing file"
                    if opts.overwrite:
                        state[change.uri] = ""
            elif isinstance(change, types.TextDocumentEdit):
                uri = change.text_document.uri
                state[uri] = apply_text_edits(current(uri), list(change.edits), encoding)
            else:
                raise AssertionError(f"unexpected resource operation {change!r}")
    else:
        for uri, edits in (edit.changes or {}).items():
            state[uri] = apply_text_edits(current(uri), list(edits), encoding)
    return {path_of(uri): text.encode("utf-8") for uri, text in state.items() if text is not None}


def text_edits_of(edit: types.WorkspaceEdit) -> list[Any]:
    """Every text edit of EDIT, whichever form it takes."""
    if edit.document_changes is not None:
        return [e for c in edit.document_changes if isinstance(c, types.TextDocumentEdit) for e in c.edits]
    return [e for edits in (edit.changes or {}).values() for e in edits]


def check_workspace_edit(caps: types.ClientCapabilities, edit: types.WorkspaceEdit) -> None:
    """EDIT uses only what the client declared (documentChanges, resource operations, annotations)."""
    if edit.document_changes is not None:
        assert supports(caps, "workspace.workspace_edit.document_changes"), "documentChanges sent to a client without them"
        ops = get_capability(caps, "workspace.workspace_edit.resource_operations", None) or []
        for change in edit.document_changes:
            if isinstance(change, types.CreateFile):
                assert types.ResourceOperationKind.Create in ops, "CreateFile sent to a client without it"
    annotated = bool(edit.change_annotations) or any(
        isinstance(e, types.AnnotatedTextEdit) for e in text_edits_of(edit))
    if annotated:
        assert supports(caps, "workspace.workspace_edit.change_annotation_support"), \
            "change annotations sent to a client without them"


# Waiting -----------------------------------------------------------------------------------


async def wait_for(predicate: Callable[[], Any], timeout: float = WAIT_SECONDS, interval: float = 0.05,
                   what: str = "the condition") -> Any:
    """Poll PREDICATE (sync or async) until it returns something truthy; return that value.
    TIMEOUT is a generous upper bound against hangs, not a performance assertion."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = predicate()
            if inspect.isawaitable(last):
                last = await last
        except AssertionError as err:  # predicates may assert, to say what is still wrong
            last = err
        else:
            if last:
                return last
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last: {last!r}")
        await asyncio.sleep(interval)


# The sandbox -------------------------------------------------------------------------------


class Workspace(sandbox.Workspace):
    """The sandbox of `tests/sandbox.py` with the end-to-end default tree (`build_default`) and
    the CLI run from asyncio, to compare the server's answers with `memory-lens`'s."""

    def __init__(self, root: Path, bytecode_cache: Path | None = None) -> None:
        super().__init__(root, bytecode_cache)
        self.global_file = self.global_dir / "GEMINI.md"
        self.proj = root / "work" / "proj"

    def build_default(self) -> None:
        """home/.gemini/GEMINI.md; work/proj (a git project) with GEMINI.md, pkg/GEMINI.md,
        pkg/sub/mod.py and src/app.py. No file has a finding."""
        self.write_global(GLOBAL_TEXT)
        self.project("work/proj")
        self.write("work/proj/GEMINI.md", PROJECT_TEXT)
        self.write("work/proj/pkg/GEMINI.md", PACKAGE_TEXT)
        self.write("work/proj/pkg/sub/mod.py", "VALUE = 1\n")
        self.write("work/proj/src/app.py", "def main():\n    return 'hello'\n")

    async def cli(self, *args: str, cwd: Path | None = None, ok: bool = True) -> tuple[int, str, str]:
        """Run the real `memory-lens ARGS` with this sandbox's environment."""
        proc = await asyncio.create_subprocess_exec(
            *self.command, *args, cwd=str(cwd or self.home), env=self.env(),
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), REQUEST_SECONDS)
        rc = proc.returncode or 0
        if ok:
            assert rc == 0, f"memory-lens {' '.join(args)} -> {rc}\n{err.decode()}"
        return rc, out.decode("utf-8"), err.decode("utf-8")

    async def cli_json(self, *args: str, cwd: Path | None = None) -> Any:
        _, out, _ = await self.cli(*args, "--format", "json", cwd=cwd)
        return json.loads(out)

    async def cli_add_on_copy(self, memory_file: Path, text: str, scope: str) -> bytes:
        """What `memory-lens add TEXT --scope SCOPE` makes of a copy of MEMORY_FILE (which may
        not exist): the copy's bytes afterwards."""
        copy_root = self.root / f"cli-copy-{time.monotonic_ns()}"
        if scope == "project":
            (copy_root / ".git").mkdir(parents=True)
            target, args = copy_root / memory_file.name, ["--dir", str(copy_root)]
        else:
            copy_root.mkdir(parents=True)
            target, args = copy_root / memory_file.name, ["--global-dir", str(copy_root), "--dir", str(copy_root)]
        if memory_file.exists():
            shutil.copyfile(memory_file, target)
        await self.cli("add", "--scope", scope, *args, "--", text)
        return target.read_bytes()


# The session -------------------------------------------------------------------------------


class Session:
    """One running server and the test client talking to it."""

    def __init__(self, client: LanguageClient, ws: Workspace, name: str, caps: types.ClientCapabilities) -> None:
        self.client = client
        self.ws = ws
        self.name = name
        self.caps = caps
        self.encoding = "utf-16"
        self.result: types.InitializeResult | None = None
        self.did_change: list[list[str]] = []
        self.notes_changed: list[list[str]] = []
        self.published: list[types.PublishDiagnosticsParams] = []
        self.configuration_requests: list[types.ConfigurationParams] = []
        self.applied: list[types.ApplyWorkspaceEditParams] = []
        self.registrations: list[types.Registration] = []
        self.unregistrations: list[types.Unregistration] = []
        self.lens_refreshes = 0
        self.violations: list[str] = []
        self.stderr: list[str] = []
        self.allow_server_errors = False
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    def supports(self, field: str) -> bool:
        return supports(self.caps, field)

    def uri(self, path: Path | str) -> str:
        return uri_of(path)

    # Requests --------------------------------------------------------------------------------

    async def request(self, method: str, params: Any) -> Any:
        """Send a request and return its result as plain JSON values."""
        result = await asyncio.wait_for(self.client.protocol.send_request_async(method, params), REQUEST_SECONDS)
        return json_values(result)

    @contextlib.contextmanager
    def untyped(self):
        """Within: send params exactly as given, even malformed ones for LSP methods (the client
        otherwise converts them to the method's lsprotocol type first)."""
        protocol = self.client.protocol
        protocol.get_message_type = lambda method: None  # shadows the method on this instance
        try:
            yield
        finally:
            del protocol.get_message_type

    async def raw_request(self, method: str, params: Any) -> Any:
        """Send a request with PARAMS as they are; return its result as plain JSON values."""
        with self.untyped():
            future = self.client.protocol.send_request(method, params)
        return json_values(await asyncio.wait_for(asyncio.wrap_future(future), REQUEST_SECONDS))

    def raw_notify(self, method: str, params: Any) -> None:
        with self.untyped():
            self.client.protocol.notify(method, params)

    async def effective(self, target: Path | str, **extra: Any) -> dict[str, Any]:
        uri = target if isinstance(target, str) else self.uri(target)
        return await self.request(EFFECTIVE, {"textDocument": {"uri": uri}, **extra})

    async def command(self, command: str, *arguments: Any) -> Any:
        result = await asyncio.wait_for(self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=list(arguments))), REQUEST_SECONDS)
        return json_values(result)

    async def code_actions(self, path: Path, start: tuple[int, int], end: tuple[int, int],
                           diagnostics: list[types.Diagnostic] | None = None,
                           only: list[str] | None = None) -> list[types.CodeAction]:
        result = await asyncio.wait_for(self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=self.uri(path)),
            range=types.Range(start=types.Position(line=start[0], character=start[1]),
                              end=types.Position(line=end[0], character=end[1])),
            context=types.CodeActionContext(diagnostics=diagnostics or [], only=only))), REQUEST_SECONDS)
        actions = list(result or [])
        for a in actions:
            assert isinstance(a, types.CodeAction), f"a bare Command instead of a CodeAction: {a!r}"
            if a.disabled is not None:
                assert self.supports("text_document.code_action.disabled_support"), \
                    "a disabled code action sent to a client without disabledSupport"
            if a.edit is not None:
                check_workspace_edit(self.caps, a.edit)
        return actions

    # Documents -------------------------------------------------------------------------------

    def open(self, path: Path, text: str | None = None, language: str = "markdown") -> str:
        uri = self.uri(path)
        if text is None:
            text = path.read_bytes().decode("utf-8")
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)))
        return uri

    def change(self, path: Path, text: str) -> int:
        """Replace the whole open buffer with TEXT (unsaved); return the new version."""
        uri = self.uri(path)
        self.versions[uri] += 1
        self.texts[uri] = text
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
        return self.versions[uri]

    def save(self, path: Path) -> None:
        """Write the open buffer to disk, then tell the server (as an editor's save does)."""
        uri = self.uri(path)
        path.write_bytes(self.texts[uri].encode("utf-8"))
        self.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    def close(self, path: Path) -> None:
        uri = self.uri(path)
        self.versions.pop(uri, None)
        self.texts.pop(uri, None)
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    def close_all(self) -> None:
        """Close every document this session has open."""
        for uri in list(self.texts):
            self.close(path_of(uri))

    # Observations ----------------------------------------------------------------------------

    def diagnostics(self, path: Path) -> list[types.Diagnostic] | None:
        """The diagnostics last published for PATH (None: never published)."""
        published = self.client.diagnostics.get(self.uri(path))
        return None if published is None else list(published)

    async def wait_diagnostics(self, path: Path, predicate: Callable[[list[types.Diagnostic]], Any],
                               what: str = "") -> list[types.Diagnostic]:
        def check() -> tuple[list[types.Diagnostic]]:
            published = self.diagnostics(path)
            assert published is not None, "no diagnostics published yet"
            assert predicate(published), [(d.range.start.line, d.code) for d in published]
            return (published,)  # truthy even when there are none

        (found,) = await wait_for(check, what=what or f"diagnostics of {path}")
        return found

    def changed_uris(self) -> set[str]:
        return {u for batch in self.did_change for u in batch}

    async def wait_changed(self, path: Path, since: int = 0) -> None:
        uri = self.uri(path)
        await wait_for(lambda: any(uri in batch for batch in self.did_change[since:]),
                       what=f"memory/didChange naming {uri}")

    async def wait_ready(self) -> None:
        """Until the first workspace scan has been published (its memory/didChange)."""
        await wait_for(lambda: self.did_change, what="the first memory/didChange")

    def server_alive(self) -> bool:
        server = self.client._server  # noqa: SLF001 - the process pytest-lsp started
        return server is not None and server.returncode is None

    def log_text(self) -> str:
        return "\n".join(m.message for m in self.client.log_messages)


def _fix_code_action_structuring(client: LanguageClient) -> None:
    """lsprotocol reads any code action result that has a `command` field as a bare Command,
    even when that field is a Command object (a CodeAction that runs a command). Editors tell
    them apart by the field's type; so does this hook."""
    converter = client.protocol._converter  # noqa: SLF001 - the client's own converter

    def code_action_or_command(obj: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, types.Command)
        return converter.structure(obj, types.CodeAction)

    converter.register_structure_hook(Union[types.Command, types.CodeAction], code_action_or_command)


def _plain_results(client: LanguageClient) -> None:
    """The results of Memory Lens's own requests as the JSON the server sent: pygls makes them
    namedtuples, renaming a key that is no identifier (`copilot-vscode`) to `_6`; an editor's
    client reads JSON as it is."""
    from pygls.protocol.json_rpc import JsonRPCResponseMessage

    client.protocol._converter.register_structure_hook(  # noqa: SLF001 - the client's own converter
        JsonRPCResponseMessage, lambda obj, cls: cls(**obj))


def install_handlers(session: Session) -> None:
    """Answer and record what the server asks of the client, checking it against the capabilities."""
    client = session.client
    caps = session.caps

    def publish_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        # pytest-lsp keeps the last diagnostics per URI; keep every publication too (versions).
        session.published.append(params)
        client.diagnostics[params.uri] = params.diagnostics

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish_diagnostics
    answer_configuration = client.protocol.fm.features[types.WORKSPACE_CONFIGURATION]

    def configuration(params: types.ConfigurationParams) -> list[Any]:
        if not supports(caps, "workspace.configuration"):
            session.violations.append("workspace/configuration sent to a client without it")
        session.configuration_requests.append(params)
        return answer_configuration(params)

    client.protocol.fm.features[types.WORKSPACE_CONFIGURATION] = configuration
    _fix_code_action_structuring(client)
    _plain_results(client)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        for reg in params.registrations:
            if reg.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES and not supports(
                    caps, "workspace.did_change_watched_files.dynamic_registration"):
                session.violations.append(f"registered {reg.method} without dynamic registration support")
            session.registrations.append(reg)

    @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister_capability(params: types.UnregistrationParams) -> None:
        session.unregistrations.extend(params.unregisterations)

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def code_lens_refresh(params: None) -> None:
        if not supports(caps, "workspace.code_lens.refresh_support"):
            session.violations.append("workspace/codeLens/refresh sent to a client without refreshSupport")
        session.lens_refreshes += 1

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        if not supports(caps, "workspace.apply_edit"):
            session.violations.append("workspace/applyEdit sent to a client without applyEdit")
        try:
            check_workspace_edit(caps, params.edit)
        except AssertionError as err:
            session.violations.append(str(err))
        session.applied.append(params)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(DID_CHANGE)
    def memory_did_change(params: Any) -> None:
        data = json_values(params)
        uris = data.get("uris") if isinstance(data, dict) else None
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            session.violations.append(f"memory/didChange with params {data!r}")
            uris = []
        session.did_change.append(uris)

    @client.feature(NOTES_DID_CHANGE)
    def notes_did_change(params: Any) -> None:
        data = json_values(params)
        uris = data.get("documentUris") if isinstance(data, dict) else None
        if not isinstance(uris, list) or not all(isinstance(u, str) for u in uris):
            session.violations.append(f"memory/notesDidChange with params {data!r}")
            uris = []
        session.notes_changed.append(uris)


async def collect_stderr(session: Session) -> None:
    """Replace pytest-lsp's stderr forwarder with one that also keeps the lines."""
    client = session.client
    forwarder = client._stderr_forwarder  # noqa: SLF001
    if forwarder is not None:
        forwarder.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await forwarder
    server = client._server  # noqa: SLF001
    assert server is not None and server.stderr is not None

    async def collect() -> None:
        while (line := await server.stderr.readline()) != b"":
            text = line.decode("utf-8", "replace")
            session.stderr.append(text)
            sys.stderr.write(text)

    client._stderr_forwarder = asyncio.create_task(collect())  # noqa: SLF001




async def start_session(ws: Workspace, name: str, *, folders: list[Path] | None = None, init_options: Any = None,
                        configuration: dict[str, Any] | None = None,
                        capabilities: types.ClientCapabilities | None = None, wait: bool = True,
                        env: dict[str, str] | None = None) -> Session:
    """Start `memory-lens serve` for WS and initialize it as client NAME would.

    FOLDERS: the workspace folders (default: the project). INIT_OPTIONS: initializationOptions.
    CONFIGURATION: what `workspace/configuration` answers. CAPABILITIES: override NAME's.
    WAIT: until the first scan is published. ENV: extra environment for the server."""
    caps = capabilities if capabilities is not None else capabilities_for(name)
    client = pytest_lsp.make_test_lsp_client()
    session = Session(client, ws, name, caps)
    install_handlers(session)
    if configuration is not None:
        client.set_configuration(configuration)
    await client.start_io(sys.executable, "-m", "memory_lens", "serve", env=ws.env(env), cwd=str(ws.home))
    await collect_stderr(session)
    folder_paths = [ws.proj] if folders is None else folders
    result = await asyncio.wait_for(client.initialize_session(types.InitializeParams(
        capabilities=caps,
        process_id=os.getpid(),
        root_uri=uri_of(folder_paths[0]) if folder_paths else None,
        workspace_folders=[types.WorkspaceFolder(uri=uri_of(f), name=f.name) for f in folder_paths],
        initialization_options=init_options,
        client_info=types.ClientInfo(name=f"pytest-lsp ({name})"),
    )), REQUEST_SECONDS)
    session.result = result
    session.encoding = str(result.capabilities.position_encoding or "utf-16")
    if wait:
        await session.wait_ready()
    return session


async def stop_session(session: Session) -> None:
    """Shut the server down; it must have stayed up, exit with 0, and have logged no error."""
    alive = session.server_alive()
    code = None
    if alive:
        await asyncio.wait_for(session.client.shutdown_session(), REQUEST_SECONDS)
        server = session.client._server  # noqa: SLF001
        code = server.returncode if server is not None else None
    await session.client.stop()
    assert alive, "the server process died during the test"
    assert code == 0, f"the server exited with status {code}"
    assert not session.violations, session.violations
    if not session.allow_server_errors:
        bad = [line for line in session.stderr if "Traceback" in line or ": ERROR:" in line]
        assert not bad, "the server logged errors:\n" + "".join(session.stderr)
