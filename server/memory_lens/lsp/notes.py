"""workspace/executeCommand `memoryLens.server.notes.*`, the `memory/notesDidChange`
notification, and the note documents (`memory-lens-note:` URIs).

Everything a notes view needs comes from here, computed by the core store, so a client only
shows results and sends the user's input back:

- `list` and `search` return small pages (name, scope, tags, a snippet, timestamps), never the
  contents; `read` returns one note in full, with its Markdown document;
- `create`, `edit`, `delete` change notes (an optional `revision` refuses a change to a note
  that changed since it was read);
- a note opens in an editor as a Markdown document at its `documentUri`
  (`memory-lens-note:/project/<name>.md?root=<project root>`): the client reads it with
  `readDocument` and saves it with `writeDocument`; the server remembers which revision each
  document was read at, and refuses a save over a note that changed since (unless `force`);
- `memory/notesDidChange` tells the client which notes changed on disk, whoever changed them
  (an agent through the MCP server, the CLI, git, a text editor), within about two seconds: each
  store's index re-lists its directories every second on a background thread (a note edited in
  place is reported as soon as that finds it), and a poll every two seconds reports the rest.

Store calls run on worker threads: a first listing of thousands of notes never blocks the loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from pygls.exceptions import JsonRpcInvalidParams

from memory_lens.core.discovery import Scope, find_project_root
from memory_lens.core.notes import (
    NoteConflictError,
    NoteError,
    NotesSettings,
    NotesStore,
    NoteSummary,
    Page,
    StoredNote,
    notes_settings,
)
from memory_lens.core.notes import document as note_document
from memory_lens.core.secrets import SecretError
from memory_lens.lsp import protocol
from memory_lens.lsp.commands import (
    FOLLOW_HINT,
    RequestFailed,
    allow_secret_arg,
    allowed_path,
    context_dir,
    secret_refused,
    target_dir_for,
)
from memory_lens.lsp.convert import first_object, path_to_uri

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

log = logging.getLogger("memory_lens.lsp")
POLL_SECONDS = 2.0
SUGGESTED_NAME_CHARS = 60


# Note documents --------------------------------------------------------------------------------


def document_uri(scope: Scope, name: str, project_root: Path | None) -> str:
    """The URI of note NAME's Markdown document."""
    query = "?" + urlencode({"root": str(project_root)}, quote_via=quote) if scope is Scope.PROJECT and project_root else ""
    return f"{protocol.NOTE_SCHEME}:/{scope.value}/{quote(name, safe='')}.md{query}"


def parse_document_uri(uri: str) -> tuple[Scope, str, Path | None]:
    """(scope, name, project root) of a note document URI; InvalidParams for anything else."""
    parts = urlsplit(uri) if isinstance(uri, str) else None
    if parts is None or parts.scheme != protocol.NOTE_SCHEME:
        raise JsonRpcInvalidParams(message=f"argument 'documentUri' must be a {protocol.NOTE_SCHEME}: URI")
    scope_name, _, rest = parts.path.lstrip("/").partition("/")
    if scope_name not in ("project", "global") or not rest.endswith(".md") or "/" in rest:
        raise JsonRpcInvalidParams(message=f"not a note document URI: {uri}")
    roots = parse_qs(parts.query).get("root", [])
    root = Path(roots[0]) if roots else None
    if scope_name == "project" and (root is None or not root.is_absolute()):
        raise JsonRpcInvalidParams(message=f"a project note document URI needs its project root: {uri}")
    return Scope(scope_name), unquote(rest[:-3]), root


# The stores ------------------------------------------------------------------------------------


class NotesHub:
    """The notes stores of one server: one per project root (None: no project), made on first
    use with the current `notes` settings, and the poll that reports changes."""

    def __init__(self, ls: MemoryLensServer) -> None:
        self.ls = ls
        self.stores: dict[Path | None, NotesStore] = {}
        self.settings_key: NotesSettings | None = None
        self.revisions: dict[str, str] = {}  # document URI -> revision it was read at
        self.poll_task: asyncio.Task | None = None

    def store_for_root(self, root: Path | None) -> NotesStore:
        settings = notes_settings(self.ls.settings)
        if settings != self.settings_key:
            self.close_stores()
            self.settings_key = settings
        store = self.stores.get(root)
        if store is None:
            store = self.stores[root] = NotesStore(settings, root, freshness=1.0, hint=FOLLOW_HINT)
            store.index.take_changes()  # the baseline later changes are reported against
            store.index.start_refresh(on_change=self._changed_in_background)
        store.follow_outside_links = self.ls.settings.follow_outside_links
        self.start_polling()
        return store

    def store_for(self, args: dict, write: bool = False) -> NotesStore:
        """The store of the project of argument `uri` (a document or folder; default: the first
        workspace folder), or of no project. For a WRITE, a `uri` outside the workspace is refused
        (`commands.allowed_path`)."""
        uri = _str(args, "uri", required=False)
        directory = context_dir(self.ls, uri) if write else target_dir_for(self.ls, uri)
        return self.store_for_root(find_project_root(directory) if directory is not None else None)

    def close_stores(self) -> None:
        for store in self.stores.values():
            store.close()
        self.stores.clear()

    def start_polling(self) -> None:
        if self.poll_task is None and self.ls.loop is not None:
            self.poll_task = self.ls.loop.create_task(self._poll())

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            await self._report_quietly()  # never lets the poll die on one bad round

    def _changed_in_background(self) -> None:
        """Called on a store's refresh thread when it brought changed files into the index."""
        loop = self.ls.loop
        if loop is None or loop.is_closed():
            return
        try:
            loop.call_soon_threadsafe(self._report_soon)
        except RuntimeError:  # the loop closed meanwhile (shutting down)
            pass

    def _report_soon(self) -> None:
        if self.poll_task is not None:  # not closed
            self.ls.loop.create_task(self._report_quietly())

    async def _report_quietly(self) -> None:
        try:
            await self.report_changes()
        except Exception as err:
            log.warning("notes: reporting changes failed: %s", err)

    async def report_changes(self) -> list[str]:
        """Sync every store with the files; send `memory/notesDidChange` for what changed."""
        uris: set[str] = set()
        seen = False
        for root, store in list(self.stores.items()):
            await asyncio.to_thread(store.index.sync)
            for scope, name in store.index.take_changes():
                seen = True
                if name is not None:
                    uris.add(document_uri(scope, name, root))
        if seen:
            self.ls.protocol.notify(protocol.NOTES_DID_CHANGE_NOTIFICATION, {"documentUris": sorted(uris)})
        return sorted(uris)

    def close(self) -> None:
        if self.poll_task is not None:
            self.poll_task.cancel()
            self.poll_task = None
        self.close_stores()


def hub(ls: MemoryLensServer) -> NotesHub:
    if ls.notes_hub is None:
        ls.notes_hub = NotesHub(ls)
    return ls.notes_hub


# Results ---------------------------------------------------------------------------------------


def _camel(data: dict[str, Any]) -> dict[str, Any]:
    """The core's JSON of a note, page or problem (`StoredNote.to_json`, `Page.to_json`) with the
    camelCase keys of the LSP (`created_at` -> `createdAt`): one shape, spelled for the wire."""
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key): value for key, value in data.items()}


def _summary(item: NoteSummary, store: NotesStore) -> dict[str, Any]:
    return {**_camel(item.to_json()), "fileUri": path_to_uri(item.path),
            "documentUri": document_uri(item.scope, item.name, store.project_root)}


def _page(page: Page, store: NotesStore) -> dict[str, Any]:
    return {**_camel(page.to_json()), "notes": [_summary(n, store) for n in page.notes],
            "problems": [{**p.to_json(), "uri": path_to_uri(p.path)} for p in page.problems], **_where(store)}


def _where(store: NotesStore) -> dict[str, Any]:
    dirs = {loc.scope.value: str(loc.directory) for loc in store.locations}
    return {"projectRoot": str(store.project_root) if store.project_root else None,
            "layout": store.settings.layout.value, "directories": dirs}


def _note(stored: StoredNote, store: NotesStore) -> dict[str, Any]:
    note = stored.note
    return {**_camel(stored.to_json()), "fileUri": path_to_uri(stored.path),
            "documentUri": document_uri(note.scope, note.name, store.project_root),
            "markdown": note_document.render(note)}


# Arguments -------------------------------------------------------------------------------------


def _str(args: dict, name: str, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise JsonRpcInvalidParams(message=f"argument {name!r} must be a {'non-empty ' if required else ''}string")
    return value


def _tags(args: dict, name: str = "tags") -> list[str] | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise JsonRpcInvalidParams(message=f"argument {name!r} must be a list of strings")
    return value


def _scope(args: dict, allowed: tuple[str, ...]) -> str | None:
    value = args.get("scope")
    if value is not None and value not in allowed:
        raise JsonRpcInvalidParams(message=f"argument 'scope' must be one of {', '.join(allowed)}")
    return value


def _int(args: dict, name: str) -> int | None:
    value = args.get(name)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise JsonRpcInvalidParams(message=f"argument {name!r} must be a whole number, 1 or more")
    return value


async def _call(work: Callable[[], Any]) -> Any:
    """Run WORK on a worker thread; a NoteError becomes RequestFailed (a conflict carries data, and
    so does a secret: see `commands.secret_refused`)."""
    try:
        return await asyncio.to_thread(work)
    except SecretError as err:
        raise secret_refused(err) from None
    except NoteConflictError as err:
        raise RequestFailed(message=str(err), data={"conflict": True, "revision": err.current_revision}) from None
    except NoteError as err:
        raise RequestFailed(message=str(err)) from None


# Commands --------------------------------------------------------------------------------------


async def list_notes(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    store = hub(ls).store_for(args)
    search = _str(args, "search", required=False) or ""
    tags, scope = _tags(args) or [], _scope(args, ("project", "global", "both")) or "both"
    limit, cursor = _int(args, "limit"), _str(args, "cursor", required=False)
    page = await _call(lambda: store.list(search, tags, scope, limit, cursor))
    return _page(page, store)


async def search_notes(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    store = hub(ls).store_for(args)
    query = _str(args, "query")
    tags, scope = _tags(args) or [], _scope(args, ("project", "global", "both")) or "both"
    limit, cursor = _int(args, "limit"), _str(args, "cursor", required=False)
    page = await _call(lambda: store.search(query or "", scope, tags, limit, cursor))
    return _page(page, store)


async def read_note(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    store = hub(ls).store_for(args)
    name, scope = _str(args, "name"), _scope(args, ("project", "global"))
    stored = await _call(lambda: store.read(name or "", scope))
    return _note(stored, store)


async def create_note(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    store = hub(ls).store_for(args, write=True)
    name, content = _str(args, "name"), _str(args, "content", required=False)
    if content is None:
        raise JsonRpcInvalidParams(message="argument 'content' must be a string")
    tags, scope = _tags(args) or [], _scope(args, ("project", "global"))
    allow = allow_secret_arg(args)
    result = await _call(lambda: store.create(name or "", content, tags, scope, allow_secret=allow))
    for warning in result.warnings:
        ls.warn_once(warning)
    return _note(result.note, store)


async def edit_note(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    store = hub(ls).store_for(args, write=True)
    name, scope = _str(args, "name"), _scope(args, ("project", "global"))
    content, tags = _str(args, "content", required=False), _tags(args)
    revision, allow = _str(args, "revision", required=False), allow_secret_arg(args)
    result = await _call(lambda: store.edit(name or "", content, scope, tags, revision, allow_secret=allow))
    for warning in result.warnings:
        ls.warn_once(warning)
    return {"changed": result.changed, "note": _note(result.note, store)}


async def delete_note(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    store = hub(ls).store_for(args, write=True)
    name, scope = _str(args, "name"), _scope(args, ("project", "global"))
    revision = _str(args, "revision", required=False)
    result = await _call(lambda: store.delete(name or "", scope, revision))
    note = result.note.note
    return {"deleted": {"name": note.name, "scope": note.scope.value, "path": str(result.note.path),
                        "documentUri": document_uri(note.scope, note.name, store.project_root)}}


async def read_document(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    uri = _str(args, "documentUri") or ""
    scope, name, root = parse_document_uri(uri)
    store = hub(ls).store_for_root(root)
    stored = await _call(lambda: store.read(name, scope.value))
    markdown = note_document.render(stored.note)
    hub(ls).revisions[uri] = stored.revision
    try:
        mtime = int(os.stat(stored.path).st_mtime * 1000)
    except OSError:
        mtime = 0
    return {"documentUri": uri, "name": name, "scope": scope.value, "markdown": markdown,
            "revision": stored.revision, "size": len(markdown.encode("utf-8")), "mtime": mtime,
            "path": str(stored.path)}


async def write_document(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    uri = _str(args, "documentUri") or ""
    markdown = _str(args, "markdown", required=False)
    if markdown is None:
        raise JsonRpcInvalidParams(message="argument 'markdown' must be a string")
    scope, name, root = parse_document_uri(uri)
    if root is not None:
        allowed_path(ls, root)  # a note document of a project outside the workspace: refused
    store = hub(ls).store_for_root(root)
    force, allow = args.get("force") is True, allow_secret_arg(args)
    revision = None if force else (_str(args, "revision", required=False) or hub(ls).revisions.get(uri))
    try:
        parsed = note_document.parse(markdown)
    except NoteError as err:
        raise RequestFailed(message=str(err)) from None
    try:
        result = await _call(lambda: store.edit(name, parsed.content, scope.value, parsed.tags, revision,
                                                allow_secret=allow))
    except RequestFailed as err:
        if isinstance(err.data, dict) and err.data.get("conflict"):
            raise RequestFailed(
                message=f"the note {name!r} changed on disk since it was opened; reopen it to see the change, "
                        "or save again choosing to overwrite", data=err.data) from None
        raise
    hub(ls).revisions[uri] = result.note.revision
    return {"changed": result.changed, "note": _note(result.note, store)}


async def suggest_name(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    """A name for a note made of `content` (its first words), free in `scope`."""
    store = hub(ls).store_for(args)
    content = _str(args, "content", required=False) or ""
    scope = _scope(args, ("project", "global"))
    words = " ".join(next((line for line in content.splitlines() if line.strip()), "note").split())
    words = words.lstrip("#-*+> ").strip() or "note"
    base = words if len(words) <= SUGGESTED_NAME_CHARS else words[:SUGGESTED_NAME_CHARS].rsplit(" ", 1)[0].rstrip(" .,;:")
    target = Scope(scope) if scope else store.default_scope()

    def free() -> str:
        name, n = base, 2
        while store.find(name, target) is not None:
            name, n = f"{base} ({n})", n + 1
        return name

    return {"name": await _call(free), "scope": target.value}


COMMANDS: dict[str, Callable[[MemoryLensServer, dict], Any]] = {
    protocol.CMD_NOTES_LIST: list_notes, protocol.CMD_NOTES_SEARCH: search_notes,
    protocol.CMD_NOTES_READ: read_note, protocol.CMD_NOTES_CREATE: create_note,
    protocol.CMD_NOTES_EDIT: edit_note, protocol.CMD_NOTES_DELETE: delete_note,
    protocol.CMD_NOTES_READ_DOCUMENT: read_document, protocol.CMD_NOTES_WRITE_DOCUMENT: write_document,
    protocol.CMD_NOTES_SUGGEST_NAME: suggest_name,
}


def register(server: MemoryLensServer) -> None:
    for command, handler in COMMANDS.items():
        server.command(command)(_command(handler))


def _command(handler: Callable[[MemoryLensServer, dict], Any]) -> Callable[..., Any]:
    async def run(ls, *args: Any) -> Any:  # unannotated: pygls resolves the annotations (commands.register)
        return await handler(ls, first_object(list(args)))
    run.__name__ = handler.__name__
    return run
