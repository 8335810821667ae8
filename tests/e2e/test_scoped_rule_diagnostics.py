"""Diagnostics of scoped rules files once opened (`.cursor/rules/*.mdc`, `.claude/rules/*.md`,
`.github/instructions/*.instructions.md`): the
same findings as `memory-lens check FILE`, one per bad input, and the rest of the view still shown."""

from __future__ import annotations

import json

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import Workspace

EXPLODING = "{a,b}" * 20


def codes(diags: list[types.Diagnostic]) -> list[tuple[int, str, str]]:
    return [(d.range.start.line, str(d.code), d.message.split(":")[0]) for d in diags]


@pytest.mark.clients("visual-studio-code")
async def test_each_bad_rules_file_gets_one_diagnostic(ws: Workspace, start: Starter) -> None:
    ws.write("work/proj/src/app.ts", "x\n")
    ws.write("work/proj/CLAUDE.md", "- project rule\n")
    files = {
        "work/proj/.cursor/rules/binary.mdc": (b"\x00\x01 not text", [(0, "encoding", "cursor")]),
        "work/proj/.cursor/rules/huge.mdc": (b"- x\n" * (5 * 1024 * 1024 + 1), [(0, "too-large", "cursor")]),
        "work/proj/.cursor/rules/quote.mdc": ('---\ndescription: "open\n---\n- q\n', [(0, "frontmatter", "cursor")]),
        "work/proj/.cursor/rules/boom.mdc": (f"---\nglobs: {EXPLODING}\n---\n- b\n", [(1, "invalid-glob", "cursor")]),
        "work/proj/.cursor/rules/none.mdc": ("---\nglobs: lib/**/*.go\n---\n- go\n",
                                             [(1, "rule-matches-nothing", "cursor")]),
        "work/proj/.claude/rules/broken.md": ("---\npaths: [src/**\n---\n- x\n", [(0, "frontmatter", "claude")]),
        "work/proj/.claude/rules/ok.md": ("---\npaths: src/**/*.ts\n---\n- typed\n", []),
        "work/proj/.github/instructions/boom.instructions.md": (f"---\napplyTo: '{EXPLODING}'\n---\n- b\n",
                                                               [(1, "invalid-glob", "copilot")]),
        "work/proj/.github/instructions/go.instructions.md": ("---\napplyTo: lib/**/*.go\n---\n- go\n",
                                                             [(1, "rule-matches-nothing", "copilot")]),
        "work/proj/.github/instructions/open.instructions.md": ("---\napplyTo: src/**\n- x\n",
                                                               [(0, "frontmatter", "copilot")]),
        "work/proj/.github/instructions/binary.instructions.md": (b"\x00 not text", [(0, "encoding", "copilot")]),
        "work/proj/.github/instructions/ts.instructions.md": ("---\napplyTo: 'src/**/*.ts'\n---\n- ts\n", []),
    }
    for rel, (content, _) in files.items():
        ws.write(rel, content)
    lsp = await start(init_options={"memoryLens": {"agents": ["claude", "cursor", "copilot"]}})  # they load them
    for rel, (_, expected) in files.items():
        path = ws.path(rel)
        lsp.open(path, "" if rel.endswith("huge.mdc") else None)
        diags = await lsp.wait_diagnostics(path, lambda d, e=expected: codes(d) == e)
        _, out, _ = await ws.cli("check", "--format", "json", str(path), ok=False)
        assert [d.message for d in diags] == [f["message"] for f in json.loads(out)]
    # The rest still shows: Claude Code's view has the project file, and the good rule for a read.
    view = await lsp.effective(ws.proj, agent="claude")
    assert "project rule" in view["text"]
    assert lsp.server_alive()


@pytest.mark.clients("visual-studio-code")
async def test_claude_bad_input_diagnostics_match_the_cli(ws: Workspace, start: Starter) -> None:
    ws.write("work/proj/CLAUDE.md", "- project rule\n@a.md\n")
    ws.write("work/proj/a.md", "@b.md\n")
    ws.write("work/proj/b.md", "@a.md\n")
    ws.write("home/.claude.json", "{not json")
    lsp = await start(init_options={"memoryLens": {"agents": ["claude"]}})
    claude_md = ws.proj / "CLAUDE.md"
    lsp.open(claude_md)
    want = [(1, "import-cycle", "claude"), (0, "not-loaded", "claude")]
    diags = await lsp.wait_diagnostics(claude_md, lambda d: codes(d) == want)
    _, out, _ = await ws.cli("check", "--agent", "claude", "--format", "json", str(claude_md), ok=False)
    assert [d.message for d in diags] == [f["message"] for f in json.loads(out)]
    # The auto memory over its cut, once opened: over-budget on the first line Claude Code never sees.
    from memory_lens.core.agents.claude import auto_memory_file

    memory = auto_memory_file(ws.proj, ws.home / ".claude")
    memory.parent.mkdir(parents=True)
    memory.write_text("".join(f"- note {i}\n" for i in range(1, 251)))
    lsp.open(memory)
    await lsp.wait_diagnostics(memory, lambda d: codes(d) == [(200, "over-budget", "claude")])
    view = await lsp.effective(ws.proj, agent="claude")
    assert "project rule" in view["text"]
    assert lsp.server_alive()
