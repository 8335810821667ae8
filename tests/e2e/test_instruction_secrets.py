"""The editor flags a secret (`secret`, error) in every instruction file an agent reads, as
`memory-lens check` does: in the workspace's diagnostics (files not open) and in an open buffer as
typed — Copilot's instructions, Cursor's rules and `.cursorrules`, Claude Code's rules, the user's
own files (`~/.copilot/…`, `~/.claude/rules`), inside front matter too, whichever agents are
enabled. Look-alikes are not flagged (docs/security.md#secrets)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from secret_samples import LOOK_ALIKES, SECRETS

from .conftest import Starter
from .harness import Workspace

KEY = SECRETS["aws access key id"]  # "Deploy with access key AKIA... in prod"
LINE = f"- {KEY}\n"

# Each file: its text, and the 0-based line of its secret.
FILES = {
    "work/proj/.github/copilot-instructions.md": (LINE, 0),
    "work/proj/.github/instructions/api.instructions.md": (f"---\napplyTo: '**'\n---\n{LINE}", 3),
    "work/proj/.cursor/rules/a.mdc": (f"---\nglobs: '*.py'\n---\n{LINE}", 3),
    "work/proj/.cursor/rules/front.mdc": (f"---\ndescription: {KEY}\nalwaysApply: true\n---\n- rule\n", 1),
    "work/proj/.cursorrules": (LINE, 0),
    "work/proj/.claude/rules/sub/r.md": (LINE, 0),
    "work/proj/AGENTS.override.md": (LINE, 0),
    "home/.copilot/copilot-instructions.md": (LINE, 0),
    "home/.copilot/instructions/me.instructions.md": (f"---\napplyTo: '**'\n---\n{LINE}", 3),
    "home/.claude/rules/me.md": (LINE, 0),
}


def secrets(diags: list[types.Diagnostic]) -> list[tuple[int, types.DiagnosticSeverity | None]]:
    return [(d.range.start.line, d.severity) for d in diags if d.code == "secret"]


@pytest.mark.clients("visual-studio-code")  # which files are checked does not depend on the client
@pytest.mark.parametrize("agents", [None, ["gemini"]], ids=["default agents", "gemini alone"])
async def test_every_instruction_file_with_a_secret_is_flagged_in_the_workspace(
        ws: Workspace, start: Starter, agents: list[str] | None) -> None:
    for rel, (text, _) in FILES.items():
        ws.write(rel, text)
    clean = ws.write("work/proj/.cursor/rules/clean.mdc", "".join(f"- {t}\n" for t in LOOK_ALIKES.values()))
    lsp = await start(init_options={"memoryLens": {"agents": agents}} if agents else None)
    error = types.DiagnosticSeverity.Error
    for rel, (_, line) in FILES.items():
        await lsp.wait_diagnostics(ws.path(rel), lambda d, n=line: secrets(d) == [(n, error)], what=rel)
    assert not secrets(lsp.diagnostics(clean) or [])


@pytest.mark.clients("visual-studio-code")
async def test_an_open_instruction_file_is_flagged_as_typed(ws: Workspace, start: Starter) -> None:
    copilot = ws.write("work/proj/.github/copilot-instructions.md", "- use the linter\n")
    rule = ws.write("work/proj/.cursor/rules/a.mdc", "---\nalwaysApply: true\n---\n- rule\n")
    lsp = await start()
    error = types.DiagnosticSeverity.Error
    for path, text, line in ((copilot, "- use the linter\n" + LINE, 1),
                             (rule, f"---\ndescription: {KEY}\nalwaysApply: true\n---\n- rule\n", 1)):
        lsp.open(path)
        lsp.change(path, text)  # the buffer, not the disk
        await lsp.wait_diagnostics(path, lambda d, n=line: secrets(d) == [(n, error)])
        lsp.change(path, "- " + "\n- ".join(LOOK_ALIKES.values()) + "\n")
        await lsp.wait_diagnostics(path, lambda d: not secrets(d))
