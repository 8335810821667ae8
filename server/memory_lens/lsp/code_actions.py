"""textDocument/codeAction: save a selection to project or global memory; quick fixes.

On any non-empty selection in any file: "Save selection to project memory" and "Save selection
to global memory". Each carries a WorkspaceEdit computed by `plan_add`, the function behind
`memory-lens add`, annotated so that clients supporting change annotations show the change and
ask before applying it. A selection already saved is not offered again: the action says so
(disabled, where the client supports that). Clients that cannot create files get the
`memoryLens.server.save` command instead of an edit for a missing memory file.

Quick fixes remove a duplicate or a redundant entry flagged by a diagnostic, only while that
entry is still where the diagnostic says (its normalised text travels in the diagnostic's `data`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lsprotocol import types

from memory_lens.core.checks import DUPLICATE, REDUNDANT
from memory_lens.core.discovery import Scope, find_project_root
from memory_lens.core.edit import EntryTextError, plan_add
from memory_lens.core.entries import memory_file_for
from memory_lens.core.files import FileStatus
from memory_lens.core.markdown import Entry, clean_entry_text, parse
from memory_lens.lsp import protocol
from memory_lens.lsp.convert import plain, uri_to_path
from memory_lens.lsp.edits import add_entry_edit, can_create_files, remove_entry_edit
from memory_lens.lsp.effective import uri_target_dir
from memory_lens.lsp.server import MemoryLensServer

QUICK_FIX = types.CodeActionKind.QuickFix


def selected_text(ls: MemoryLensServer, uri: str, rng: types.Range) -> str:
    """The text of RNG in document URI ("" when the range is empty, out of the document, or the
    document is neither open nor a usable file)."""
    if rng.start == rng.end:
        return ""
    doc = ls.document(uri)
    if doc is None:
        return ""
    try:
        lines = doc.lines
        if rng.start.line >= len(lines) and rng.end.line >= len(lines):
            return ""
        start = doc.offset_at_position(rng.start)
        end = doc.offset_at_position(rng.end)
        source = doc.source
    except Exception:
        return ""
    return source[min(start, end):max(start, end)]


def _current_text(ls: MemoryLensServer, path: Path) -> tuple[str | None, str]:
    """The memory file's text as the client sees it (open buffer, else disk); None if unusable."""
    doc = ls.open_doc(path)
    if doc is not None:
        return doc.text, ""
    got = ls.store.read(path)
    if got.status is FileStatus.UNUSABLE:
        return None, got.reason
    return got.text, ""


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
    content, reason = _current_text(ls, path)
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
    if missing and not can_create_files(ls):
        return types.CodeAction(title=title, kind=protocol.SAVE_ACTION_KIND, command=types.Command(
            title=title, command=protocol.CMD_SAVE, arguments=[{"text": text, "scope": scope.value, "uri": uri}]))
    label = f"Save to {scope.value} memory"
    edit = add_entry_edit(ls, path, plan, confirm=True, label=label)
    return types.CodeAction(title=title, kind=protocol.SAVE_ACTION_KIND, edit=edit)


def _flagged_entry(text: str, diag: types.Diagnostic) -> Entry | None:
    """The entry DIAG is about, if TEXT still has it where DIAG says: an entry starting on the
    diagnostic's first line whose normalised text is the one the diagnostic carries (`data`).
    A stale diagnostic (the text has changed since) points at another entry or at none."""
    data = plain(diag.data)
    wanted = data.get("entry") if isinstance(data, dict) else None
    entry = parse(text).entry_at(diag.range.start.line)
    if not isinstance(wanted, str) or entry is None or entry.line != diag.range.start.line:
        return None
    return entry if entry.normalized == wanted else None


def quick_fix(ls: MemoryLensServer, uri: str, diag: types.Diagnostic) -> types.CodeAction | None:
    """"Remove duplicate/redundant entry" for one of our diagnostics, if still accurate."""
    if diag.source != protocol.DIAGNOSTIC_SOURCE or diag.code not in (DUPLICATE, REDUNDANT):
        return None
    path = uri_to_path(uri)
    if path is None:
        return None
    text, _ = _current_text(ls, path)
    entry = _flagged_entry(text, diag) if text is not None else None
    if entry is None:
        return None
    title = "Remove duplicate entry" if diag.code == DUPLICATE else "Remove redundant entry"
    return types.CodeAction(title=title, kind=QUICK_FIX, diagnostics=[diag], is_preferred=True,
                            edit=remove_entry_edit(ls, path, text, entry))


def _wanted(kind: str, only: Any) -> bool:
    return not only or any(kind == k or kind.startswith(f"{k}.") for k in only)


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[QUICK_FIX, protocol.SAVE_ACTION_KIND], resolve_provider=False))
    def code_action(ls: MemoryLensServer, params: types.CodeActionParams) -> list[types.CodeAction]:
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
