"""Notes: named, tagged notes kept between sessions, in a project scope and a global scope (the
notes spec, seed 002). One JSON file per note; a search index in the user cache directory.

Modules: `model` (a note and its rules), `naming` (file names), `locations` (the directories and
layouts), `disk` (reading and writing one file through the core writer), `fulltext` (tokens,
queries, BM25), `index` (the SQLite index), `store` (the operations), `transfer` (backup,
restore, export, import), `document` (a note as a Markdown document), `search` (the index's
queries), `unicode_marks` (where combining marks are, for the tokenizer).
"""

from memory_lens.core.notes.locations import Layout, Location, NotesSettings, notes_settings
from memory_lens.core.notes.model import (
    Note,
    NoteConflictError,
    NoteError,
    NoteExistsError,
    NoteFileError,
    NoteInvalidError,
    NoteNotFoundError,
    Problem,
    StoredNote,
)
from memory_lens.core.notes.store import NoProjectError, NoteSummary, NotesStore, Page, WriteResult

__all__ = [
    "Layout",
    "Location",
    "NoProjectError",
    "Note",
    "NoteConflictError",
    "NoteError",
    "NoteExistsError",
    "NoteFileError",
    "NoteInvalidError",
    "NoteNotFoundError",
    "NoteSummary",
    "NotesSettings",
    "NotesStore",
    "Page",
    "Problem",
    "StoredNote",
    "WriteResult",
    "notes_settings",
]
