"""save_memory with control characters: a NUL is refused (nothing written), other line breaks
(VT, FF, U+0085, U+2028, U+2029) are written as spaces, as `memory-lens add` does."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client

from test_mcp_server import fails, server_params

if TYPE_CHECKING:
    from sandbox import Workspace


async def test_save_memory_refuses_nul_and_writes_other_breaks_as_spaces(ws: Workspace) -> None:
    proj = ws.project("proj")
    (proj / "GEMINI.md").write_text("# Notes\n", encoding="utf-8")
    async with stdio_client(server_params(ws, proj)) as (read, write):
        async with ClientSession(read, write) as client:
            await client.initialize()
            message = await fails(client, "save_memory", fact="Use pnpm\0# injected")
            assert "NUL" in message
            assert (proj / "GEMINI.md").read_text(encoding="utf-8") == "# Notes\n"
            result = await client.call_tool("save_memory", {"fact": "Use pnpm\u2028# not\x0ba\x0cheading\x85x\u2029y"})
            assert not result.is_error, result.content
    written = (proj / "GEMINI.md").read_text(encoding="utf-8")
    assert written == "# Notes\n\n## Gemini Added Memories\n- Use pnpm # not a heading x y\n"
    assert written.splitlines() == written.split("\n")[:-1]

