"""The Memory Lens language server's state (`MemoryLensServer`) and protocol.

Each feature lives in its own module with a `register(server)` function; `app.build_server`
makes the server and calls them all. Importing a feature module registers nothing. This module
imports no feature: they import it, for the server's type.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from pathlib import Path
from typing import Any, Callable, Container, Protocol
from urllib.parse import unquote

from lsprotocol import types
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.workspace import TextDocument

from memory_lens import __version__
from memory_lens.core.agents.budget import agent_names
from memory_lens.core.agents.claude_checks import is_auto_memory
from memory_lens.core.agents.scoped import rule_folder
from memory_lens.core.files import FileStatus, read_memory_file, real_dir, too_large_reason
from memory_lens.core.settings import Settings
from memory_lens.lsp.compat import send_error
from memory_lens.lsp.config import ServerConfig, parse_config, to_settings
from memory_lens.lsp.convert import Serialized, plain_params_converter, uri_to_path
from memory_lens.lsp.protocol import SERVER_NAME
from memory_lens.lsp.store import Editor, MemoryStore

log = logging.getLogger("memory_lens.lsp")


def answered_on_purpose(error: BaseException | None) -> bool:
    """ERROR is a JSON-RPC error the server answers on purpose (bad params, a failed request),
    not a failure inside it (`JsonRpcInternalError`)."""
    return isinstance(error, JsonRpcException) and not isinstance(error, JsonRpcInternalError)


class OpenDoc:
    """An open buffer of a memory file: where it is, what it says, which version."""

    __slots__ = ("uri", "path", "text", "version")

    def __init__(self, uri: str, path: Path, text: str, version: int | None) -> None:
        self.uri, self.path, self.text, self.version = uri, path, text, version


class MemoryLensProtocol(LanguageServerProtocol):
    """pygls drops a request whose params do not fit the method's type (a negative position,
    a number for a URI) without answering it, so the client waits forever: answer it with a
    JSON-RPC InvalidParams error instead. A `Serialized` result is sent as it is."""

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if not isinstance(result, Serialized) or self.writer is None:
            return super()._send_data(data)
        body = f'{{"id": {json.dumps(data.id)}, "jsonrpc": "{self.VERSION}", "result": {result}}}'
        if self._include_headers:
            body = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n" \
                + body
        written = self.writer.write(body.encode(self.CHARSET))
        if inspect.isawaitable(written):
            asyncio.ensure_future(written)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams:
            if "id" in data and "method" in data:
                error = JsonRpcInvalidParams(message=f"invalid params for {data['method']}")
                send_error(self, data["id"], error)
            raise


class LiveChecks(Protocol):
    """What the features ask of the live engine (`live.LiveEngine`): rescans and rechecks."""

    @property
    def busy(self) -> bool: ...
    def request_full(self) -> None: ...
    def request_paths(self, paths: set[Path]) -> None: ...
    async def idle(self) -> None: ...
    def on_applied(self, callback: Callable[[], None]) -> None: ...


class FileWatching(Protocol):
    """What the features ask of the watcher (`watch.Watcher`)."""

    generation: int  # goes up with each change on disk it reports

    async def start(self) -> None: ...
    async def on_config_change(self) -> None: ...
    def stop(self) -> None: ...
    def on_client_change(self, paths: set[Path]) -> None: ...


class MemoryLensServer(LanguageServer):
    """Server state: configuration, the memory store, open documents. `app.build_server` adds the
    live engine (`live`, lsp/live.py) and the watcher (`watcher`, lsp/watch.py)."""

    live: LiveChecks
    watcher: FileWatching

    def __init__(self, base_settings: Settings, debug: bool = False) -> None:
        super().__init__(SERVER_NAME, __version__,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=MemoryLensProtocol, converter_factory=plain_params_converter)
        self.base_settings = base_settings
        # The file size limit starts at the serve command's: an untrusted workspace may only lower it.
        self.config = ServerConfig(debug=debug, max_file_size=base_settings.max_file_bytes)
        self.init_config = self.config  # after initializationOptions: the base of later updates
        self.editor = Editor(self.folders)
        self.store = MemoryStore(base_settings, editor=self.editor)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.published: dict[str, bytes] = {}  # a digest of the diagnostics last sent, per URI
        self._warned: set[str] = set()
        self.notes_hub: Any = None  # lsp.notes.NotesHub, made on the first notes request
        self.last_message_at = 0.0  # time.monotonic() of the client's last message: the poll waits for quiet (watch.py)

    # Capabilities and messages -----------------------------------------------------------------

    def supports(self, field: str) -> bool:
        """True when the client declared capability FIELD (dotted, snake_case)."""
        try:
            return bool(get_capability(self.client_capabilities, field, None))
        except Exception:  # capabilities not known yet, or an unknown field
            return False

    def log_message(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        """Log to stderr, and to the client's log (window/logMessage)."""
        log.log(logging.WARNING if kind <= types.MessageType.Warning else logging.INFO, message)
        try:
            self.window_log_message(types.LogMessageParams(type=kind, message=message))
        except Exception:  # no connection yet
            pass

    def warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.log_message(message, types.MessageType.Warning)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors go to the log, not to pop-ups: request errors already reach the client."""
        log.log(logging.DEBUG if answered_on_purpose(error) else logging.ERROR, "%s", error)

    # Settings ----------------------------------------------------------------------------------

    @property
    def settings(self) -> Settings:
        return self.store.settings

    def update_config(self, raw: Any, initial: bool = False) -> bool:
        """Apply RAW settings over the initial ones (INITIAL: RAW are the initializationOptions);
        True when the effective settings changed."""
        self.config = parse_config(raw, self.init_config, self.warn_once)
        if initial:
            self.init_config = self.config
        logging.getLogger("memory_lens").setLevel(logging.DEBUG if self.config.debug else logging.INFO)
        new = to_settings(self.config, self.base_settings)
        if new == self.store.settings:
            return False
        self.store = MemoryStore(new, editor=self.editor)
        return True

    def update_chat_settings(self, values: list[Any]) -> bool:
        """Keep the VS Code chat settings the client answered (VALUES: one per
        `copilot_vscode.SETTINGS`, in order; null: no value); True when they changed. None answered:
        None, so a view reads `.vscode/settings.json` (an editor other than VS Code)."""
        from memory_lens.core.agents.copilot_vscode import SETTINGS

        chat = {k: v for k, v in zip(SETTINGS, values) if v is not None} or None
        if chat == self.editor.chat_settings:
            return False
        self.editor.chat_settings = chat
        return True

    # Workspace -----------------------------------------------------------------------------------

    def folders(self) -> list[Path]:
        """The workspace folders as filesystem paths (the root URI when there are none)."""
        paths: list[Path] = []
        try:
            workspace = self.workspace
        except RuntimeError:
            return paths
        for folder in workspace.folders.values():
            p = uri_to_path(folder.uri)
            if p is not None and p not in paths:
                paths.append(p)
        if not paths and workspace.root_uri:
            p = uri_to_path(workspace.root_uri)
            if p is not None:
                paths.append(p)
        return [real for p in paths if (real := real_dir(p)) is not None]

    def is_memory_path(self, path: Path | None) -> bool:
        """Whether PATH is a memory file, by the settings of its own directory (`MemoryStore.is_memory`)."""
        return path is not None and self.store.is_memory(path)

    def is_agent_path(self, path: Path | None) -> bool:
        """Whether PATH is named as a file only other agents than Gemini read (AGENTS.md,
        `.cursorrules`, …), a scoped rules file (`.cursor/rules/*.mdc`), or another instruction file
        the scan found (a user-level one: `~/.copilot/instructions/*.instructions.md`): diagnosed
        with their findings, no other feature."""
        return path is not None and (path.name in agent_names(self.settings) or rule_folder(path) is not None
                                     or is_auto_memory(path) or path in self.store.agent_files())

    def open_memory_docs(self, among: Container[str] | None = None, any_file: bool = False) -> dict[Path, OpenDoc]:
        """Every open buffer of a memory file, by path; only those AMONG these paths when given
        (telling a memory file costs a settings lookup, ~0.2 ms per open document). AMONG holds
        strings: a set of 200 `Path`s takes ~0.15 ms to make, of their strings ~0.02. ANY_FILE
        (with AMONG): every open buffer among them, memory file or not (another agent's files)."""
        docs: dict[Path, OpenDoc] = {}
        try:
            documents = list(self.workspace.text_documents.items())
        except RuntimeError:
            return docs
        for uri, doc in documents:
            path = uri_to_path(uri)
            if (among is None or str(path) in among) and (any_file and among is not None or self.is_memory_path(path)):
                assert path is not None
                docs[path] = OpenDoc(uri, path, doc.source, doc.version)
        return docs

    def open_doc(self, path: Path) -> OpenDoc | None:
        return self.open_memory_docs().get(path)

    def current_text(self, path: Path, docs: dict[Path, OpenDoc] | None = None) -> tuple[str | None, str]:
        """Memory file PATH as the client sees it: its open buffer, else the file on disk ("" when
        there is none), with "". (None, why) when it has no usable text: unusable on disk, or an
        open buffer over the size limit (never parsed). DOCS: `open_memory_docs()`, when the
        caller looks at many files."""
        doc = self.open_doc(path) if docs is None else docs.get(path)
        if doc is not None:
            if len(doc.text) > self.settings.max_file_bytes:
                return None, too_large_reason(len(doc.text), self.settings.max_file_bytes)
            return doc.text, ""
        got = self.store.read(path)
        if got.status is FileStatus.UNUSABLE:
            return None, got.reason
        return got.text, ""

    def open_text_document(self, uri: str) -> TextDocument | None:
        """The open document URI, or None. Never pygls's `get_text_document`: for a document
        that is not open, that one reads the file on the event loop whatever it is, and a FIFO
        blocks the loop, and so the whole server, forever."""
        try:
            return self.workspace.text_documents.get(unquote(uri))  # keyed as pygls keys them
        except RuntimeError:  # not initialized yet
            return None

    def document(self, uri: str) -> TextDocument | None:
        """Document URI as the client sees it: the open buffer, else the file read the safe way
        (a FIFO or a device is never opened), or None when there is no usable text."""
        doc = self.open_text_document(uri)
        path = uri_to_path(uri)
        if doc is not None or path is None:
            return doc
        # Memory files through the store (cached); any other file is read once, not kept.
        got = self.store.read(path) if self.is_memory_path(path) else read_memory_file(path, self.settings.max_file_bytes)
        if not got.ok:
            return None
        return TextDocument(uri, source=got.text, position_codec=self.workspace.position_codec)

    @property
    def position_encoding(self) -> Any:
        try:
            return self.workspace.position_encoding
        except RuntimeError:
            return types.PositionEncodingKind.Utf16
