"""The real agents against `memory-lens show --agent`: Codex, Gemini CLI and Claude Code, each
run headless on small trees with its model API pointed at a recorder on 127.0.0.1
(`real_agents.py`); the instructions it sent, its own wrapper text taken off, must equal what
Memory Lens shows, byte for byte. The pinned versions are in `real_agents.PINNED`
(installed by scripts/agent-clis.sh). Skipped without them, except on CI.
"""

from __future__ import annotations

import json
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


# Claude Code 2.1.328 ----------------------------------------------------------------------------

CLAUDE: dict[str, Tree] = {}
PLUGIN = "cc-plugin-agents-md@builtin"


def claude_tree(fn: Tree) -> Tree:
    CLAUDE[fn.__name__] = fn
    return fn


def _files(ws: Workspace, files: dict[str, str], cwd: str, **opts: object) -> tuple[Path, dict]:
    for rel, content in files.items():
        if rel.endswith("/"):
            ws.mkdir(rel)
        else:
            ws.write(rel, content.replace("ROOT", str(ws.root)))
    return ws.path(cwd), dict(opts)


def _settings(**keys: object) -> str:
    return json.dumps(keys)


@claude_tree
def claude_trim_js(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "\ufeff\u00a0 a\r\nb\rc \u2028\u3000\n\x1c"}, "app")


@claude_tree
def claude_empty_left_out(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": " \n\t\n", "app/CLAUDE.local.md": "local\n"}, "app")


@claude_tree
def claude_chain_top_down(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "CLAUDE.md": "above the root\n", "app/CLAUDE.md": "root\n",
                       "app/pkg/CLAUDE.md": "pkg\n", "app/pkg/.claude/CLAUDE.md": "dot\n",
                       "app/pkg/CLAUDE.local.md": "local\n"}, "app/pkg")


@claude_tree
def claude_no_git(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"x/CLAUDE.md": "x\n", "x/y/CLAUDE.md": "y\n"}, "x/y")


@claude_tree
def claude_user_file(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"home/.claude/CLAUDE.md": "  user prefs\n\n", "app/.git/": "", "app/CLAUDE.md": "app\n"}, "app")


@claude_tree
def claude_config_dir(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"cfg/CLAUDE.md": "from the config dir\n", "home/.claude/CLAUDE.md": "not read\n",
                       "cfg/rules/r.md": "config rule\n", "app/.git/": ""}, "app",
                  env={"CLAUDE_CONFIG_DIR": str(ws.path("cfg"))})


@claude_tree
def claude_below_start_not_at_start(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "root\n", "app/sub/CLAUDE.md": "only on read\n"}, "app")


@claude_tree
def claude_import_four_hops(ws: Workspace) -> tuple[Path, dict]:
    files = {"app/.git/": "", "app/CLAUDE.md": "@l1.md\n"}
    files.update({f"app/l{i}.md": f"L{i} @l{i + 1}.md\n" for i in range(1, 7)})
    return _files(ws, files, "app")


@claude_tree
def claude_import_trimmed_and_code(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "`@a.md` and\n```\n@b.md\n```\n@d.md#frag x@e.md @f.txt @./empty.md\n",
                       "app/a.md": "A", "app/b.md": "B", "app/d.md": "\n  D  \n", "app/e.md": "E", "app/f.txt": "F",
                       "app/empty.md": "  \n"}, "app")


@claude_tree
def claude_import_html_comment(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "top\n<!-- @c.md -->\nafter\n", "app/c.md": "C\n"}, "app")


@claude_tree
def claude_import_loop(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "@a.md top\n", "app/a.md": "a @b.md\n",
                       "app/b.md": "b @a.md @CLAUDE.md\n"}, "app")


@claude_tree
def claude_import_above_start(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "@./docs/a.md\n", "app/docs/a.md": "A\n",
                       "app/src/x.py": ""}, "app/src")


@claude_tree
def claude_import_external_unapproved(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "@../out.md\n@~/h.md\n", "out.md": "OUT\n",
                       "home/h.md": "H\n"}, "app")


@claude_tree
def claude_import_external_approved(ws: Workspace) -> tuple[Path, dict]:
    approved = json.dumps({"projects": {str(ws.path("app")): {"hasClaudeMdExternalIncludesApproved": True}}})
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "@../out.md\n", "out.md": "OUT\n",
                       "home/.claude.json": approved}, "app")


@claude_tree
def claude_user_imports_anywhere(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"home/.claude/CLAUDE.md": "@~/notes/n.md\n", "home/notes/n.md": "notes\n", "app/.git/": ""}, "app")


@claude_tree
def claude_rules_without_paths(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "claude\n", "app/CLAUDE.local.md": "local\n",
                       "app/.claude/rules/b.md": "  rule b\n",
                       "app/.claude/rules/a.md": "---\npaths: src/**/*.py\n---\nrule a py\n",
                       "app/.claude/rules/sub/c.md": "---\ndescription: x\n---\n\nrule c\n",
                       "app/.claude/rules/z.txt": "not md\n"}, "app")


@claude_tree
def claude_user_rules(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"home/.claude/CLAUDE.md": "user\n", "home/.claude/rules/u.md": "user rule\n",
                       "home/.claude/rules/p.md": "---\npaths:\n  - \"*.py\"\n---\npython\n", "app/.git/": ""}, "app")


@claude_tree
def claude_rules_front_matter(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/.claude/rules/a.md": "---\npaths: [unclosed\n---\nbody a\n",
                       "app/.claude/rules/b.md": "---\npaths:\n  - \"src/[\"\n---\nbody b\n",
                       "app/.claude/rules/c.md": "---\npaths: \"**\"\n---\nbody c\n",
                       "app/.claude/rules/d.md": "---\nno close\nbody d\n"}, "app")


@claude_tree
def claude_auto_memory_lines(ws: Workspace) -> tuple[Path, dict]:
    memory = "".join(f"line {i}\n" for i in range(1, 301))
    return _files(ws, {"app/.git/": "", "app/sub/x": "", "app/CLAUDE.md": "c\n",
                       f"home/.claude/projects/{_safe(ws.path('app'))}/memory/MEMORY.md": memory}, "app/sub")


@claude_tree
def claude_auto_memory_chars(ws: Workspace) -> tuple[Path, dict]:
    memory = "".join("x" * 150 + f" {i}\n" for i in range(1, 181))
    return _files(ws, {"app/.git/": "", f"home/.claude/projects/{_safe(ws.path('app'))}/memory/MEMORY.md": memory},
                  "app")


@claude_tree
def claude_agents_fallback(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"AGENTS.md": "above the root\n", "app/.git/": "", "app/AGENTS.md": "root agents\n",
                       "app/.claude/AGENTS.md": "dot agents\n", "app/sub/AGENTS.md": "sub agents\n",
                       "home/.claude/CLAUDE.md": "a user CLAUDE.md does not count\n"}, "app/sub")


@claude_tree
def claude_agents_off_by_claude_md(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "c\n", "app/AGENTS.md": "root agents\n",
                       "app/sub/AGENTS.md": "sub agents\n"}, "app/sub")


@claude_tree
def claude_agents_off_by_local(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.local.md": "local\n", "app/AGENTS.md": "agents\n"}, "app")


@claude_tree
def claude_agents_empty_claude_md(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "  \n", "app/AGENTS.md": "agents\n",
                       "app/below/CLAUDE.md": "below the start: does not count\n"}, "app")


@claude_tree
def claude_agents_after_rules_with_import(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/AGENTS.md": "@./x.md agents\n", "app/x.md": "X\n",
                       "app/.claude/rules/r.md": "rule\n"}, "app")


@claude_tree
def claude_mode_both(ws: Workspace) -> tuple[Path, dict]:
    mode = _settings(pluginConfigs={PLUGIN: {"options": {"instructionFiles": "claude-md-and-agents-md"}}})
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "c\n", "app/AGENTS.md": "agents\n",
                       "app/sub/AGENTS.md": "sub agents\n", "home/.claude/settings.json": mode}, "app/sub")


@claude_tree
def claude_mode_claude_md(ws: Workspace) -> tuple[Path, dict]:
    mode = _settings(pluginConfigs={PLUGIN: {"options": {"instructionFiles": "claude-md"}}})
    return _files(ws, {"app/.git/": "", "app/AGENTS.md": "agents\n", "home/.claude/settings.json": mode}, "app")


@claude_tree
def claude_mode_managed_only(ws: Workspace) -> tuple[Path, dict]:
    mode = _settings(pluginConfigs={PLUGIN: {"options": {"instructionFiles": "managed-only"}}})
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "c\n", "home/.claude/CLAUDE.md": "u\n",
                       "home/.claude/settings.json": mode}, "app")


@claude_tree
def claude_md_excludes(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "c\n", "app/pkg/CLAUDE.md": "pkg\n",
                       "home/.claude/settings.json": _settings(claudeMdExcludes=["**/pkg/CLAUDE.md"])}, "app/pkg")


@claude_tree
def claude_both_project_names(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "c1\n", "app/.claude/CLAUDE.md": "c2\n"}, "app")


@claude_tree
def claude_same_file_once(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "@CLAUDE.local.md\n", "app/CLAUDE.local.md": "once\n"}, "app")


@claude_tree
def claude_on_read_rules_and_nested(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {
        "app/.git/": "", "app/CLAUDE.md": "root\n", "app/src/CLAUDE.md": "\ufeff  src claude\r\nline2  \n\n",
        "app/src/CLAUDE.local.md": "src local\n", "app/src/.claude/rules/r.md": "  src rule, no paths\n",
        "app/src/.claude/rules/q.md": "---\npaths: \"*.py\"\n---\n  src py rule  \n",
        "app/.claude/rules/py.md": "---\npaths:\n  - \"src/**/*.py\"\n---\n\n  py rule  \n\n",
        "app/.claude/rules/md.md": "---\npaths: \"*.md\"\n---\nmd rule\n",
        "home/.claude/rules/u.md": "---\npaths: \"**/*.py\"\n---\nuser py rule\n", "app/src/x.py": "print(1)\n",
        "app/src/AGENTS.md": "not attached on read\n"}, "app", read="app/src/x.py")


@claude_tree
def claude_on_read_imports_below(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/a/CLAUDE.md": "a\n", "app/a/b/CLAUDE.md": "b @imp.md\n",
                       "app/a/b/imp.md": "imp\n", "app/a/b/c/x.txt": "x\n"}, "app", read="app/a/b/c/x.txt")


@claude_tree
def claude_on_read_no_match(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"app/.git/": "", "app/CLAUDE.md": "root\n", "app/.claude/rules/py.md": "---\npaths: \"*.py\"\n---\npy\n",
                       "app/notes.txt": "n\n"}, "app", read="app/notes.txt")


def _safe(path: Path) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in str(path))


@pytest.mark.parametrize("name", sorted(CLAUDE))
def test_claude(ws: Workspace, name: str) -> None:
    cwd, opts = CLAUDE[name](ws)
    env = opts.get("env", {})
    # Claude Code rewrites ~/.claude.json as it starts: Memory Lens reads the tree as it was built.
    read = ws.path(opts["read"]) if "read" in opts else None
    shown = ws.json("show", str(read or cwd), "--agent", "claude", cwd=cwd, env=env)
    sent, attached = agents.run_claude(cwd, ws.home, env, read)
    assert shown["text"] == "\n\n".join(t for t in (sent, *attached) if t)
