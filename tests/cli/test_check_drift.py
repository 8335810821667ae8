"""`memory-lens check` on built repositories: near-`redundant` entries across tiers and `drift`
between two agents' files; the bridge the quick fix writes keeps what each agent loads."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import Workspace

SHARED = "".join(f"- Shared rule number {n}: keep the build green and the tests fast\n" for n in range(40))


def findings(ws: Workspace, code: str, *args: str, cwd=None) -> list[dict]:
    return [f for f in ws.run("check", "--format", "json", *args, cwd=cwd).json() if f["code"] == code]


def test_an_entry_nearly_the_same_as_a_general_one_is_redundant_with_its_score(ws: Workspace) -> None:
    ws.write_global("- Always run the unit tests before pushing a branch\n- Use pnpm\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- Always run the unit tests before pushing any branch\n"   # near: 98
                            "- Use npm\n"                                                # short: not compared
                            "- Always run the linter before pushing a branch\n")        # too different
    found = findings(ws, "redundant", cwd=ws.path("p"))
    assert [(f["line"], f["severity"]) for f in found] == [(1, "information")]
    assert found[0]["message"] == (f"redundant entry: nearly the same (similarity 98%) as "
                                   f"{ws.global_dir / 'GEMINI.md'}:1, which loads before this file")


def test_two_agents_files_that_are_mostly_the_same_text_drift(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "# Rules\n" + SHARED + "- Codex only: one\n- Codex only: two\n- Codex only: three\n"
                            "- Codex only: four\n")
    ws.write("p/CLAUDE.md", "# Rules\n" + SHARED)
    ws.write("p/GEMINI.md", "# Gemini\n- Something else entirely\n")
    found = findings(ws, "drift", cwd=ws.path("p"))
    message = "drift: AGENTS.md and CLAUDE.md share 41 of 45 lines; 4 lines are only in AGENTS.md"
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [
        (str(ws.path("p/AGENTS.md")), 1, "information"), (str(ws.path("p/CLAUDE.md")), 1, "information")]
    assert found[0]["message"] == message
    assert found[1]["message"] == message + "; make AGENTS.md the source: put `@AGENTS.md` in CLAUDE.md in " \
                                            "place of the copy (quick fix)"


def test_files_that_merely_share_a_few_lines_do_not_drift(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/AGENTS.md", "# Rules\n- One\n- Two\n" + "".join(f"- Codex {n}\n" for n in range(10)))
    ws.write("p/CLAUDE.md", "# Rules\n- One\n- Two\n" + "".join(f"- Claude {n}\n" for n in range(10)))
    assert findings(ws, "drift", cwd=ws.path("p")) == []
