"""memory/effective with `agent: claude` for the open file, asked again and again: the server keeps
the view while every file and folder it read is as it was (`core/agents/common.py` `Kept`), and
each change on disk shows in the very next answer, with no file event sent.

A kept view relies only on identities older than `SETTLE_NS` (a change within a file system's
timestamp tick may leave them as they were): before each change the test waits that long and
asks twice, so that the change has to be seen by the check of a settled, kept view."""

from __future__ import annotations

import asyncio
import json

import pytest

from memory_lens.core.agents.common import SETTLE_NS

from .harness import Session

pytestmark = pytest.mark.clients("visual-studio-code")  # the view does not depend on the client


async def test_kept_claude_view_follows_each_change_on_disk(lsp: Session) -> None:
    ws = lsp.ws
    rules = ws.proj / ".claude" / "rules"
    for i in range(20):  # a folder of rules files, some with `paths:`
        ws.write(f"work/proj/.claude/rules/r{i:02}.md", ("---\npaths: \"*.py\"\n---\n" if i % 2 else "") + f"rule {i}\n")
    ws.write("work/proj/CLAUDE.md", "- project\n@../shared.md\n")
    ws.write("work/shared.md", "- shared outside\n")
    target = ws.write("work/proj/pkg/a.py", "")
    lsp.open(target, language="python")

    async def view() -> dict:
        return await lsp.effective(target, agent="claude")

    def rows(result: dict) -> list[tuple[str, bool, str]]:
        return [(s["path"].rsplit("/", 1)[-1], s["loaded"], s["when"]) for s in result["sources"]]

    async def kept() -> dict:
        await asyncio.sleep(SETTLE_NS / 1e9 + 0.2)
        first = await view()
        assert await view() == first
        return first

    before = await kept()
    assert ("r01.md", True, "on-read") in rows(before) and "rule 1\n" in before["text"] + "\n"
    assert "needs approval" in before["warnings"][0] and "- shared outside" not in before["text"]

    # A rule's `paths:` and text edited in place, the same size.
    with open(rules / "r01.md", "r+", encoding="utf-8") as fh:
        fh.write("---\npaths: \"*.md\"\n---\nRULE 1\n")
    after = await view()
    assert ("r01.md", False, "on-read") in rows(after) and "RULE 1" not in after["text"]

    await kept()
    ws.write("work/proj/.claude/rules/nested/new.md", "new rule\n")
    assert ("new.md", True, "start") in rows(await view())

    await kept()
    (rules / "r04.md").unlink()
    assert "r04.md" not in [r[0] for r in rows(await view())]

    await kept()
    ws.write("work/proj/pkg/CLAUDE.md", "- package\n")
    assert ("CLAUDE.md", True, "on-read") in rows(await view())

    await kept()
    ws.write("home/.claude.json", json.dumps({"projects": {str(ws.proj): {"hasClaudeMdExternalIncludesApproved": True}}}))
    after = await view()
    assert ("shared.md", True, "start") in rows(after) and "- shared outside" in after["text"] and not after["warnings"]

    await kept()
    lsp.open(rules / "r02.md", "rule 2, unsaved\n")  # a buffer with unsaved edits: not a memory file of Gemini's
    assert [s["dirty"] for s in (await view())["sources"] if s["path"].endswith("r02.md")] == [True]
