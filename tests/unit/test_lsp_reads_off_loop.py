"""Handlers that read many memory files do it on a worker thread, never on the event loop (where
every other request would wait): hover (every known memory file, for where else an entry
appears) and code lens (the chain)."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path

import pytest
from lsprotocol import types

from memory_lens.core.settings import Settings
from memory_lens.lsp.convert import path_to_uri
from memory_lens.lsp.app import build_server
from memory_lens.lsp.server import MemoryLensServer


def initialized_server(folder: Path, global_dir: Path) -> MemoryLensServer:
    """A server through `initialize` (run inside the event loop), as a client would start it."""
    ls = build_server(Settings(global_dir=global_dir))
    steps = ls.protocol.lsp_initialize(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=path_to_uri(folder)))
    try:
        step = next(steps)
        while True:
            handler, args, kwargs = step
            step = steps.send(handler(*args, **(kwargs or {})))
    except StopIteration:
        pass
    return ls


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path))
    (root / "proj" / ".git").mkdir(parents=True)
    (root / "proj" / "GEMINI.md").write_text("- Shared rule\n", encoding="utf-8")
    (root / "proj" / "pkg").mkdir()
    (root / "proj" / "pkg" / "GEMINI.md").write_text("- Shared rule\n", encoding="utf-8")
    (root / "home").mkdir()
    return root


def record_threads(ls: MemoryLensServer, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads on which the store reads memory files for a merge or an entry search."""
    threads: list[int] = []
    for name in ("memory_for", "find_hits"):
        real = getattr(ls.store, name)

        def recorded(*args, _real=real, **kwargs):
            threads.append(threading.get_ident())
            return _real(*args, **kwargs)

        monkeypatch.setattr(ls.store, name, recorded)
    return threads


def handler(ls: MemoryLensServer, method: str):
    return ls.protocol.fm.features[method]


def test_hover_reads_off_the_event_loop(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def run() -> None:
        ls = initialized_server(project / "proj", project / "home")
        ls.store.scan(ls.folders())
        threads = record_threads(ls, monkeypatch)
        memory = project / "proj" / "pkg" / "GEMINI.md"
        hover = await handler(ls, types.TEXT_DOCUMENT_HOVER)(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path_to_uri(memory)),
            position=types.Position(line=0, character=3)))
        assert "more general copy" in hover.contents.value and "Effective memory here" in hover.contents.value
        assert threads and threading.get_ident() not in threads

    asyncio.run(run())


def test_code_lens_reads_off_the_event_loop(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def run() -> None:
        ls = initialized_server(project / "proj", project / "home")
        threads = record_threads(ls, monkeypatch)
        memory = project / "proj" / "pkg" / "GEMINI.md"
        lenses = await handler(ls, types.TEXT_DOCUMENT_CODE_LENS)(types.CodeLensParams(
            text_document=types.TextDocumentIdentifier(uri=path_to_uri(memory))))
        assert [lens.command.title for lens in lenses] == ["Effective memory here: 2 files · ~7 tokens"]
        assert threads and threading.get_ident() not in threads

    asyncio.run(run())


def test_explain_merges_gemini_memory_once_per_directory(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """memory/explain asks the store for Gemini's memory of a directory once (its kept answer
    remembers that very memory), not once to look and again to use; a kept answer asks again,
    once per directory, to see that it still holds."""
    from memory_lens.lsp.explain import explain_result

    from memory_lens.core.agents import common

    monkeypatch.setattr(common, "SETTLE_NS", 0)  # the files just written count as settled

    async def run() -> None:
        ls = initialized_server(project / "proj", project / "home")
        asked: list[Path] = []
        real = ls.store.memory_for

        def counted(directory: Path, *args, **kwargs):
            asked.append(directory)
            return real(directory, *args, **kwargs)

        monkeypatch.setattr(ls.store, "memory_for", counted)
        uri = path_to_uri(project / "proj" / "pkg" / "GEMINI.md")
        first = explain_result(ls, uri, ["gemini"], None)
        assert asked and len(asked) == len(set(asked))
        worked_out = set(asked)
        asked.clear()
        assert explain_result(ls, uri, ["gemini"], None) == first
        assert len(asked) == len(set(asked)) and set(asked) == worked_out

    asyncio.run(run())
