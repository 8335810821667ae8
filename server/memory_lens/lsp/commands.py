"""workspace/executeCommand: memoryLens.server.save, remove, move, list, effective, refresh.

Each command takes one object argument. Lines in arguments and results are 1-based (as in
`memory-lens list --format json`); `range` fields are LSP ranges (0-based). Failures come back
as JSON-RPC errors whose message is one line a user can act on. `remove` and `move` edit memory
files only. `save` and `remove` change the buffer instead of the disk when the memory file is
open with unsaved edits (see `buffers`).

Commands write only inside `write_roots` (the workspace folders, their projects and the global
memory directory): a URI elsewhere (another repository, `..` segments, a drive-letter path on a
system without drives) is refused before anything is read or created, and a memory file that
links out of its project is written through only with `memoryLens.followOutsideLinks` (see
`core.write_policy` and docs/security.md).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from memory_lens.core.discovery import Scope, document_target, find_project_root
from memory_lens.core.edit import EntryTextError
from memory_lens.core.entries import (
    EntryNotFoundError,
    NoProjectError,
    entry_json,
    find_saved_entry,
    first_entry,
    list_entries,
    memory_file_for,
    remove_entry,
    remove_entry_at,
    remove_saved_entry,
    resolve_scope,
    save_entry,
    write_area,
)
from memory_lens.core.markdown import Entry, clean_entry_text, parse, split_lines
from memory_lens.core.secrets import SecretError, refuse_secrets
from memory_lens.core.write_policy import OutsideWriteError, WriteArea, check_requested_path
from memory_lens.core.writer import MemoryFileError, allowed_target
from memory_lens.lsp import protocol
from memory_lens.lsp.buffers import entry_in_buffer, remove_in_buffer, save_in_buffer, unsaved_buffer
from memory_lens.lsp.convert import first_object, lines_range, path_to_uri, uri_to_path
from memory_lens.lsp.effective import effective_result, memory_at, memory_for_uri, uri_target_dir

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer, OpenDoc


class RequestFailed(JsonRpcException):
    """LSP's RequestFailed: the request was valid but could not be carried out."""

    CODE = -32803


FOLLOW_HINT = ("set memoryLens.followOutsideLinks to true in your user settings, or start the server with "
               "MEMORY_LENS_FOLLOW_OUTSIDE_LINKS=1, to allow")


def write_roots(ls: MemoryLensServer) -> list[Path]:
    """Where commands may write: each workspace folder and the project it is in, and the global
    memory directory. With no folder at all (a file opened alone), the projects of open documents."""
    bases = ls.folders()
    if not bases:
        try:
            uris = list(ls.workspace.text_documents.keys())
        except RuntimeError:
            uris = []
        bases = [d for uri in uris if (d := uri_target_dir(uri)) is not None]
    roots = [ls.settings.global_dir]
    for base in bases:
        roots.append(base)
        if (root := find_project_root(base)) is not None:
            roots.append(root)
    return roots


def allowed_path(ls: MemoryLensServer, path: Path) -> Path:
    """PATH (from a request's URI) when commands may write there; RequestFailed otherwise."""
    shown = ", ".join(str(f) for f in ls.folders()) or "none open"
    what = f"the workspace folders ({shown}) and the global memory directory {ls.settings.global_dir}"
    try:
        return check_requested_path(path, write_roots(ls), what)
    except OutsideWriteError as err:
        raise RequestFailed(message=f"{err}; nothing changed") from None


def write_refusal(ls: MemoryLensServer, path: Path) -> str | None:
    """Why a command (or an edit the server offers) may not write memory file PATH; None when it
    may: PATH is inside the workspace (`allowed_path`) and its final target inside its area."""
    try:
        allowed_target(allowed_path(ls, path), area_of(ls, path))
    except (RequestFailed, MemoryFileError) as err:
        return str(err.message if isinstance(err, RequestFailed) else err)
    return None


def context_refusal(ls: MemoryLensServer, path: Path) -> str | None:
    """Why a command would refuse PATH (a document's path) as its context `uri`; None if it would not."""
    try:
        allowed_path(ls, path)
    except RequestFailed as err:
        return str(err.message)
    return None


def context_dir(ls: MemoryLensServer, uri: str | None) -> Path | None:
    """`target_dir_for` URI, once URI (when it names a file path) is allowed."""
    if uri is not None and (requested := uri_to_path(uri)) is not None:
        allowed_path(ls, requested)
    return target_dir_for(ls, uri)


def area_of(ls: MemoryLensServer, path: Path) -> WriteArea:
    """Where a write to memory file PATH may land (`entries.write_area`), with the user's opt-in."""
    directory = document_target(path)
    root = find_project_root(directory) if directory is not None else None
    return write_area(scope_of(ls, path), root, ls.settings, path, FOLLOW_HINT)


def _str_arg(args: dict, name: str, required: bool = True) -> str | None:
    value = args.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value.strip()):
        raise JsonRpcInvalidParams(message=f"argument {name!r} must be a non-empty string")
    return value


def _scope_arg(args: dict, allowed: tuple[str, ...] = ("project", "global")) -> str | None:
    scope = args.get("scope")
    if scope is not None and scope not in allowed:
        raise JsonRpcInvalidParams(message=f"argument 'scope' must be one of {', '.join(allowed)}")
    return scope


def _line_arg(args: dict) -> int:
    line = args.get("line")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise JsonRpcInvalidParams(message="argument 'line' must be a 1-based line number")
    return line


def target_dir_for(ls: MemoryLensServer, uri: str | None) -> Path | None:
    """Where project memory is looked up: the document's directory, else (no URI, or one that
    names no usable file path) the first folder."""
    directory = uri_target_dir(uri) if uri else None
    if directory is not None:
        return directory
    folders = ls.folders()
    return folders[0] if folders else None


def scope_of(ls: MemoryLensServer, path: Path) -> Scope:
    real = os.path.realpath(path)
    globals_ = {os.path.realpath(p) for p in ls.settings.global_files()}
    return Scope.GLOBAL if real in globals_ else Scope.PROJECT


def _failed(err: Exception) -> RequestFailed:
    return RequestFailed(message=str(err).strip("'\""))


def secret_refused(err: SecretError) -> RequestFailed:
    """The distinct error of a write refused for a secret: its kind and position in `data` (a
    client asks the user, then sends the command again with `allowSecret`), never the secret."""
    s = err.secret
    return RequestFailed(message=f"{err} (send it again with {protocol.ALLOW_SECRET_ARG}: true to save it anyway)",
                         data={protocol.SECRET_ERROR_KEY: {"kind": s.kind, "line": s.line, "column": s.column}})


def allow_secret_arg(args: dict) -> bool:
    value = args.get(protocol.ALLOW_SECRET_ARG, False)
    if not isinstance(value, bool):
        raise JsonRpcInvalidParams(message=f"argument {protocol.ALLOW_SECRET_ARG!r} must be true or false")
    return value


def save(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    """Save `text` in `scope` memory (project by default inside a project); into the buffer
    when that memory file is open with unsaved edits (see `buffers`)."""
    text = _str_arg(args, "text")
    scope = _scope_arg(args)
    uri = _str_arg(args, "uri", required=False)
    directory = context_dir(ls, uri)
    assert text is not None
    try:
        refuse_secrets(text, allow_secret_arg(args))  # before anything is read: the buffer path too
        if directory is None:
            if scope == "project":
                raise NoProjectError("no project: open a file or folder inside a project, or save to global memory")
            chosen, root = Scope.GLOBAL, None
        else:
            chosen, root = resolve_scope(scope, directory)
        path = allowed_path(ls, memory_file_for(chosen, root, ls.settings))
        allowed_target(path, area_of(ls, path))  # a link out: refused for the buffer too
        doc = unsaved_buffer(ls, path)
        if doc is not None:
            return save_in_buffer(ls, doc, chosen, text)
        if directory is None:
            directory = ls.settings.global_dir if ls.settings.global_dir.is_dir() else Path.home()
        result = save_entry(text, directory, ls.settings, chosen, FOLLOW_HINT, allow_secret=True)  # checked above
    except SecretError as err:
        raise secret_refused(err) from None
    except (EntryTextError, NoProjectError, MemoryFileError) as err:
        raise _failed(err) from None
    ls.store.invalidate([result.path])
    ls.live.request_paths({result.path})
    return {"path": str(result.path), "uri": path_to_uri(result.path), "scope": result.scope.value,
            "text": result.text, "line": result.line + 1, "added": result.added, "created": result.created}


def _memory_file_arg(ls: MemoryLensServer, args: dict) -> Path:
    """The memory file named by argument `uri`. Commands that remove entries edit memory files
    only (named by the settings of their directory, as everywhere in the server): anything else is refused."""
    path = uri_to_path(_str_arg(args, "uri") or "")
    if path is None:
        raise JsonRpcInvalidParams(message="argument 'uri' must be a file: URI")
    allowed_path(ls, path)
    if not ls.is_memory_path(path):
        names = ", ".join(ls.store.settings_for(path.parent).filenames)
        raise RequestFailed(message=f"{path} is not a memory file (memory files are named {names}); nothing changed")
    return path


def _entry_on_disk(ls: MemoryLensServer, path: Path, line: int) -> Entry | None:
    """The entry covering 1-based LINE of memory file PATH on disk (what `list` reports)."""
    got = ls.store.read(path)
    return parse(got.text).entry_at(line - 1) if got.ok else None


def _saved_in_buffer(doc: OpenDoc, text: str, line: int) -> Entry:
    """The entry a save of TEXT made at 1-based LINE of unsaved buffer DOC (`find_saved_entry`);
    RequestFailed when the buffer no longer has it."""
    entry = find_saved_entry(doc.text, text, line - 1)
    if entry is None:
        first = (clean_entry_text(text).splitlines() or [text])[0]
        raise RequestFailed(message=f"{doc.path}: the entry {first!r} is no longer in the unsaved buffer of this "
                                    "file; nothing removed")
    return entry


def _in_buffer(ls: MemoryLensServer, path: Path, entry: Entry | None) -> tuple[OpenDoc, Entry] | None:
    """Where to remove ENTRY (of PATH on disk) instead of the disk: the unsaved buffer of PATH
    and its copy of ENTRY; None when PATH has no unsaved buffer. RequestFailed when the buffer
    no longer has that entry: nothing is removed, from the buffer or the disk."""
    doc = unsaved_buffer(ls, path) if entry is not None else None
    if doc is None or entry is None:
        return None
    found = entry_in_buffer(doc, entry)
    if found is None:
        raise RequestFailed(message=f"{path}: the entry {entry.text.splitlines()[0]!r} is not in the unsaved "
                                    "buffer of this file; save or revert it first")
    return doc, found


def remove(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    """Remove the entry at `{uri, line}`, the entry a save made `{uri, line, text}` (the `save`
    result: undo), or the first matching `{text, scope?, uri?}`.

    `uri` must name a memory file. With `text` beside `line`, only an entry with that normalised
    text is removed (the one nearest `line`); when there is none the command fails and nothing
    changes. `line` is a line of the file on disk, as `list` reports it;
    `text` is matched against the chain on disk, as `memory-lens remove` does. When that file is
    open with unsaved edits and the client supports `workspace/applyEdit`, the entry is removed
    from the buffer instead, as `save` adds to it (its copy with the same normalised text nearest
    that line; refused when the buffer no longer has it), and the result says `unsaved: true`.
    """
    try:
        if "line" in args:
            line = _line_arg(args)
            saved = _str_arg(args, "text", required=False)
            path = _memory_file_arg(ls, args)
            allowed_target(path, area_of(ls, path))  # a link out: refused for the buffer too
            if saved is not None:
                if (doc := unsaved_buffer(ls, path)) is not None:
                    return remove_in_buffer(ls, doc, _saved_in_buffer(doc, saved, line), scope_of(ls, path))
                entry = remove_saved_entry(path, saved, line - 1, area_of(ls, path))
            else:
                if (where := _in_buffer(ls, path, _entry_on_disk(ls, path, line))) is not None:
                    return remove_in_buffer(ls, *where, scope_of(ls, path))
                entry = remove_entry_at(path, line - 1, area_of(ls, path))
            result = {**entry_json(entry.text, path, entry.line + 1, scope_of(ls, path)), "uri": path_to_uri(path)}
        else:
            text = _str_arg(args, "text")
            scope = _scope_arg(args)
            directory = context_dir(ls, _str_arg(args, "uri", required=False))
            if directory is None:
                directory, scope = Path.home(), "global"
            assert text is not None
            match = first_entry(memory_at(ls, directory), text, scope)
            if match is not None:
                allowed_target(match[0].path, area_of(ls, match[0].path))
            if match is not None and (where := _in_buffer(ls, match[0].path, match[1])) is not None:
                return remove_in_buffer(ls, *where, scope_of(ls, match[0].path))
            removed = remove_entry(text, directory, ls.settings, scope, hint=FOLLOW_HINT)
            path = removed.path
            result = {**removed.to_json(), "uri": path_to_uri(path)}
    except (EntryNotFoundError, MemoryFileError) as err:
        raise _failed(err) from None
    ls.store.invalidate([path])
    ls.live.request_paths({path})
    return result


def move(ls: MemoryLensServer, args: dict) -> dict[str, Any]:
    """Move the entry at `{uri, line}` (a memory file) to `scope` memory: saved there first, then
    removed here (from the unsaved buffer, when there is one: see `remove`).

    `contextUri` (optional) names a document or folder of the destination project; by default the
    project of `uri` itself, or the first workspace folder when moving a global entry to a project.
    """
    context = _str_arg(args, "contextUri", required=False)
    uri = _str_arg(args, "uri")
    line = _line_arg(args)
    scope = _scope_arg(args)
    if scope is None:
        raise JsonRpcInvalidParams(message="argument 'scope' (the destination) is required")
    path = _memory_file_arg(ls, args)
    context_dir(ls, context)  # a destination outside the workspace: refused before anything is saved
    entry = _entry_on_disk(ls, path, line)
    if entry is None:
        raise RequestFailed(message=f"{path}:{line}: no memory entry on that line")
    # Refused here, before anything is saved, if it cannot be removed afterwards.
    if _in_buffer(ls, path, entry) is None:
        try:
            allowed_target(path, area_of(ls, path))
        except MemoryFileError as err:
            raise _failed(err) from None
    if context is None and scope == Scope.PROJECT.value and scope_of(ls, path) is Scope.GLOBAL:
        context_args: dict[str, Any] = {}
    else:
        context_args = {"uri": context or uri}
    saved = save(ls, {"text": entry.text, "scope": scope, **context_args,
                      protocol.ALLOW_SECRET_ARG: allow_secret_arg(args)})
    if os.path.realpath(saved["path"]) != os.path.realpath(path):
        remove(ls, {"uri": uri, "line": entry.line + 1})
    return saved


def list_command(ls: MemoryLensServer, args: dict) -> list[dict[str, Any]]:
    """The entries of the chain of `uri` (or of the first workspace folder)."""
    scope = _scope_arg(args, ("project", "global", "all")) or "all"
    uri = _str_arg(args, "uri", required=False)
    if uri is None:
        folders = ls.folders()
        uri = path_to_uri(folders[0] / "_") if folders else "untitled:memory-lens"
    memory = memory_for_uri(ls, uri)
    scopes = [Scope.GLOBAL, Scope.PROJECT] if scope == "all" else [Scope(scope)]
    texts = {s.path: split_lines(s.text) for s in memory.sources if s.readable}
    out = []
    for e in list_entries(memory, scopes):
        rng = lines_range(texts.get(e.path, []), e.line - 1, e.end_line - 1, ls.position_encoding)
        out.append({**e.to_json(), "uri": path_to_uri(e.path), "endLine": e.end_line,
                    "range": {"start": {"line": rng.start.line, "character": rng.start.character},
                              "end": {"line": rng.end.line, "character": rng.end.character}}})
    return out


def register(server: MemoryLensServer) -> None:
    # pygls resolves a command handler's annotations when it runs (to convert its arguments), and
    # the server type is imported for type checking only: `ls` stays unannotated here.
    @server.command(protocol.CMD_SAVE)
    def cmd_save(ls, *args: Any) -> dict[str, Any]:
        return save(ls, first_object(list(args)))

    @server.command(protocol.CMD_REMOVE)
    def cmd_remove(ls, *args: Any) -> dict[str, Any]:
        return remove(ls, first_object(list(args)))

    @server.command(protocol.CMD_MOVE)
    def cmd_move(ls, *args: Any) -> dict[str, Any]:
        return move(ls, first_object(list(args)))

    @server.command(protocol.CMD_LIST)
    def cmd_list(ls, *args: Any) -> list[dict[str, Any]]:
        return list_command(ls, first_object(list(args)))

    @server.command(protocol.CMD_EFFECTIVE)
    def cmd_effective(ls, *args: Any) -> dict[str, Any]:
        data = first_object(list(args))
        uri = _str_arg(data, "uri")
        assert uri is not None
        return effective_result(ls, uri, annotated=bool(data.get("annotated")))

    @server.command(protocol.CMD_REFRESH)
    async def cmd_refresh(ls, *args: Any) -> dict[str, Any]:
        ls.store.invalidate()
        ls.live.request_full()
        await ls.live.idle()
        return {"files": len(ls.store.known())}
