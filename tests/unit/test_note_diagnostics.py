"""Which open documents are note files (lsp/note_diagnostics.py), and their `secret` diagnostics
at the file's own positions."""

from __future__ import annotations

from pathlib import Path

from memory_lens.core.settings import Settings
from memory_lens.lsp.note_diagnostics import is_note_document, note_diagnostics

KEY = "AKIA" + "Z7Q2KX5MPL3VWN8R"


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
