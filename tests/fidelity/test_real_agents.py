"""The real agents against `memory-lens show --agent`: Codex, Gemini CLI and Claude Code, each
run headless on small trees with its model API pointed at a recorder on 127.0.0.1
(`real_agents.py`); the instructions it sent, its own wrapper text taken off, must equal what
Memory Lens shows, byte for byte. The pinned versions are in `real_agents.PINNED`
(installed by scripts/agent-clis.sh). Skipped without them, except on CI.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

import real_agents as agents
from sandbox import Workspace

pytestmark = pytest.mark.slow  # one agent process per tree (2-8 s each)

Tree = Callable[[Workspace], tuple[Path, dict]]
CODEX: dict[str, Tree] = {}
GEMINI: dict[str, Tree] = {}


def codex_tree(fn: Tree) -> Tree:
    CODEX[fn.__name__] = fn
    return fn


def gemini_tree(fn: Tree) -> Tree:
    GEMINI[fn.__name__] = fn
    return fn


# Codex 0.169.0 ----------------------------------------------------------------------------------

@codex_tree
def codex_root_only(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "# Rules\n- Use pnpm\n")
    return root, {}


@codex_tree
def codex_nested(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/AGENTS.md", "  root, untrimmed\n\n")
    ws.write("app/pkg/AGENTS.md", "pkg\n")
    return ws.path("app/pkg"), {}


@codex_tree
def codex_override_first(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "plain\n")
    ws.write("app/AGENTS.override.md", "override\n")
    return root, {}


@codex_tree
def codex_no_git_cwd_alone(ws: Workspace) -> tuple[Path, dict]:
    ws.write("app/AGENTS.md", "above, not read\n")
    ws.write("app/src/AGENTS.md", "here\n")
    return ws.path("app/src"), {}


@codex_tree
def codex_cut_by_budget(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "0123456789" * 5 + "\n")
    return root, {"config": "project_doc_max_bytes = 23"}


@codex_tree
def codex_budget_used_up(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/AGENTS.md", "x" * 40)
    ws.write("app/pkg/AGENTS.md", "never read\n")
    return ws.path("app/pkg"), {"config": "project_doc_max_bytes = 40"}


@codex_tree
def codex_budget_zero(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "off\n")
    return root, {"config": "project_doc_max_bytes = 0"}


@codex_tree
def codex_fallback_name(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/CONTEXT.md", "fallback\n")
    return root, {"config": 'project_doc_fallback_filenames = ["CONTEXT.md"]'}


@codex_tree
def codex_agents_before_fallback(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/CONTEXT.md", "fallback\n")
    ws.write("app/AGENTS.md", "agents\n")
    return root, {"config": 'project_doc_fallback_filenames = ["CONTEXT.md"]'}


@codex_tree
def codex_root_marker(ws: Workspace) -> tuple[Path, dict]:
    ws.write("app/.hg/keep", "")
    ws.write("app/AGENTS.md", "hg root\n")
    ws.write("app/src/AGENTS.md", "src\n")
    return ws.path("app/src"), {"config": 'project_root_markers = [".hg"]'}


@codex_tree
def codex_no_markers(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/AGENTS.md", "root, not read\n")
    ws.write("app/src/AGENTS.md", "src\n")
    return ws.path("app/src"), {"config": "project_root_markers = []"}


@codex_tree
def codex_blank_skipped(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/AGENTS.md", " \n\t\n")
    ws.write("app/pkg/AGENTS.md", "pkg\n")
    return ws.path("app/pkg"), {}


@codex_tree
def codex_bom_crlf_kept(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "\ufeff- one\r\n- two\r\n\r\n")
    return root, {}


@codex_tree
def codex_cut_mid_character(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "é" * 20)
    return root, {"config": "project_doc_max_bytes = 7"}


@codex_tree
def codex_git_file_root(ws: Workspace) -> tuple[Path, dict]:
    ws.project("wt", git_file=True)
    ws.write("wt/AGENTS.md", "worktree root\n")
    ws.write("wt/a/b/AGENTS.md", "deep\n")
    ws.mkdir("wt/a/b/c")
    return ws.path("wt/a/b/c"), {}


@pytest.mark.parametrize("name", sorted(CODEX))
def test_codex(ws: Workspace, name: str) -> None:
    cwd, opts = CODEX[name](ws)
    sent = agents.run_codex(cwd, ws.home, opts.get("config", ""))
    shown = ws.json("show", str(cwd), "--agent", "codex", cwd=cwd, env={"CODEX_HOME": str(ws.home / ".codex")})
    assert shown["text"] == sent


# Gemini CLI 0.61.0 ------------------------------------------------------------------------------

@gemini_tree
def gemini_global_and_project(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write_global("- global\n")
    ws.write("app/GEMINI.md", "- project\n")
    return root, {}


@gemini_tree
def gemini_chain(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/GEMINI.md", "root\n")
    ws.write("app/pkg/GEMINI.md", "pkg\n")
    return ws.path("app/pkg"), {}


@gemini_tree
def gemini_import(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "see @./docs/a.md here\n")
    ws.write("app/docs/a.md", "  imported, untrimmed  \n")
    return root, {}


@gemini_tree
def gemini_import_in_code(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "`@./a.md` stays\n")
    ws.write("app/a.md", "not imported\n")
    return root, {}


@gemini_tree
def gemini_import_outside_root(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "@../outside.md\n")
    ws.write("outside.md", "outside\n")
    return root, {}


@gemini_tree
def gemini_import_missing(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "@docs/missing.md.\n")
    return root, {}


@gemini_tree
def gemini_import_cycle(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "@./a.md\n")
    ws.write("app/a.md", "a @./b.md\n")
    ws.write("app/b.md", "b @./a.md\n")
    return root, {}


@gemini_tree
def gemini_filename_setting(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/AGENTS.md", "agents\n")
    ws.write("app/GEMINI.md", "gemini\n")
    return root, {"settings": {"context": {"fileName": "AGENTS.md"}}}


@gemini_tree
def gemini_trim_bom(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "\ufeff\n  text\r\nmore \u00a0\n\n")
    return root, {}


@gemini_tree
def gemini_empty_left_out(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/GEMINI.md", " \n\n")
    ws.write("app/pkg/GEMINI.md", "pkg\n")
    return ws.path("app/pkg"), {}


@gemini_tree
def gemini_no_root(ws: Workspace) -> tuple[Path, dict]:
    ws.write("app/GEMINI.md", "above, not read\n")
    ws.write("app/src/GEMINI.md", "src\n")
    return ws.path("app/src"), {}


@gemini_tree
def gemini_sorted_paths(ws: Workspace) -> tuple[Path, dict]:
    ws.project("app")
    ws.write("app/GEMINI.md", "root\n")
    ws.write("app/Docs/GEMINI.md", "Docs sorts first\n")
    return ws.path("app/Docs"), {}


@gemini_tree
def gemini_flat_imports(ws: Workspace) -> tuple[Path, dict]:
    root = ws.project("app")
    ws.write("app/GEMINI.md", "@./a.md and @./b.md\n")
    ws.write("app/a.md", "a\n")
    ws.write("app/b.md", "b\n")
    return root, {"settings": {"context": {"importFormat": "flat"}}}


@gemini_tree
def gemini_boundary_marker(ws: Workspace) -> tuple[Path, dict]:
    ws.write("mono/.root-marker", "")
    ws.write("mono/GEMINI.md", "mono\n")
    ws.write("mono/app/GEMINI.md", "app\n")
    return ws.path("mono/app"), {"settings": {"context": {"memoryBoundaryMarkers": [".root-marker"]}}}


@gemini_tree
def gemini_global_only(ws: Workspace) -> tuple[Path, dict]:
    ws.write_global("only global\n")
    return ws.mkdir("plain"), {}


@pytest.mark.parametrize("name", sorted(GEMINI))
def test_gemini(ws: Workspace, name: str) -> None:
    cwd, opts = GEMINI[name](ws)
    sent = agents.gemini_memory(agents.run_gemini(cwd, ws.home, opts.get("settings")))
    shown = ws.run("show", str(cwd), "--format", "annotated", cwd=cwd, env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    assert shown.rc == 0, str(shown)
    assert shown.stdout == (sent + "\n" if sent else "")
