"""WorkspaceEdits that add or remove memory entries, shaped for what the client supports.

With `documentChanges` support: a `CreateFile` first when the memory file is missing, then a
versioned text edit; both carry a change annotation that asks for confirmation when the client
supports annotations (the diff-and-approve step of saving memory). Otherwise a plain `changes`
map (which cannot create files: callers fall back to the save command then).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.edit import AddPlan, plan_remove
from memory_lens.core.markdown import Entry, split_lines, strip_eol
from memory_lens.lsp.convert import client_column, path_to_uri
from memory_lens.lsp.protocol import CHANGE_ANNOTATION_ID

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer


def can_create_files(ls: MemoryLensServer) -> bool:
    ops = []
    try:
        ops = ls.client_capabilities.workspace.workspace_edit.resource_operations or []  # type: ignore[union-attr]
    except AttributeError:
        pass
    return ls.supports("workspace.workspace_edit.document_changes") and types.ResourceOperationKind.Create in ops


def _position(lines: list[str], line: int, column: int, encoding: object) -> types.Position:
    text = strip_eol(lines[line]) if 0 <= line < len(lines) else ""
    return types.Position(line=line, character=client_column(text, column, encoding))


def _workspace_edit(ls: MemoryLensServer, path: Path, edit: types.TextEdit, create: bool,
                    annotation: types.ChangeAnnotation | None) -> types.WorkspaceEdit:
    uri = path_to_uri(path)
    if not ls.supports("workspace.workspace_edit.document_changes"):
        return types.WorkspaceEdit(changes={uri: [edit]})
    use_annotation = annotation is not None and ls.supports("workspace.workspace_edit.change_annotation_support")
    if use_annotation:
        edit = types.AnnotatedTextEdit(range=edit.range, new_text=edit.new_text, annotation_id=CHANGE_ANNOTATION_ID)
    doc = ls.open_doc(path)
    changes: list = []
    if create:
        changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True),
                                        annotation_id=CHANGE_ANNOTATION_ID if use_annotation else None))
    changes.append(types.TextDocumentEdit(
        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version if doc else None),
        edits=[edit]))
    return types.WorkspaceEdit(document_changes=changes,
                               change_annotations={CHANGE_ANNOTATION_ID: annotation} if use_annotation else None)


def add_entry_edit(ls: MemoryLensServer, path: Path, plan: AddPlan, confirm: bool,
                   label: str = "Save to memory") -> types.WorkspaceEdit:
    """The edit that applies PLAN (from `plan_add` on the file's current text) to PATH."""
    assert plan.insertion is not None
    doc = ls.open_doc(path)
    old = plan.content[:plan.insertion.offset] + plan.content[plan.insertion.offset + len(plan.insertion.text):]
    lines = split_lines(old)
    pos = _position(lines, plan.insertion.line, plan.insertion.column, ls.position_encoding)
    edit = types.TextEdit(range=types.Range(start=pos, end=pos), new_text=plan.insertion.text)
    create = doc is None and not os.path.lexists(path)
    annotation = types.ChangeAnnotation(
        label=label, needs_confirmation=confirm,
        description=f"Adds '- {plan.text.splitlines()[0]}' to {path}")
    return _workspace_edit(ls, path, edit, create, annotation)


def _offset_position(lines: list[str], offset: int, encoding: object) -> types.Position:
    pos = 0
    for i, line in enumerate(lines):
        if offset < pos + len(line) or (offset == pos + len(line) and not line.endswith(("\n", "\r"))):
            return _position(lines, i, offset - pos, encoding)
        pos += len(line)
    return types.Position(line=len(lines), character=0)


def remove_entry_edit(ls: MemoryLensServer, path: Path, text: str, entry: Entry) -> types.WorkspaceEdit:
    """The edit that deletes ENTRY from PATH whose current text is TEXT, exactly as
    `memory-lens remove` would (the same `plan_remove`)."""
    plan = plan_remove(text, entry)
    lines = split_lines(text)
    rng = types.Range(start=_offset_position(lines, plan.start, ls.position_encoding),
                      end=_offset_position(lines, plan.end, ls.position_encoding))
    return _workspace_edit(ls, path, types.TextEdit(range=rng, new_text=""), False, None)


def replace_all_edit(ls: MemoryLensServer, path: Path, text: str, new_text: str) -> types.WorkspaceEdit:
    """The edit that replaces the whole of PATH, whose current text is TEXT, with NEW_TEXT."""
    lines = split_lines(text)
    rng = types.Range(start=types.Position(line=0, character=0),
                      end=_offset_position(lines, len(text), ls.position_encoding))
    return _workspace_edit(ls, path, types.TextEdit(range=rng, new_text=new_text), False, None)
