"""Gemini's settings.json in the language server: `~/.gemini/settings.json` chooses the memory files
and the import format of memory/effective, and the `memoryLens.filenames` setting still wins."""

from __future__ import annotations

import json

import pytest

from .conftest import Starter
from .harness import FEATURE_CLIENTS, Workspace

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)


def configure(ws: Workspace) -> None:
    ws.write("home/.gemini/settings.json",
             json.dumps({"context": {"fileName": "AGENTS.md", "importFormat": "flat"}}))
    ws.write("work/proj/AGENTS.md", "agents @./more.md\n")
    ws.write("work/proj/more.md", "more\n")


async def test_settings_json_names_and_flat_imports(ws: Workspace, start: Starter) -> None:
    configure(ws)
    lsp = await start()
    result = await lsp.effective(ws.proj)
    paths = [s["path"] for s in result["sources"]]
    assert paths == [str(ws.global_dir / "GEMINI.md"), str(ws.proj / "AGENTS.md"), str(ws.proj / "GEMINI.md")]
    assert (f"--- File: {ws.proj} ---\nagents @./more.md\n--- End of File: {ws.proj} ---\n\n"
            f"--- File: {ws.proj}/more.md ---\nmore\n--- End of File: {ws.proj}/more.md ---") in result["text"]
    show = await ws.cli_json("show", str(ws.proj))  # the CLI, run from the same home, agrees
    assert result["text"] == show["text"]


async def test_filenames_setting_beats_settings_json(ws: Workspace, start: Starter) -> None:
    configure(ws)
    lsp = await start(init_options={"memoryLens": {"filenames": ["GEMINI.md"]}})
    result = await lsp.effective(ws.proj)
    assert [s["path"] for s in result["sources"]] == [str(ws.global_dir / "GEMINI.md"), str(ws.proj / "GEMINI.md")]
    assert "--- File: " in result["text"]  # the import format still comes from settings.json
