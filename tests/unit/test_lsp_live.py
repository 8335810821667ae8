"""memory_lens.lsp.live: a background job publishes what it computed only where the open
buffers are still those it computed from.

A job checks files in a worker thread, from a snapshot of the open buffers taken when it
starts; the editor's edits, opens and closes are handled on the event loop meanwhile, each
publishing diagnostics for the newer state at once. These tests make that "meanwhile"
deterministic: the job's check is wrapped so that the edit happens while it runs, and the
server is a small stand-in with what the engine uses of it.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import pytest
from lsprotocol import types

from memory_lens.core.settings import Settings
from memory_lens.lsp import diagnostics, live
from memory_lens.lsp.convert import path_to_uri
from memory_lens.lsp.server import OpenDoc
from memory_lens.lsp.store import MemoryStore


class StandIn:
    """What the live engine uses of MemoryLensServer; records every publication."""

    position_encoding = types.PositionEncodingKind.Utf16

    def __init__(self, store: MemoryStore, folder: Path) -> None:
        self.store = store
        self.folder = folder
        self.docs: dict[Path, OpenDoc] = {}
        self.published: dict[str, bytes] = {}
        self.sent: list[types.PublishDiagnosticsParams] = []
        self.protocol = SimpleNamespace(notify=lambda method, params: None)

    @property
    def settings(self) -> Settings:
        return self.store.settings

    def folders(self) -> list[Path]:
        return [self.folder]

    def is_memory_path(self, path: Path | None) -> bool:
        return path is not None and path.name in self.store.settings.filenames

    def is_agent_path(self, path: Path | None) -> bool:
        return False

    def open_memory_docs(self, among: set[str] | None = None, any_file: bool = False) -> dict[Path, OpenDoc]:
        return {p: d for p, d in self.docs.items() if among is None or str(p) in among}

    def open_text_document(self, uri: str) -> OpenDoc | None:
        return next((d for d in self.docs.values() if d.uri == uri), None)

    def supports(self, field: str) -> bool:
        return False

    def text_document_publish_diagnostics(self, params: types.PublishDiagnosticsParams) -> None:
        self.sent.append(params)

    # What the document handlers do on the event loop (documents.py).

    def open(self, path: Path, text: str, version: int) -> None:
        self.docs[path] = OpenDoc(path_to_uri(path), path, text, version)
        diags = diagnostics.diagnostics_for(self.store, path, text, self.position_encoding)
        diagnostics.publish(self, path, diags, version, force=True)

    def change(self, path: Path, text: str) -> None:
        version = (self.docs[path].version or 0) + 1
        self.docs[path] = OpenDoc(path_to_uri(path), path, text, version)
        diagnostics.publish(self, path, diagnostics.diagnostics_for(self.store, path, text, self.position_encoding),
                            version)

    def close(self, path: Path) -> None:
        del self.docs[path]
        diagnostics.publish(self, path, diagnostics.diagnostics_for(self.store, path, None, self.position_encoding))

    def last(self, path: Path) -> tuple[int | None, list[str]]:
        """The version and codes of the last diagnostics published for PATH."""
        (params, *_) = [p for p in reversed(self.sent) if p.uri == path_to_uri(path)]
        return params.version, [str(d.code) for d in params.diagnostics]


@pytest.fixture
def server(tmp_path: Path) -> StandIn:
    root = Path(os.path.realpath(tmp_path))
    (root / "home" / ".gemini").mkdir(parents=True)
    (root / "home" / ".gemini" / "GEMINI.md").write_text("- Global rule\n", encoding="utf-8")
    (root / "proj" / ".git").mkdir(parents=True)
    (root / "proj" / "GEMINI.md").write_text("- Zed rule\n", encoding="utf-8")
    ls = StandIn(MemoryStore(Settings(global_dir=root / "home" / ".gemini")), root / "proj")
    ls.store.scan([ls.folder])
    return ls


@pytest.fixture
def run_job_while(monkeypatch: pytest.MonkeyPatch) -> Callable[[StandIn, Callable[[], None], Path], None]:
    """`run(ls, meanwhile, changed)`: one job for a change of CHANGED on disk, during which
    MEANWHILE happens on the event loop (after the job's check, before it publishes)."""
    real_compute = diagnostics.compute

    def run(ls: StandIn, meanwhile: Callable[[], None], changed: Path) -> None:
        async def job() -> None:
            loop = asyncio.get_running_loop()

            def compute(*args, **kwargs):  # in the worker thread
                results = real_compute(*args, **kwargs)
                loop.call_soon_threadsafe(meanwhile)  # handled before the job resumes
                return results

            monkeypatch.setattr(diagnostics, "compute", compute)
            await live.LiveEngine(ls)._rescan_and_recheck(False, {changed})  # type: ignore[arg-type]

        asyncio.run(job())

    return run


def test_a_buffer_changed_during_a_job_keeps_its_newer_diagnostics(server: StandIn, run_job_while) -> None:
    project = server.folder / "GEMINI.md"
    server.open(project, "- Zed rule\n", 1)
    global_file = server.store.settings.global_dir / "GEMINI.md"
    global_file.write_text("- Global rule\n- Another global rule\n", encoding="utf-8")
    run_job_while(server, lambda: server.change(project, "- Zed rule\n- zed RULE\n"), global_file)
    assert server.last(project) == (2, ["duplicate"])


def test_a_buffer_closed_during_a_job_gets_the_diagnostics_of_the_disk(server: StandIn, run_job_while) -> None:
    project = server.folder / "GEMINI.md"
    server.open(project, "- Zed rule\n- zed RULE\n", 1)  # unsaved: the disk has no duplicate
    global_file = server.store.settings.global_dir / "GEMINI.md"
    global_file.write_text("- Global rule\n- Another global rule\n", encoding="utf-8")
    run_job_while(server, lambda: server.close(project), global_file)
    assert server.last(project) == (None, [])


def test_a_file_opened_during_a_job_keeps_the_diagnostics_of_its_buffer(server: StandIn, run_job_while) -> None:
    project = server.folder / "GEMINI.md"
    global_file = server.store.settings.global_dir / "GEMINI.md"
    global_file.write_text("- Global rule\n- Zed rule\n", encoding="utf-8")  # the project's entry is redundant
    run_job_while(server, lambda: server.open(project, "- Only in the buffer\n", 1), global_file)
    assert server.last(project) == (1, [])


def test_an_unchanged_buffer_gets_the_jobs_diagnostics(server: StandIn, run_job_while) -> None:
    project = server.folder / "GEMINI.md"
    server.open(project, "- Zed rule\n", 1)
    global_file = server.store.settings.global_dir / "GEMINI.md"
    global_file.write_text("- Global rule\n- zed rule\n", encoding="utf-8")
    run_job_while(server, lambda: None, global_file)
    assert server.last(project) == (1, ["redundant"])
