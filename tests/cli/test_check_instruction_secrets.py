"""`check DIR` reports a `secret` (error, exit 1) in every instruction file an agent reads, not only
in memory files: Copilot's `.github/copilot-instructions.md` and `.github/instructions/**/*.instructions.md`,
Cursor's `.cursor/rules/**/*.mdc` and `.cursorrules`, Claude Code's `.claude/rules/**/*.md`, and
the agents' user-level files (`~/.copilot/…`, `~/.claude/…`, `~/.codex/AGENTS.md`), inside front
matter too, whichever agents are enabled (docs/security.md#secrets). Look-alikes in them are not."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from secret_samples import LOOK_ALIKES, SECRETS, never_echoed

if TYPE_CHECKING:
    from sandbox import Workspace

KEY = SECRETS["aws access key id"]  # "Deploy with access key AKIA... in prod": the key at column 24
LINE = f"- {KEY}\n"  # the key at column 26

# Each file kind: where it lives (p/: the project, home/: the user's home), its text, the secret's line.
FILES = {
    "copilot instructions": ("p/.github/copilot-instructions.md", LINE, 1),
    "copilot scoped instructions": ("p/.github/instructions/api.instructions.md",
                                    f"---\napplyTo: '**'\n---\n{LINE}", 4),
    "copilot, nested": ("p/.github/instructions/deep/er/x.instructions.md", f"# API\n\n{LINE}", 3),
    "cursor rule": ("p/.cursor/rules/a.mdc", f"---\nglobs: '*.py'\nalwaysApply: false\n---\n{LINE}", 5),
    "cursor rule, nested folder": ("p/sub/.cursor/rules/team/b.mdc", LINE, 1),
    "cursorrules": ("p/.cursorrules", LINE, 1),
    "claude rule": ("p/.claude/rules/r.md", LINE, 1),
    "claude rule with paths": ("p/.claude/rules/sub/s.md", f"---\npaths:\n  - 'src/**'\n---\n{LINE}", 5),
    "in front matter": ("p/.cursor/rules/f.mdc", f"---\ndescription: {KEY}\nglobs: '*.py'\n---\n- rule\n", 2),
    "codex override": ("p/AGENTS.override.md", LINE, 1),
    "user copilot instructions": ("home/.copilot/copilot-instructions.md", LINE, 1),
    "user copilot scoped": ("home/.copilot/instructions/me.instructions.md", f"---\napplyTo: '**'\n---\n{LINE}", 4),
    "user claude rule": ("home/.claude/rules/me.md", LINE, 1),
    "user CLAUDE.md": ("home/.claude/CLAUDE.md", LINE, 1),
    "user codex AGENTS.md": ("home/.codex/AGENTS.md", LINE, 1),
}


@pytest.mark.parametrize("kind", FILES)
def test_a_secret_in_each_kind_of_instruction_file_is_reported(ws: Workspace, kind: str) -> None:
    rel, text, line = FILES[kind]
    proj = ws.project("p")
    ws.write("p/GEMINI.md", "- clean\n")
    path = ws.write(rel, text)
    result = ws.run("check", "--format", "json", cwd=proj)
    assert result.rc == 1, result
    secrets = [(f["path"], f["line"], f["severity"]) for f in result.json() if f["code"] == "secret"]
    assert secrets == [(str(path), line, "error")]
    never_echoed(result.stdout + result.stderr)


def test_the_repro_of_the_issue_flags_all_five_files(ws: Workspace) -> None:
    proj = ws.project("gap")
    key = KEY.split()[4]
    files = {".github/copilot-instructions.md": (f"- key {key}\n", 1),
             ".github/instructions/a.instructions.md": (f"---\napplyTo: '**'\n---\n- key {key}\n", 4),
             ".cursor/rules/a.mdc": (f"---\nglobs: '*.py'\n---\n- key {key}\n", 4),
             ".claude/rules/r.md": (f"- key {key}\n", 1), "CLAUDE.md": (f"- key {key}\n", 1)}
    for rel, (text, _) in files.items():
        ws.write(f"gap/{rel}", text)
    result = ws.run("check", ".", cwd=proj)
    assert result.rc == 1
    flagged = sorted(line.split(": error: ")[0] for line in result.stdout.splitlines() if line.endswith("[secret]"))
    assert flagged == sorted(f"{proj / rel}:{n}:7" for rel, (_, n) in files.items())


def test_a_secret_is_reported_whichever_agents_are_enabled(ws: Workspace) -> None:
    proj = ws.project("p")
    ws.write("p/AGENTS.md", "- clean\n")
    gemini = ws.write("p/GEMINI.md", LINE)
    copilot = ws.write("p/.github/copilot-instructions.md", LINE + "- same\n- same\n")
    rule = ws.write("p/.cursor/rules/a.mdc", LINE)
    user = ws.write("home/.copilot/copilot-instructions.md", LINE)
    result = ws.run("check", "--agent", "codex", "--format", "json", cwd=proj)
    assert result.rc == 1
    # Only the secret: the other checks of a file are those of the agents enabled (the duplicate
    # in Copilot's file is Copilot's business), the secret is everyone's.
    assert sorted((f["path"], f["line"], f["code"]) for f in result.json()) == sorted(
        [(str(p), 1, "secret") for p in (gemini, copilot, rule, user)])


def test_with_copilot_enabled_its_file_gets_every_check(ws: Workspace) -> None:
    proj = ws.project("p")
    copilot = ws.write("p/.github/copilot-instructions.md", "- same\n- same\n" + LINE)
    found = ws.run("check", "--agent", "copilot", "--format", "json", cwd=proj).json()
    assert [(f["path"], f["line"], f["code"]) for f in found] == [(str(copilot), 2, "duplicate"),
                                                                  (str(copilot), 3, "secret")]


def test_look_alikes_in_instruction_files_are_not_reported(ws: Workspace) -> None:
    proj = ws.project("p")
    body = "".join(f"- {t}\n" for t in LOOK_ALIKES.values())
    for rel, text, _ in FILES.values():
        ws.write(rel, text.replace(LINE, body).replace(f"description: {KEY}", "description: rules"))
    result = ws.run("check", "--format", "json", cwd=proj)
    assert [f for f in result.json() if f["code"] == "secret"] == []


def test_a_copilot_instructions_md_outside_github_is_no_instruction_file(ws: Workspace) -> None:
    proj = ws.project("p")
    ws.write("p/docs/copilot-instructions.md", LINE)
    ws.write("p/GEMINI.md", "- clean\n")
    result = ws.run("check", cwd=proj)
    assert result.rc == 0 and result.stdout == ""
