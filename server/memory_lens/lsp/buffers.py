"""Memory files open in the client with unsaved edits: commands edit the buffer, not the disk.

Writing a memory file whose buffer has unsaved edits would leave the editor with a conflict, and
what was typed would overwrite the command's change on the next save (or the other way round).
So when the client supports `workspace/applyEdit`, `memoryLens.server.save` and `remove` change
that buffer instead, with the same edit `memory-lens add`/`remove` would make to its text, and
say `unsaved: true`; the user saves it. Without `applyEdit` they write the disk as usual.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from memory_lens.core.discovery import Scope
from memory_lens.core.edit import plan_add
from memory_lens.core.markdown import Entry, parse
from memory_lens.lsp.convert import path_to_uri
from memory_lens.lsp.edits import add_entry_edit, remove_entry_edit

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer, OpenDoc


def unsaved_buffer(ls: MemoryLensServer, path: Path) -> OpenDoc | None:
    """The open buffer of memory file PATH when it differs from the file on disk and the client
    can apply edits to it; None when a command should write the disk."""
    doc = ls.open_doc(path)
    if doc is None or not ls.supports("workspace.apply_edit"):
        return None
    return doc if doc.text != ls.store.read(path).text else None


def save_in_buffer(ls: MemoryLensServer, doc: OpenDoc, scope: Scope, text: str) -> dict[str, Any]:
    """Add TEXT to the unsaved buffer DOC where `memory-lens add` would add it to that text."""
    plan = plan_add(doc.text, text)
    if not plan.already_present:
        edit = add_entry_edit(ls, doc.path, plan, confirm=False)
        ls.workspace_apply_edit(types.ApplyWorkspaceEditParams(edit=edit, label="Memory Lens: save entry"))
    return {"path": str(doc.path), "uri": path_to_uri(doc.path), "scope": scope.value, "text": plan.text,
            "line": plan.entry_line + 1, "added": not plan.already_present, "created": False,
            "unsaved": True}


def entry_in_buffer(doc: OpenDoc, entry: Entry) -> Entry | None:
    """The entry of buffer DOC that is ENTRY (found in the file on disk): the one with the same
    normalised text, nearest ENTRY's line when there are several; None when there is none."""
    same = [e for e in parse(doc.text).entries if e.normalized == entry.normalized]
    return min(same, key=lambda e: abs(e.line - entry.line), default=None)


def remove_in_buffer(ls: MemoryLensServer, doc: OpenDoc, entry: Entry, scope: Scope) -> dict[str, Any]:
    """Remove ENTRY (an entry of DOC's text) from the unsaved buffer DOC."""
    edit = remove_entry_edit(ls, doc.path, doc.text, entry)
    ls.workspace_apply_edit(types.ApplyWorkspaceEditParams(edit=edit, label="Memory Lens: remove entry"))
    return {"path": str(doc.path), "uri": path_to_uri(doc.path), "scope": scope.value, "text": entry.text,
            "line": entry.line + 1, "unsaved": True}
