"""The secrets guard over MCP: `save_memory`, `memory_create` and `memory_edit` refuse a fact or a
note holding a secret (its kind and position, never the secret). Only the user can let a fact
through, in the approval form; no argument a model can send does, and "always allow" does not
cover it. Samples: tests/secret_samples.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import mcp_types as types

from secret_samples import SECRETS, never_echoed
from test_mcp_server import Elicitations, call, fails, session

if TYPE_CHECKING:
    from sandbox import Workspace

KEY = SECRETS["github personal token"]  # "Use token ghp_...": the token at column 11


async def test_every_sample_is_refused_without_a_form_and_nothing_is_written(ws: Workspace) -> None:
    proj = ws.project("proj")
    async with session(ws, proj) as client:
        for name, text in SECRETS.items():
            for tool, args in (("save_memory", {"fact": text}), ("memory_create", {"name": name, "content": text})):
                message = await fails(client, tool, **args)
                assert "looks like" in message and "; not saved: a model cannot override this" in message, message
                never_echoed(message)
        await call(client, "memory_create", name="deploy", content="Deploy notes")
        message = await fails(client, "memory_edit", name="deploy", content=KEY)
        assert "the note looks like a GitHub Token at column 11; not saved" in message
        assert (await call(client, "memory_read", name="deploy"))["content"] == "Deploy notes"
    assert not (proj / "GEMINI.md").exists()


async def test_a_model_cannot_pass_an_override(ws: Workspace) -> None:
    proj = ws.project("proj")
    async with session(ws, proj) as client:
        message = await fails(client, "save_memory", fact=KEY, allow_secret=True)
        assert "invalid arguments" in message and "allow_secret" in message
    assert not (proj / "GEMINI.md").exists()


def save_anyway(yes: bool) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"save_anyway": yes})


async def test_the_user_confirms_a_secret_in_the_form_always_allow_or_not(ws: Workspace) -> None:
    proj = ws.project("proj")
    elicit = Elicitations()
    async with session(ws, proj, elicit) as client:
        elicit.answers.append(types.ElicitResult(action="accept", content={"text": "Use pnpm", "always_allow": True}))
        await call(client, "save_memory", fact="Use pnpm")  # from now on saves here are not asked about...

        elicit.answers.append(save_anyway(False))
        result = await call(client, "save_memory", fact=KEY)  # ...except a secret
        assert result["saved"] is False and result["declined"] is True
        asked = elicit.asked[-1]
        assert asked.message == (f"The fact to save to project memory {proj / 'GEMINI.md'} looks like a GitHub Token at "
                                 "column 11. Agents send this file to their model, and it may be committed. "
                                 "Save it anyway?")
        assert list(asked.requested_schema["properties"]) == ["save_anyway"]
        never_echoed(str(asked))
        assert KEY not in (proj / "GEMINI.md").read_text()

        elicit.answers.append(save_anyway(True))
        result = await call(client, "save_memory", fact=KEY)
        assert result["saved"] is True and result["text"] == "(not repeated: it holds a secret the user chose to save)"
        never_echoed(str(result))
    assert f"- {KEY}\n" in (proj / "GEMINI.md").read_text()
    assert len(elicit.asked) == 3
