"""memory/effective with an `agent`: the same view as `memory-lens show --agent AGENT --format json`
(camelCase keys, URIs added), the gemini answer unchanged, and a clear error for an unknown agent.

The answer does not depend on the client's capabilities: VS Code's, Neovim's and a bare client's."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from .harness import EFFECTIVE, FEATURE_CLIENTS, INVALID_PARAMS, Session, Workspace, uri_of

pytestmark = pytest.mark.clients(*FEATURE_CLIENTS)


@pytest.fixture(scope="module")
def shared_ws(shared_ws: Workspace) -> Workspace:
    """The default sandbox with AGENTS.md files that Codex's 32 KiB budget cuts: 30,001 bytes in
    the project root, 5,001 in pkg."""
    shared_ws.write("work/proj/AGENTS.md", "r" * 30000 + "\n")
    shared_ws.write("work/proj/pkg/AGENTS.md", "p" * 5000 + "\n")
    return shared_ws


async def test_codex_view_matches_show_and_names_the_cut(shared_lsp: Session) -> None:
    ws = shared_lsp.ws  # see shared_ws
    target = ws.proj / "pkg" / "mod.py"
    result = await shared_lsp.effective(target, agent="codex")
    show = await ws.cli_json("show", str(ws.proj / "pkg"), "--agent", "codex")
    assert result["agent"] == "codex" and result["text"] == show["text"]
    assert result["projectRoot"] == show["project_root"] == str(ws.proj)
    assert result["targetDir"] == str(ws.proj / "pkg")
    assert [{k: v for k, v in s.items() if k not in ("uri", "dirty")} for s in result["sources"]] == show["sources"]
    cut = result["sources"][1]
    assert cut["cutAt"] == 32 * 1024 - 30001 and cut["uri"] == uri_of(cut["path"]) and cut["dirty"] is False
    assert result["warnings"] == show["warnings"] and "cuts this file at byte 2767" in result["warnings"][0]


async def test_claude_view_expands_the_import(lsp: Session) -> None:
    ws = lsp.ws
    ws.write("work/proj/CLAUDE.md", "@AGENTS.md\n")
    ws.write("work/proj/AGENTS.md", "- Use pnpm\n")
    result = await lsp.effective(ws.proj / "CLAUDE.md", agent="claude")
    assert result["text"].endswith("(project instructions, checked into the codebase):\n\n- Use pnpm")
    assert [s["tier"] for s in result["sources"]] == ["project", "import"]


async def test_gemini_is_the_default_and_unknown_agents_are_invalid(shared_lsp: Session) -> None:
    ws = shared_lsp.ws
    target = ws.proj / "GEMINI.md"
    assert await shared_lsp.effective(target, agent="gemini") == await shared_lsp.effective(target)
    for agent in ("nobody", 3, ""):
        with pytest.raises(JsonRpcException) as err:
            await shared_lsp.request(EFFECTIVE, {"textDocument": {"uri": shared_lsp.uri(target)}, "agent": agent})
        assert err.value.code == INVALID_PARAMS
        assert "'agent' must be one of gemini, claude, codex, wave, " in str(err.value)
    assert shared_lsp.server_alive()


async def test_claude_view_of_an_open_file_adds_what_loads_on_read(lsp: Session) -> None:
    ws = lsp.ws
    ws.write("work/proj/.claude/rules/py.md", "---\npaths: \"*.py\"\n---\npython rule\n")
    ws.write("work/proj/pkg/a.py", "")
    ws.write("work/proj/pkg/b.txt", "")
    result = await lsp.effective(ws.proj / "pkg" / "a.py", agent="claude")
    rule = [s for s in result["sources"] if s["path"].endswith("py.md")]
    assert [(s["when"], s["matchedBy"]) for s in rule] == [("on-read", "*.py")]
    result = await lsp.effective(ws.proj / "pkg" / "b.txt", agent="claude")
    assert [(s["loaded"], s["when"]) for s in result["sources"] if s["path"].endswith("py.md")] == [(False, "on-read")]


async def test_copilot_view_of_an_open_file_marks_the_matching_apply_to(lsp: Session) -> None:
    ws = lsp.ws
    ws.write("work/proj/.github/instructions/py.instructions.md", "---\napplyTo: 'pkg/*.py'\n---\npython\n")
    ws.write("work/proj/pkg/a.py", "")
    ws.write("work/proj/pkg/b.txt", "")
    result = await lsp.effective(ws.proj / "pkg" / "a.py", agent="copilot")
    show = await ws.cli_json("show", str(ws.proj / "pkg" / "a.py"), "--agent", "copilot", "--start", str(ws.proj))
    assert result["text"] == show["text"] and "| pkg/*.py | '.github/instructions/py.instructions.md' |" in show["text"]
    rule = [s for s in result["sources"] if s["path"].endswith("py.instructions.md")]
    assert [(s["when"], s["loaded"], s["matchedBy"]) for s in rule] == [("requestable", False, "pkg/*.py")]
    result = await lsp.effective(ws.proj / "pkg" / "b.txt", agent="copilot")
    rule = [s for s in result["sources"] if s["path"].endswith("py.instructions.md")]
    assert "matchedBy" not in rule[0] and rule[0]["reason"].startswith("applyTo `pkg/*.py` does not match")


async def test_claude_view_of_an_open_file_follows_its_files_on_disk(lsp: Session) -> None:
    """The view asked for again and again (kept while nothing it read changed) follows every
    change: a rule's `paths:` and text edited in place (same size), a CLAUDE.md created between
    the start directory and the file, a rule removed; no file event is sent."""
    ws = lsp.ws
    ws.write("work/proj/.claude/rules/py.md", "---\npaths: \"*.py\"\n---\npython rule\n")
    ws.write("work/proj/.claude/rules/all.md", "always rule one\n")
    ws.write("work/proj/pkg/a.py", "")
    target = ws.proj / "pkg" / "a.py"

    async def rules() -> tuple[list[tuple[str, bool, str]], str]:
        result = await lsp.effective(target, agent="claude")
        return [(s["path"].rsplit("/", 1)[-1], s["loaded"], s["when"]) for s in result["sources"]], result["text"]

    first = await rules()
    assert first[0] == [("all.md", True, "start"), ("py.md", True, "on-read")] and "always rule one" in first[1]
    assert await rules() == first
    ws.write("work/proj/.claude/rules/py.md", "---\npaths: \"*.md\"\n---\npython rule\n")
    ws.write("work/proj/.claude/rules/all.md", "always rule two\n")
    sources, text = await rules()
    assert sources == [("all.md", True, "start"), ("py.md", False, "on-read")]
    assert "always rule two" in text and "always rule one" not in text
    ws.write("work/proj/pkg/CLAUDE.md", "- package rule\n")
    sources, text = await rules()
    assert ("CLAUDE.md", True, "on-read") in sources and "- package rule" in text
    (ws.proj / ".claude" / "rules" / "py.md").unlink()
    sources, _ = await rules()
    assert [s for s in sources if s[0] == "py.md"] == []
