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


def _files(ws: Workspace, files: dict[str, str | bytes], cwd: str, **opts: object) -> tuple[Path, dict]:
    for rel, content in files.items():
        if rel.endswith("/"):
            ws.mkdir(rel)
        else:
            ws.write(rel, content if isinstance(content, bytes) else content.replace("ROOT", str(ws.root)))
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


# Copilot CLI 1.0.102 ----------------------------------------------------------------------------

COPILOT: dict[str, Tree] = {}
# A repository root to Copilot CLI: HEAD, objects/ and refs/ (an empty .git directory is none).
GIT = {"app/.git/HEAD": "ref: refs/heads/main\n", "app/.git/objects/": "", "app/.git/refs/": ""}


def copilot_tree(fn: Tree) -> Tree:
    COPILOT[fn.__name__] = fn
    return fn


def _scoped(apply_to: str, body: str) -> str:
    return f"---\napplyTo: {apply_to}\n---\n{body}"


@copilot_tree
def copilot_order_of_tagged(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "home/.copilot/copilot-instructions.md": "home\n",
                       "app/.github/copilot-instructions.md": "repo\n", "app/AGENTS.md": "root agents\n",
                       "app/CLAUDE.md": "root claude\n", "app/GEMINI.md": "root gemini\n",
                       "app/mid/AGENTS.md": "mid agents\n", "app/mid/GEMINI.md": "mid gemini",
                       "app/mid/leaf/AGENTS.md": "leaf agents\n", "app/mid/leaf/.github/copilot-instructions.md": "leaf gh\n",
                       "app/mid/leaf/below/AGENTS.md": "below: not read\n"}, "app/mid/leaf")


@copilot_tree
def copilot_between_nearest_first(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/AGENTS.md": "root", "app/a/AGENTS.md": "a", "app/a/b/AGENTS.md": "b",
                       "app/a/b/.github/copilot-instructions.md": "b gh", "app/a/b/c/AGENTS.md": "c"}, "app/a/b/c")


@copilot_tree
def copilot_bom_and_empty(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/AGENTS.md": "\ufeff  x\r\n\r\n\n", "app/CLAUDE.md": "",
                       "app/GEMINI.md": "  \n\n"}, "app")


@copilot_tree
def copilot_no_git_cwd_alone(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"x/AGENTS.md": "above: not read\n", "x/.git/": "", "x/y/AGENTS.md": "y\n",
                       "x/y/.github/copilot-instructions.md": "gh y\n"}, "x/y")


@copilot_tree
def copilot_git_file_root(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {"wt/.git": "gitdir: /nonexistent/worktrees/x\n", "wt/AGENTS.md": "wt root",
                       "wt/a/AGENTS.md": "a"}, "wt/a")


@copilot_tree
def copilot_names_case_and_others(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/agents.md": "lower agents", "app/Claude.md": "mixed claude",
                       "app/.github/AGENTS.md": "no", "app/.claude/CLAUDE.md": "no", "app/CLAUDE.local.md": "no",
                       "app/AGENTS.override.md": "no", "app/.github/copilot-instructions.MD": "upper ext",
                       "app/copilot-instructions.md": "no", "home/.claude/CLAUDE.md": "no",
                       "home/.copilot/AGENTS.md": "no"}, "app")


@copilot_tree
def copilot_scoped_instructions(ws: Workspace) -> tuple[Path, dict]:
    d = "app/.github/instructions/"
    return _files(ws, {**GIT, "app/AGENTS.md": "agents\n", d + "all.instructions.md": _scoped("'**'", "all\n"),
                       d + "ts.instructions.md": "---\napplyTo: 'src/**/*.ts'\ndescription: 'ts | things'\n---\nts\n",
                       d + "sub/py.instructions.md": _scoped("['*.py', '*.pyi']", "py\n"),
                       d + "plain.instructions.md": "no front matter\n", d + "other.md": "not read\n",
                       "app/src/x.ts": ""}, "app", read="app/src/x.ts")


@copilot_tree
def copilot_apply_to_always(ws: Workspace) -> tuple[Path, dict]:
    d = "app/.github/instructions/"
    files = {**GIT, d + "a.instructions.md": _scoped("'*'", "a"), d + "b.instructions.md": _scoped("'**/*'", "b"),
             d + "c.instructions.md": _scoped("['**']", "c"), d + "d.instructions.md": _scoped("''", "d"),
             d + "e.instructions.md": _scoped("5", "e"), d + "f.instructions.md": _scoped("**", "f"),
             d + "g.instructions.md": "---\ndescription: no applyTo\n---\ng", d + "h.instructions.md": "---\napplyTo: '*.ts'\nh",
             d + "i.instructions.MD": "i", d + "j.instructions.md": _scoped("'*.ts, **'", "j"),
             d + "k.instructions.md": _scoped("[unclosed", "k"), d + "l.instructions.md": "\ufeff  l\r\n\r\n"}
    return _files(ws, files, "app")


@copilot_tree
def copilot_exclude_agent(ws: Workspace) -> tuple[Path, dict]:
    d = "app/.github/instructions/"
    return _files(ws, {**GIT, d + "a.instructions.md": "---\nexcludeAgent: 'code-review'\n---\na",
                       d + "b.instructions.md": "---\nexcludeAgent: coding-agent\n---\nb",
                       d + "c.instructions.md": "---\nexcludeAgent: ['coding-agent']\napplyTo: '*.ts'\n---\nc"}, "app")


@copilot_tree
def copilot_claude_rules(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/.claude/rules/plain.md": "plain rule\n",
                       "app/.claude/rules/py.md": "---\npaths: '*.py'\n---\npy rule\n",
                       "app/.claude/rules/all.md": "---\npaths: '**'\n---\nall\n",
                       "app/.claude/rules/sub/deep.md": "---\npaths: ['src/*.ts']\ndescription: deep one\n---\ndeep\n",
                       "app/.claude/rules/z.txt": "not md\n", "app/x.py": ""}, "app", read="app/x.py")


@copilot_tree
def copilot_home_instructions(ws: Workspace) -> tuple[Path, dict]:
    h = "home/.copilot/instructions/"
    return _files(ws, {**GIT, "home/.copilot/copilot-instructions.md": "hc\n", h + "a.instructions.md": "a",
                       h + "B.instructions.md": "B", h + "a-b.instructions.md": "a-b", h + "m/x.instructions.md": "m/x",
                       h + "z.instructions.md": "z", h + "sub/ts.instructions.md": _scoped("'*.ts'", "ts"),
                       h + "c.md": "not read"}, "app")


@copilot_tree
def copilot_copilot_home(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "ch/copilot-instructions.md": "from COPILOT_HOME",
                       "ch/instructions/i.instructions.md": "ch ins", "home/.copilot/copilot-instructions.md": "not read"},
                  "app", env={"COPILOT_HOME": str(ws.path("ch"))})


@copilot_tree
def copilot_working_directory_instructions(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/.github/instructions/r.instructions.md": _scoped("'*.ts'", "r"),
                       "app/.github/instructions/r1.instructions.md": "r1",
                       "app/mid/.github/instructions/m.instructions.md": "mid: not read",
                       "app/mid/.claude/rules/m.md": "mid: not read", "app/mid/x/.github/instructions/c.instructions.md":
                       _scoped("'*.py'", "c"), "app/mid/x/.github/instructions/c1.instructions.md": "c1",
                       "app/mid/x/.claude/rules/p.md": "---\npaths: '*.md'\n---\np", "app/mid/x/.claude/rules/q.md": "q"},
                  "app/mid/x")


@copilot_tree
def copilot_custom_dirs(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/AGENTS.md": "app", "app/w/AGENTS.md": "w",
                       "e1/AGENTS.md": "e1 agents", "e1/.github/copilot-instructions.md": "not read", "e1/CLAUDE.md": "not read",
                       "e1/.github/instructions/g.instructions.md": "g", "e1/.github/instructions/g2.instructions.md":
                       _scoped("'*.ts'", "g2"), "e1/.claude/rules/r.md": "r", "e1/a.instructions.md": "a",
                       "e1/sub/b.instructions.md": "b", "e1/.hidden/c.instructions.md": "not read",
                       "e1/sub/AGENTS.md": "not listed", "e 2/AGENTS.md": "e2 agents",
                       "e3;x/AGENTS.md": "not a dir"}, "app/w",
                  env={"COPILOT_CUSTOM_INSTRUCTIONS_DIRS": f"{ws.path('e1')} , {ws.path('e 2')};{ws.path('e3')}"})


@copilot_tree
def copilot_same_text_once(ws: Workspace) -> tuple[Path, dict]:
    d = "app/.github/instructions/"
    return _files(ws, {**GIT, "home/.copilot/copilot-instructions.md": "same", "app/AGENTS.md": "same",
                       "app/GEMINI.md": "\ufeffsame", "app/sub/CLAUDE.md": "same\n", "app/sub/AGENTS.md": "same",
                       d + "a.instructions.md": "same", d + "b.instructions.md": "same", "app/CLAUDE.md": "",
                       "app/sub/GEMINI.md": ""}, "app/sub")


@copilot_tree
def copilot_bad_bytes_and_front_matter_forms(ws: Workspace) -> tuple[Path, dict]:
    d = "app/.github/instructions/"
    return _files(ws, {**GIT, "app/AGENTS.md": b"bad \xff\xfe byte\x00nul\n", "app/CLAUDE.md": "\r\n  crlf \r\n",
                       d + "a.instructions.md": "---\r\napplyTo: 'a|b, {x,y}/*.ts'\r\n---\r\na",
                       d + "b.instructions.md": "\ufeff---\napplyTo: '*.md'\n---\nb",
                       d + "c.instructions.md": "  ---\napplyTo: '*.ts'\n---\nc", d + "d.instructions.md": b"\xff d",
                       d + "e.instructions.md": "---\napplyto: '*.ts'\n---\ne"}, "app")


@copilot_tree
def copilot_nothing(ws: Workspace) -> tuple[Path, dict]:
    return _files(ws, {**GIT, "app/.claude/CLAUDE.md": "not read"}, "app")


@pytest.mark.parametrize("name", sorted(COPILOT))
def test_copilot(ws: Workspace, name: str) -> None:
    cwd, opts = COPILOT[name](ws)
    env = opts.get("env", {})
    shown = ws.json("show", str(ws.path(opts.get("read", cwd))), "--agent", "copilot", cwd=cwd, env=env)
    assert shown["text"] == agents.run_copilot(cwd, ws.home, env)
