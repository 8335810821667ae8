"""The fast paths give exactly the answers of the plain ones they stand for.

`entry_keys` stands for `parse` + `Entry.normalized`, `files.realpath` for `os.path.realpath`,
the store's one-`lstat` reads for `read_memory_file`, and a diagnostics digest changes whenever
any field of any diagnostic does.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import attrs
import pytest
from lsprotocol import types

from memory_lens.core.files import read_memory_file, realpath
from memory_lens.core.markdown import entry_keys, parse
from memory_lens.core.settings import Settings
from memory_lens.lsp.diagnostics import fingerprint
from memory_lens.lsp.store import MemoryStore

PIECES = ["- ", "* ", "+ ", "-", "*", "_", "#", "## ", "   ", "    ", "\t", " ", "```", "~~~", "``` `x`",
          "===", "---", "- - -", "***", "  - sub", "1. x", "text", "\n", "\r\n", "\r", "\u3000", "\xa0",
          "．", "ＡＢ", "É", "ß", "\x1c", "\u2028", ".", "!", "  * ", "*\t", "-\t"]


def slow_keys(text: str) -> list[tuple[str, int, int]]:
    return [(e.normalized, e.line, e.end_line) for e in parse(text).entries]


@pytest.mark.parametrize("seed", range(4))
def test_entry_keys_match_parse_on_random_markdown(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2500):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))
        assert list(zip(*entry_keys(text))) == slow_keys(text), repr(text)


@pytest.mark.parametrize("text", [
    "", "- a\n", "- a\n  b\n- A.\n", "+ * \r\n    x\n", "- \n  * y \n  z\n", "- - -\n- x\n",
    "- a\n  ```\nnot indented\n  ```\n- b\n", "```\n- in a fence\n```\n- after\n", "- x\n\n\n  y\n\nz\n",
])
def test_entry_keys_match_parse_on_edge_cases(text: str) -> None:
    assert list(zip(*entry_keys(text))) == slow_keys(text)


def test_realpath_matches_os_realpath(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "f").write_text("x")
    os.symlink(tmp_path / "a", tmp_path / "la")
    os.symlink("b/f", tmp_path / "a" / "lf")
    os.symlink(tmp_path / "nope", tmp_path / "dangling")
    os.symlink(tmp_path / "loop1", tmp_path / "loop2")
    os.symlink(tmp_path / "loop2", tmp_path / "loop1")
    os.mkfifo(tmp_path / "fifo")
    for rel in ["a", "la", "la/b/f", "a/lf", "dangling", "loop1", "fifo", "la/../a/b", "missing/x", "a/b/f/", "."]:
        assert realpath(tmp_path / rel) == os.path.realpath(tmp_path / rel), rel


def test_store_reads_match_read_memory_file(tmp_path: Path) -> None:
    (tmp_path / "GEMINI.md").write_text("- a\n")
    os.symlink(tmp_path / "GEMINI.md", tmp_path / "link.md")
    os.symlink(tmp_path / "gone.md", tmp_path / "dangling.md")
    (tmp_path / "dir.md").mkdir()
    store = MemoryStore(Settings(global_dir=tmp_path / "global"))
    for name in ["GEMINI.md", "link.md", "dangling.md", "dir.md", "missing.md", "GEMINI.md/x"]:
        assert store.read(tmp_path / name) == read_memory_file(tmp_path / name), name
        assert store.read(tmp_path / name) == read_memory_file(tmp_path / name), name  # cached


def _diagnostic() -> types.Diagnostic:
    at = types.Position(line=1, character=0)
    where = types.Location(uri="file:///g.md", range=types.Range(start=at, end=at))
    return types.Diagnostic(
        range=types.Range(start=types.Position(line=2, character=0), end=types.Position(line=3, character=9)),
        message="m", severity=types.DiagnosticSeverity.Warning, code="duplicate",
        code_description=types.CodeDescription(href="https://example.invalid/d"), source="memory-lens",
        tags=[types.DiagnosticTag.Unnecessary],
        related_information=[types.DiagnosticRelatedInformation(location=where, message="first")],
        data={"code": "duplicate", "line": 3, "endLine": 4})


def test_fingerprint_changes_with_every_field() -> None:
    base = _diagnostic()
    assert fingerprint([base]) == fingerprint([_diagnostic()])
    assert fingerprint([]) == b""
    changed = {
        "range": types.Range(start=types.Position(line=2, character=0), end=types.Position(line=3, character=8)),
        "message": "n", "severity": types.DiagnosticSeverity.Error, "code": "redundant",
        "code_description": types.CodeDescription(href="https://example.invalid/e"), "source": "other",
        "tags": [types.DiagnosticTag.Deprecated],
        "related_information": [types.DiagnosticRelatedInformation(
            location=types.Location(uri="file:///h.md", range=base.related_information[0].location.range),
            message="first")],
        "data": {"code": "duplicate", "line": 3, "endLine": 5},
    }
    assert set(changed) == {f.name for f in attrs.fields(types.Diagnostic)}  # a new field needs a case here
    for name, value in changed.items():
        assert fingerprint([attrs.evolve(base, **{name: value})]) != fingerprint([base]), name
