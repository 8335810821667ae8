"""Which open documents are note files (lsp/note_diagnostics.py), and their `secret` diagnostics
at the file's own positions."""

from __future__ import annotations

from pathlib import Path

from memory_lens.core.checks import note_secret_findings
from memory_lens.core.discovery import Scope
from memory_lens.core.notes.model import Note
from memory_lens.core.settings import Settings
from memory_lens.lsp.note_diagnostics import is_note_document, note_diagnostics

KEY = "AKIA" + "Z7Q2KX5MPL3VWN8R"
STAMP = "2025-10-08T03:07:11Z"


def test_a_note_file_is_a_json_of_a_notes_directory(tmp_path: Path) -> None:
    (tmp_path / "p" / ".git").mkdir(parents=True)
    settings = Settings(notes_dir=tmp_path / "global")
    notes = tmp_path / "p" / ".memory-lens" / "notes"
    assert is_note_document(notes / "deploy.json", settings)
    assert is_note_document(tmp_path / "global" / "x.json", settings)
    assert not is_note_document(notes / "index.json", settings)
    assert not is_note_document(notes / ".tmp.json", settings)
    assert not is_note_document(tmp_path / "p" / "package.json", settings)


def test_secret_lines_of_a_note_at_the_file_position(tmp_path: Path) -> None:
    text = '{\n  "title": "deploy",\n  "content": "use ' + KEY + '"\n}\n'
    [d] = note_diagnostics(None, tmp_path / "deploy.json", text, "utf-16")
    assert (d.code, d.range.start.line, d.range.start.character) == ("secret", 2, text.splitlines()[2].index(KEY))
    assert KEY not in d.message


def test_a_note_file_is_checked_as_its_content_at_the_file_position(tmp_path: Path) -> None:
    """`check` and the editor agree on the note file's line and column, and a secret that JSON's
    escaping hides from a scan of the file's text (a password in quotes) is still found."""
    content = 'Deploy notes\n\ndb: password = "' + "Q7x" + 'v9PzLmW2kR4t"\nand ' + KEY + "\n"
    note = tmp_path / ".memory-lens" / "notes" / "deploy.json"
    note.parent.mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    note.write_text(Note("deploy", content, (), STAMP, STAMP, Scope.PROJECT).encode(), encoding="utf-8")
    text = note.read_text(encoding="utf-8")
    [line] = [n for n, got in enumerate(text.splitlines()) if '"content"' in got]
    got = note_diagnostics(None, note, text, "utf-16")
    assert [(d.range.start.line, d.range.start.character) for d in got] == [
        (line, text.splitlines()[line].index("Q7x")), (line, text.splitlines()[line].index(KEY))]
    cli = note_secret_findings(tmp_path, Settings(global_dir=tmp_path / "home"))
    assert [(f.line - 1, f.column - 1, f.message) for f in cli] == [
        (d.range.start.line, d.range.start.character, d.message) for d in got]
