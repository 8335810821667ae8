"""textDocument/codeAction: save a selection to project or global memory; quick fixes.

On any non-empty selection in any file: "Save selection to project memory" and "Save selection
to global memory". Each carries the `memoryLens.server.save` command, so choosing it writes the
entry to disk at once, with the locked atomic write of `memory-lens add`, in any editor. With the
`save.preview` setting the action carries instead a WorkspaceEdit computed by `plan_add` (the
function behind `memory-lens add`), annotated so that clients supporting change annotations show
the change and ask before applying it; clients that cannot create files still get the command
for a missing memory file. A selection already saved is not offered again: the action says so
(disabled, where the client supports that).

Quick fixes remove a duplicate or a redundant entry flagged by a diagnostic, only while that
entry is still where the diagnostic says (its normalised text travels in the diagnostic's `data`),
and the entry holding a secret (while its line still holds one). A selection holding a secret is
saved through the command even with `save.preview`, so that the command can refuse it.
A `drift` gets the fix of `core/drift_fix.py` (`bridge_fix`): an import written as an edit of
the copy, or the `memoryLens.server.fixDrift` command, which writes Gemini CLI's settings and the
copy with the locked atomic writes of `memory-lens check --fix drift`.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memory_lens.core.checks import DRIFT, DUPLICATE, REDUNDANT, SECRET
from memory_lens.core.files import read_memory_file
from memory_lens.core.drift_fix import IMPORT, apply_drift_fix, drift_message, plan_drift_fix
from memory_lens.core.similar import bridge_text, sibling_agent_files
from memory_lens.core.writer import MemoryFileError
from memory_lens.core.discovery import Scope, find_project_root
from memory_lens.core.edit import EntryTextError, plan_add
from memory_lens.core.entries import memory_file_for
from memory_lens.core.files import BOM
from memory_lens.core.markdown import Entry, clean_entry_text, parse, split_lines, strip_eol
from memory_lens.core.secrets import find_secrets
from memory_lens.lsp import protocol
from memory_lens.lsp.commands import RequestFailed, context_refusal, write_refusal
from memory_lens.lsp.convert import first_object, json_values, uri_to_path
from memory_lens.lsp.edits import add_entry_edit, can_create_files, remove_entry_edit, replace_all_edit
from memory_lens.lsp.effective import uri_target_dir
from memory_lens.lsp.note_diagnostics import is_note_document

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

QUICK_FIX = types.CodeActionKind.QuickFix


_BREAK = re.compile(r"\r\n|\r|\n")
READ_CHUNK = 1 << 16


def selected_text(ls: MemoryLensServer, uri: str, rng: types.Range) -> str:
    """The text of RNG in document URI ("" when the range is empty, out of the document, or the
    document is neither open nor a readable text file). Only the lines of the range are looked
    at: an open buffer is not split whole, and a file that is not open is read only as far as the
    range's last line (and never past the size limit)."""
    start, end = sorted((rng.start, rng.end), key=lambda p: (p.line, p.character))
    if start == end:
        return ""
    doc = ls.open_text_document(uri)
    if doc is not None:
        region = _line_region(doc.source, start.line, end.line)
    else:
        path = uri_to_path(uri)
        head = _file_head(path, end.line, ls.settings.max_file_bytes) if path is not None else None
        region = _line_region(head, start.line, end.line) if head is not None else None
    if not region:
        return ""
    lines = split_lines(region)
    try:
        codec = ls.workspace.position_codec
        first = codec.position_from_client_units(lines, types.Position(line=0, character=start.character))
        last = codec.position_from_client_units(lines, types.Position(line=end.line - start.line,
                                                                       character=end.character))
    except Exception:
        return ""
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def offset(pos) -> int:
        line = min(pos.line, len(lines) - 1)
        return offsets[line] + min(pos.character, len(strip_eol(lines[line])))

    return region[offset(first):offset(last)]


def _line_region(text: str, first: int, last: int) -> str | None:
    """Lines FIRST to LAST (0-based, with their endings) of TEXT, found without splitting the
    rest of it; None when TEXT has no line FIRST."""
    start, count = 0, 0
    breaks = _BREAK.finditer(text)
    if first > 0:
        for m in breaks:
            count += 1
            if count == first:
                start = m.end()
                break
        else:
            return None
        if start >= len(text):
            return None
    end = len(text)
    for m in breaks:
        count += 1
        if count == last + 1:
            end = m.end()
            break
    return text[start:end]


def _file_head(path: Path, last: int, limit: int) -> str | None:
    """The start of file PATH up to the end of 0-based line LAST (or the whole file when it is
    shorter), decoded as UTF-8 (a bad byte reads as U+FFFD); None when it is not a regular file,
    cannot be read, or when more than LIMIT bytes would be needed."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # a FIFO or a device is never opened
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    parts: list[str] = []
    read = breaks = 0
    try:
        while True:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                parts.append(decoder.decode(b"", final=True))
                break
            read += len(chunk)
            if read > limit:
                return None
            text = decoder.decode(chunk)
            parts.append(text)
            breaks += text.count("\n") + text.count("\r") - text.count("\r\n")
            if text[:1] == "\n" and len(parts) > 1 and parts[-2][-1:] == "\r":
                breaks -= 1  # a \r\n split between two chunks is one line break
            if breaks >= last + 1:
                break
    except OSError:
        return None
    finally:
        os.close(fd)
    text = "".join(parts)
    return text[1:] if text.startswith(BOM) else text


def _disabled(ls: MemoryLensServer, title: str, reason: str) -> types.CodeAction | None:
    if not ls.supports("text_document.code_action.disabled_support"):
        return None
    return types.CodeAction(title=title, kind=protocol.SAVE_ACTION_KIND,
                            disabled=types.CodeActionDisabled(reason=reason))


def save_action(ls: MemoryLensServer, uri: str, text: str, scope: Scope) -> types.CodeAction | None:
    """The "Save selection to … memory" action for SCOPE, or None when it cannot be offered."""
    title = protocol.SAVE_PROJECT_TITLE if scope is Scope.PROJECT else protocol.SAVE_GLOBAL_TITLE
    directory = uri_target_dir(uri)
    root = find_project_root(directory) if directory is not None else None
    if scope is Scope.PROJECT and root is None:
        return _disabled(ls, title, "This file is not inside a project (no .git found above it)")
    path = memory_file_for(scope, root, ls.settings)
    refusal = write_refusal(ls, path)  # outside the workspace, or a link out of its project
    if refusal is not None:
        return _disabled(ls, title, refusal)
    content, reason = ls.current_text(path)
    if content is None:
        return _disabled(ls, title, f"{path} {reason}")
    try:
        plan = plan_add(content, text)
    except EntryTextError:
        return None
    if plan.already_present:
        where = f"{path.name}:{plan.entry_line + 1}"
        saved = f"Already saved in {scope.value} memory ({where})"
        return _disabled(ls, saved, saved) or types.CodeAction(title=saved, kind=protocol.SAVE_ACTION_KIND)
    missing = ls.open_doc(path) is None and not os.path.lexists(path)
    # A selection holding a secret is saved by the command, which refuses it (a client may then
    # ask the user and send it again with allowSecret): an edit would be applied unchecked.
    if not ls.config.save_preview or (missing and not can_create_files(ls)) or find_secrets(text):
        return types.CodeAction(title=title, kind=protocol.SAVE_ACTION_KIND, command=types.Command(
            title=title, command=protocol.CMD_SAVE, arguments=[_save_arguments(ls, uri, text, scope)]))
    label = f"Save to {scope.value} memory"
    edit = add_entry_edit(ls, path, plan, confirm=True, label=label)
    return types.CodeAction(title=title, kind=protocol.SAVE_ACTION_KIND, edit=edit)


def _save_arguments(ls: MemoryLensServer, uri: str, text: str, scope: Scope) -> dict[str, str]:
    """The `memoryLens.server.save` arguments for TEXT selected in URI. A global save from a
    document outside the workspace leaves the URI out: the command would refuse it, and the
    global memory file does not depend on it."""
    arguments = {"text": text, "scope": scope.value, "uri": uri}
    if scope is Scope.GLOBAL and (path := uri_to_path(uri)) is not None and context_refusal(ls, path):
        del arguments["uri"]
    return arguments


def _flagged_entry(text: str, diag: types.Diagnostic) -> Entry | None:
    """The entry DIAG is about, if TEXT still has it where DIAG says: an entry starting on the
    diagnostic's first line whose normalised text is the one the diagnostic carries (`data`).
    A stale diagnostic (the text has changed since) points at another entry or at none."""
    data = json_values(diag.data)
    wanted = data.get("entry") if isinstance(data, dict) else None
    entry = parse(text).entry_at(diag.range.start.line)
    if not isinstance(wanted, str) or entry is None or entry.line != diag.range.start.line:
        return None
    return entry if entry.normalized == wanted else None


def _secret_entry(text: str, diag: types.Diagnostic) -> Entry | None:
    """The entry covering the line of `secret` diagnostic DIAG, if that line still holds a secret."""
    line = diag.range.start.line
    lines = split_lines(text)
    if line >= len(lines) or not find_secrets(lines[line]):
        return None
    return parse(text).entry_at(line)


def quick_fix(ls: MemoryLensServer, uri: str, diag: types.Diagnostic) -> types.CodeAction | None:
    """"Remove duplicate/redundant entry" or "Remove the entry holding a secret" for one of our
    diagnostics, if still accurate (a secret outside any entry gets no fix); for a `drift`, the
    bridge (`bridge_fix`)."""
    if diag.source == protocol.DIAGNOSTIC_SOURCE and diag.code == DRIFT:
        return bridge_fix(ls, uri, diag)
    if diag.source != protocol.DIAGNOSTIC_SOURCE or diag.code not in (DUPLICATE, REDUNDANT, SECRET):
        return None
    path = uri_to_path(uri)
    if path is None or is_note_document(path, ls.settings):  # a note's lines are JSON: edit the note
        return None
    text, _ = ls.current_text(path)
    flagged = _secret_entry if diag.code == SECRET else _flagged_entry
    entry = flagged(text, diag) if text is not None else None
    if entry is None:
        return None
    title = {DUPLICATE: protocol.REMOVE_DUPLICATE_TITLE, REDUNDANT: protocol.REMOVE_REDUNDANT_TITLE,
             SECRET: protocol.REMOVE_SECRET_TITLE}[diag.code]
    return types.CodeAction(title=title, kind=QUICK_FIX, diagnostics=[diag], is_preferred=True,
                            edit=remove_entry_edit(ls, path, text, entry))


def bridge_fix(ls: MemoryLensServer, uri: str, diag: types.Diagnostic) -> types.CodeAction | None:
    """The fix of a `drift` (`drift_fix.plan_drift_fix`), while the two files still drift: an
    import ("Make AGENTS.md the source: import it in CLAUDE.md") is an edit of the copy, offered
    on the copy; Gemini CLI's setting and a Copilot copy trimmed are the `fixDrift` command,
    offered on both files."""
    data = json_values(diag.data)
    other = Path(data["other"]) if isinstance(data, dict) and isinstance(data.get("other"), str) else None
    path = uri_to_path(uri)
    if other is None or path is None or other not in sibling_agent_files(path):
        return None
    fix = plan_drift_fix(path, other)
    if fix is None or (fix.kind == IMPORT and fix.copy != path):
        return None
    copy_text, _ = ls.current_text(fix.copy)
    source_text, _ = ls.current_text(fix.source)
    if copy_text is None or source_text is None or drift_message(fix.copy, copy_text, fix.source, source_text) is None:
        return None
    if fix.kind == IMPORT:
        title = protocol.BRIDGE_TITLE.format(source=other.name, copy=path.name)
        return types.CodeAction(title=title, kind=QUICK_FIX, diagnostics=[diag], edit=replace_all_edit(
            ls, path, copy_text, bridge_text(copy_text, other, source_text)))
    return types.CodeAction(title=fix.title, kind=QUICK_FIX, diagnostics=[diag], command=types.Command(
        title=fix.title, command=protocol.CMD_FIX_DRIFT, arguments=[{"uri": uri, "other": str(other)}]))


def fix_drift(ls: MemoryLensServer, args: dict) -> dict[str, str]:
    """`memoryLens.server.fixDrift` {uri, other}: write the fix of the drift of the file at URI
    from OTHER (`drift_fix.apply_drift_fix`); `message` says what was done."""
    uri, other = args.get("uri"), args.get("other")
    path = uri_to_path(uri) if isinstance(uri, str) else None
    if path is None or not isinstance(other, str):
        raise RequestFailed(message="fixDrift needs a file 'uri' and the 'other' file's path")
    refusal = write_refusal(ls, path)
    fix = plan_drift_fix(path, Path(other)) if refusal is None and Path(other) in sibling_agent_files(path) else None
    if fix is None:
        raise RequestFailed(message=refusal or f"{path}: no drift fix with {other}")
    try:
        return {"message": apply_drift_fix(fix, ls.settings.max_file_bytes)}
    except MemoryFileError as err:
        raise RequestFailed(message=str(err)) from None


def _wanted(kind: str, only: Any) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[QUICK_FIX, protocol.SAVE_ACTION_KIND], resolve_provider=False))
    async def code_action(ls: MemoryLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        # Off the event loop: planning an add parses the memory file, and a selection in a file
        # that is not open is read from disk.
        return await asyncio.to_thread(code_actions_for, ls, params)

    @server.command(protocol.CMD_FIX_DRIFT)
    async def cmd_fix_drift(ls, *args: Any) -> dict[str, str]:
        return await asyncio.to_thread(fix_drift, ls, first_object(list(args)))


def code_actions_for(ls: MemoryLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The save actions for the selection and the quick fixes for our diagnostics (worker thread)."""
    uri = params.text_document.uri
    only = params.context.only if params.context else None
    actions: list[types.CodeAction] = []
    if _wanted(protocol.SAVE_ACTION_KIND, only):
        text = selected_text(ls, uri, params.range)
        if clean_entry_text(text):
            for scope in (Scope.PROJECT, Scope.GLOBAL):
                action = save_action(ls, uri, text, scope)
                if action is not None:
                    actions.append(action)
    if _wanted(QUICK_FIX, only) and params.context:
        for diag in params.context.diagnostics:
            fix = quick_fix(ls, uri, diag)
            if fix is not None:
                actions.append(fix)
    return actions
