"""The settings the editor sends reach every part of the server (core/settings.py, lsp/config.py):
`maxFileSize` governs saves, not only reads; in an untrusted workspace the workspace may lower
that limit but never raise it (docs/settings.md, docs/security.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .conftest import Starter
from .harness import CMD_SAVE, EFFECTIVE, Workspace, wait_for

MiB = 1 << 20


@pytest.mark.clients("visual-studio-code")
async def test_the_max_file_size_setting_governs_saves(ws: Workspace, start: Starter) -> None:
    """A 20 MiB memory file and `maxFileSize` 64 MiB: the save goes into it (it failed at the
    default 16 MiB, the writer's own limit, before the setting reached it)."""
    big = ws.proj / "GEMINI.md"
    with open(big, "wb") as f:
        f.write(b"# Big\n- first\n" + b"x" * (20 * MiB) + b"\n")
    lsp = await start(init_options={"memoryLens": {"maxFileSize": 64 * MiB}})
    saved = await lsp.command(CMD_SAVE, {"text": "Use tabs", "scope": "project", "uri": lsp.uri(ws.proj)})
    assert saved["path"] == str(big)
    assert os.path.getsize(big) > 20 * MiB
    with open(big, "rb") as f:
        f.seek(-len(b"- Use tabs\n"), os.SEEK_END)
        assert f.read() == b"- Use tabs\n"


@pytest.mark.clients("visual-studio-code")  # it answers workspace/configuration
@pytest.mark.parametrize("trusted", [True, False])
@pytest.mark.parametrize("limit", [10**12, 100])
async def test_an_untrusted_workspace_may_lower_the_size_limit_never_raise_it(ws: Workspace, start: Starter,
                                                                            trusted: bool, limit: int) -> None:
    """The workspace's `maxFileSize` (from workspace/configuration) of 10**12 bytes: honoured when
    trusted (a 17 MiB file is read), ignored when not (it stays too large to read). 100 bytes:
    honoured either way (the project file is too large)."""
    big = ws.proj / "pkg" / "GEMINI.md"
    with open(big, "wb") as f:
        f.truncate(17 * MiB)  # sparse: costs nothing on disk; NUL bytes when read
    lsp = await start(init_options={"trusted": trusted}, configuration={"memoryLens": {"maxFileSize": limit}})

    async def reason(path: Path) -> str:
        effective = await lsp.request(EFFECTIVE, {"textDocument": {"uri": lsp.uri(ws.proj / "pkg")}})
        return next(s["reason"] for s in effective["sources"] if s["path"] == str(path))

    async def shows(path: Path, part: str) -> bool:
        return part in await reason(path)

    async def read(path: Path) -> bool:
        return "too large" not in await reason(path)

    if limit > 16 * MiB and not trusted:  # until the workspace's value has been received and set aside
        await wait_for(lambda: "may only lower it" in lsp.log_text())
        assert "too large" in await reason(big)
    elif limit > 16 * MiB:  # until the settings from workspace/configuration are in effect: big is read
        await wait_for(lambda: read(big))
    else:  # lowered: even the project's small GEMINI.md is over it
        await wait_for(lambda: shows(ws.proj / "GEMINI.md", "too large"))
