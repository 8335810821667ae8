"""memory/effective is never stale: a change on disk, in an open buffer or in the settings shows in
the very next answer, without waiting for any file notification, although the store keeps what it
read. Before each change the test waits until the files have settled (a tenth of a second, well
above the clock tick of file times), so that a change has to be noticed from the disk itself.

Documents are opened first, so that the system's notifications watch their chains: the case
where a server could be tempted to trust them."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from .harness import FEATURE_CLIENTS, Session

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)


async def settle() -> None:
    await asyncio.sleep(0.15)


async def asked_twice(lsp: Session, target: Path) -> dict:
    """The answer for TARGET once the files have settled, asked twice (the second from what the store kept)."""
    await settle()
    first = await lsp.effective(target)
    assert await lsp.effective(target) == first
    return first


def project_paths(result: dict) -> list[str]:
    return [s["path"] for s in result["sources"] if s["scope"] == "project"]


async def test_disk_changes_show_in_the_next_answer(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    lsp.open(target, language="python")
    package = ws.proj / "pkg" / "GEMINI.md"

    await asked_twice(lsp, target)
    old = package.read_text(encoding="utf-8")
    with open(package, "r+", encoding="utf-8") as fh:  # in place, the same size
        fh.write(old.replace("no globals", "no GLOBALS"))
    assert (await lsp.effective(target))["text"].endswith("- Package rule: no GLOBALS")

    await asked_twice(lsp, target)
    created = ws.write("work/proj/pkg/sub/GEMINI.md", "- Sub rule\n")
    result = await lsp.effective(target)
    assert project_paths(result)[-1] == str(created) and result["text"].endswith("- Sub rule")

    await asked_twice(lsp, target)
    created.unlink()
    assert str(created) not in project_paths(await lsp.effective(target))

    await asked_twice(lsp, target)
    (ws.proj / "pkg" / ".git").mkdir()
    result = await lsp.effective(target)
    assert result["projectRoot"] == str(ws.proj / "pkg") and project_paths(result) == [str(package)]

    await asked_twice(lsp, target)
    shutil.rmtree(ws.proj / "pkg" / ".git")
    assert (await lsp.effective(target))["projectRoot"] == str(ws.proj)

    await asked_twice(lsp, target)
    ws.write("home/.gemini/GEMINI.md", "# Global\n- Changed globally\n")
    assert (await lsp.effective(target))["text"].startswith("# Global\n- Changed globally")


async def test_imported_files_show_in_the_next_answer(lsp: Session) -> None:
    ws = lsp.ws
    ws.write("work/proj/docs/style.md", "Use tabs.\n")
    ws.write("work/proj/pkg/GEMINI.md", "# Package\n@../docs/style.md\n@../docs/later.md\n")
    target = ws.proj / "pkg" / "sub" / "mod.py"
    lsp.open(target, language="python")

    assert "Use tabs." in (await asked_twice(lsp, target))["text"]
    ws.write("work/proj/docs/style.md", "Use spaces.\n")
    assert "Use spaces." in (await lsp.effective(target))["text"]

    await asked_twice(lsp, target)
    ws.write("work/proj/docs/later.md", "Written later.\n")
    result = await lsp.effective(target)
    assert "Written later." in result["text"]
    assert [i["status"] for i in result["sources"][-1]["imports"]] == ["imported", "imported"]


async def test_buffer_edits_show_in_the_next_answer(lsp: Session) -> None:
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    package = ws.proj / "pkg" / "GEMINI.md"
    disk = package.read_text(encoding="utf-8")

    def dirty(result: dict) -> list[bool]:
        return [s["dirty"] for s in result["sources"]]

    lsp.open(package)
    assert dirty(await asked_twice(lsp, target)) == [False, False, False]
    lsp.change(package, disk + "- Not saved\n")
    result = await lsp.effective(target)
    assert dirty(result) == [False, False, True] and "Not saved" not in result["text"]
    lsp.change(package, disk)
    assert dirty(await lsp.effective(target)) == [False, False, False]
    lsp.change(package, disk + "- Not saved\n")
    assert dirty(await lsp.effective(target)) == [False, False, True]
    lsp.close(package)
    assert dirty(await lsp.effective(target)) == [False, False, False]

    lsp.open(package)
    await asked_twice(lsp, target)
    lsp.change(package, disk + "- Saved\n")
    lsp.save(package)
    result = await lsp.effective(target)
    assert dirty(result) == [False, False, False] and result["text"].endswith("- Saved")


async def test_settings_show_in_the_next_answer(lsp: Session) -> None:
    """Gemini's settings.json (read per directory) and other agents' own settings."""
    ws = lsp.ws
    target = ws.proj / "pkg" / "sub" / "mod.py"
    ws.write("work/proj/AGENTS.md", "- Agents rule\n")
    lsp.open(target, language="python")

    assert str(ws.proj / "AGENTS.md") not in project_paths(await asked_twice(lsp, target))
    ws.write("home/.gemini/settings.json", json.dumps({"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}))
    assert str(ws.proj / "AGENTS.md") in project_paths(await lsp.effective(target))

    codex = await lsp.effective(target, agent="codex")
    assert "- Agents rule" in codex["text"]
    ws.write("home/.codex/config.toml", "project_doc_max_bytes = 0\n")
    assert "- Agents rule" not in (await lsp.effective(target, agent="codex"))["text"]


async def test_a_directory_between_gets_a_memory_file_then_a_root(lsp: Session) -> None:
    """What the server keeps for a directory depends on every directory above it up to the root."""
    ws = lsp.ws
    deep = ws.proj / "pkg" / "sub" / "a" / "b"
    deep.mkdir(parents=True)
    target = deep / "x.py"

    before = await asked_twice(lsp, target)
    between = ws.write("work/proj/pkg/sub/a/GEMINI.md", "- Between\n")
    result = await lsp.effective(target)
    assert project_paths(result) == [*project_paths(before), str(between)] and result["text"].endswith("- Between")

    await asked_twice(lsp, target)
    (ws.proj / "pkg" / "sub" / "a" / ".git").mkdir()
    result = await lsp.effective(target)
    assert result["projectRoot"] == str(ws.proj / "pkg" / "sub" / "a") and project_paths(result) == [str(between)]
