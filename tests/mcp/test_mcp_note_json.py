"""The MCP notes tools give a note, a page and a problem in the CLI's JSON shape (one core function
builds each), and never read a note file that links out of its area."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from test_mcp_server import call, fails, session

if TYPE_CHECKING:
    from sandbox import Workspace

STAMP = "2025-10-08T03:07:11Z"


def _note(name: str, content: str) -> str:
    return json.dumps({"name": name, "content": content, "tags": ["t"], "created_at": STAMP, "updated_at": STAMP})


async def test_notes_pages_and_problems_have_the_cli_shape(ws: Workspace) -> None:
    proj = ws.project("proj")
    ws.ok("notes", "create", "api_key_rotation", "Rotate API keys every 90 days", "--tag", "security", cwd=proj)
    ws.write("proj/.memory-lens/notes/broken.json", "{")
    cli_note = ws.json("notes", "read", "api_key_rotation", cwd=proj)
    cli_list = ws.json("notes", "list", cwd=proj)
    cli_search = ws.json("notes", "search", "rotate", cwd=proj)
    async with session(ws, proj) as client:
        assert await call(client, "memory_read", name="api_key_rotation") == cli_note
        assert await call(client, "memory_list") == cli_list
        assert await call(client, "memory_search", query="rotate") == cli_search
        created = await call(client, "memory_create", name="second", content="body")
        assert created["note"] == {k: v for k, v in ws.json("notes", "read", "second", cwd=proj).items()
                                   if k != "content"}
    assert cli_list["problems"][0]["reason"].startswith("is not valid JSON")


async def test_memory_read_does_not_follow_a_link_out_of_the_area(ws: Workspace) -> None:
    proj = ws.project("proj")
    ws.write("secret.json", _note("link", "SECRET-CONTENT"))
    notes = proj / ".memory-lens" / "notes"
    notes.mkdir(parents=True)
    (notes / "link.json").symlink_to(ws.path("secret.json"))
    async with session(ws, proj) as client:
        error = await fails(client, "memory_read", name="link")
        assert "outside the project" in error and "SECRET" not in error, error
        listed = await call(client, "memory_list")
        assert listed["notes"] == [] and "SECRET" not in json.dumps(listed)
        assert (await call(client, "memory_search", query="SECRET*"))["notes"] == []
    assert Path(ws.path("secret.json")).read_text(encoding="utf-8") == _note("link", "SECRET-CONTENT")
