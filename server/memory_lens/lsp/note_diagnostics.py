"""textDocument/publishDiagnostics for an open note file: a `*.json` of the project's notes
directory or of the global one (core/notes). Each line of the file that holds a secret gets the
`secret` error `memory-lens check` reports for a project's notes, at the file's own line and
column (the editor shows the file, not the note's content). The other hygiene checks are about
memory entries and agents' files, which a note is not; no quick fix removes a line of a note (it
would break its JSON): edit the note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from memory_lens.core.checks import note_file_secrets
from memory_lens.core.discovery import find_project_root
from memory_lens.core.markdown import split_lines
from memory_lens.core.notes import notes_settings
from memory_lens.core.notes.naming import is_note_file
from memory_lens.core.settings import Settings
from memory_lens.lsp.diagnostics import to_diagnostic


def is_note_document(path: Path, settings: Settings) -> bool:
    """Whether PATH is a note file of the global notes directory or of its project's."""
    if not is_note_file(path.name):
        return False
    where = notes_settings(settings)
    root = find_project_root(path.parent)
    return path.parent == where.global_dir or (root is not None and path.parent == where.project_dir(root))


def note_diagnostics(store: Any, path: Path, text: str, encoding: Any) -> list[types.Diagnostic]:
    """The `secret` diagnostics of note file PATH with TEXT (the open buffer)."""
    lines = split_lines(text)
    return [to_diagnostic(f, lines, encoding) for f in note_file_secrets(path, text)]
