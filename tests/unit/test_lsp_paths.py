"""Path operations on client-supplied paths: a path the system cannot name (a NUL byte, a name
or a path too long) is no directory at all, never an exception that fails a request or stops
the server's watch."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.files import real_dir
from memory_lens.core.discovery import document_target


@pytest.fixture
def base(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    (root / "proj" / "src").mkdir(parents=True)
    return root


def unnameable(base: Path) -> list[Path]:
    return [base / "a\0b" / "GEMINI.md", base / ("x" * 300) / "GEMINI.md", base / ("x" * 300),
            base.joinpath(*["y" * 200] * 25, "GEMINI.md")]


def test_document_target(base: Path) -> None:
    assert document_target(base / "proj" / "src" / "app.py") == base / "proj" / "src"  # need not exist
    assert document_target(base / "proj" / "src") == base / "proj" / "src"
    assert document_target(base / "proj" / "new" / "deeper" / "x.md") == base / "proj"  # nearest existing
    for path in unnameable(base):
        assert document_target(path) is None, str(path)[:80]


def test_real_dir(base: Path) -> None:
    os.symlink(base / "proj", base / "link")
    assert real_dir(base / "link" / "src") == base / "proj" / "src"
    assert real_dir(base / "proj" / "missing") is None
    for path in unnameable(base):
        assert real_dir(path) is None and real_dir(path.parent) in (None, base), str(path)[:80]
