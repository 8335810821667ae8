"""Differential suite: `memory-lens show --format annotated` against Gemini CLI's own loader.

Each case builds a tree (its own HOME, project and files), then Gemini CLI's published package
(`@google/gemini-cli-core`, installed once into the benchmark cache by `benchmarks/peers.py`) loads
the memory for the case's working directory through `gemini_loader.mjs` (one Node process for
every case), and Memory Lens must print the same text byte for byte. A quirk of the agent that
Memory Lens deliberately does not copy is an xfail with the reason, and is listed in
docs/agents.md. Skipped locally without Node.js and npm; on CI (CI set) their absence fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable

import pytest

from sandbox import Workspace

REPO = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).with_name("gemini_loader.mjs")
GEMINI_VERSION = "0.61.0"  # the version docs/agents.md was read from



def _benchmark_module(name: str) -> ModuleType:
    """A module of benchmarks/ (not a package), loaded by path: nothing is put on sys.path."""
    spec = importlib.util.spec_from_file_location(f"memory_lens_bench_{name}", REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


cache_dir = _benchmark_module("generate").cache_dir  # where the benchmark peers are installed
install = _benchmark_module("peers").install  # the benchmark's own npm install of the package


def install_cli(cache: Path, version: str) -> Path:
    """@google/gemini-cli VERSION (the CLI, whose loadSettings reads settings.json), installed
    beside the benchmark's copy of the core package on first use."""
    try:
        return install(cache, version, "@google/gemini-cli", "peers-cli")
    except (subprocess.SubprocessError, OSError) as err:
        message = f"cannot install @google/gemini-cli@{version}: {err}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def _require_node() -> None:
    missing = [name for name in ("node", "npm") if shutil.which(name) is None]
    if not missing:
        return
    message = f"{' and '.join(missing)} not installed (Node.js 20 or later runs Gemini CLI's loader)"
    if os.environ.get("CI"):
        pytest.fail(message + "; CI must have them")
    pytest.skip(message)


# The trees -------------------------------------------------------------------------------------
#
# A builder gets a fresh Workspace (HOME is ws.home) and returns the working directory and the
# memory file names (Gemini's context.fileName list; Memory Lens's --filename flags).

Case = Callable[[Workspace], tuple[Path, list[str]]]
CASES: dict[str, Case] = {}
XFAIL: dict[str, str] = {}


def case(fn: Case) -> Case:
    CASES[fn.__name__] = fn
    return fn


@case
def plain_chain(ws: Workspace):
    ws.write_global("# Global\n- Answer in British English\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "\n\n# Shop\n\nA Django shop.\n\n")
    ws.write("p/src/GEMINI.md", "")  # empty: left out
    ws.write("p/src/api/GEMINI.md", "# API\r\n- Every view returns JSON.\r\n")
    return ws.path("p/src/api"), ["GEMINI.md"]


@case
def relative_and_nested_imports(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "Intro\n@./docs/style.md\n@AGENTS.md\nOutro @docs/x.md, done\n")
    ws.write("p/AGENTS.md", "# Agents\nUse pnpm.\n")
    ws.write("p/docs/style.md", "Style:\n@../shared/tabs.md\n  @./deeper/one.md\n")
    ws.write("p/docs/x.md", "x\n")
    ws.write("p/docs/x.md,", "x with a comma\n")
    ws.write("p/shared/tabs.md", "Tabs, not spaces.\n\n\n")
    ws.write("p/docs/deeper/one.md", "\tone\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def absolute_import_inside_root(ws: Workspace):
    ws.project("p")
    ws.write("p/notes.md", "absolute note\n")
    ws.write("p/GEMINI.md", f"See @{ws.path('p/notes.md')} and @{ws.path('p')}//notes.md\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def cycles_and_repeats(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "root\n@./a.md\n@./self.md\n@./d1.md\n@./d2.md\n")
    ws.write("p/a.md", "A\n@./b.md\n")
    ws.write("p/b.md", "B\n@./a.md\n")
    ws.write("p/self.md", "S\n@./self.md\n")
    ws.write("p/d1.md", "D1 @./shared.md\n")
    ws.write("p/d2.md", "D2 @./shared.md\n")
    ws.write("p/shared.md", "shared\n")
    ws.write("p/sub/GEMINI.md", "sub imports its parent: @../GEMINI.md\n")
    return ws.path("p/sub"), ["GEMINI.md"]


@case
def depth_beyond_five(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "level 0 @./l1.md\n")
    for i in range(1, 8):
        ws.write(f"p/l{i}.md", f"level {i} @./l{i + 1}.md\n")
    ws.write("p/l8.md", "level 8\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def mentions_that_count_and_do_not(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", (
        "Mail me@example.com, ping @vue-flow and @types/node.\n"
        "@1.md @_a.md @~/x.md @ @@x.md (@./a.md) \u00a0@./a.md\n"
        "tab\t@./a.md\r\n@./a.md\r\nend@./a.md\n"))
    ws.write("p/a.md", "A")
    ws.write("p/1.md", "one")
    return ws.path("p"), ["GEMINI.md"]


@case
def missing_and_unreadable_targets(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "@./missing.md\n@./dir\n@./dir/\n@./file.md/below.md\n@./dangling.md\n")
    ws.mkdir("p/dir")
    ws.write("p/file.md", "f")
    ws.symlink("p/dangling.md", "nowhere.md")
    return ws.path("p"), ["GEMINI.md"]


@case
def outside_root_and_urls(ws: Workspace):
    ws.write("outside.md", "outside\n")
    ws.project("p")
    ws.write("p/GEMINI.md", (
        "@../outside.md\n@/etc/hostname\n@https://example.com/a.md\n@http://x/y\n@file:///etc/passwd\n"
        "@./sub/../../outside.md\n@./ok.md\n"))
    ws.write("p/ok.md", "ok\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def code_spans_and_fences(ws: Workspace):
    ws.project("p")
    ws.write("p/a.md", "A\n")
    ws.write("p/GEMINI.md", (
        "Inline `@./a.md` and ``code with ` @./a.md`` then @./a.md\n"
        "```\n@./a.md\n```\n"
        "~~~\n@./a.md\n~~~\n"
        "    @./a.md (indented code is not code to the agent)\n"
        "`unclosed @./a.md\n"))
    return ws.path("p"), ["GEMINI.md"]


@case
def symlinks(ws: Workspace):
    ws.write("elsewhere/secret.md", "secret\n")
    ws.project("p")
    ws.write("p/real/target.md", "target through a link\n")
    ws.symlink("p/inside.md", "real/target.md")
    ws.symlink("p/leak.md", "../elsewhere/secret.md")
    ws.symlink("p/loop.md", "loop.md")
    ws.symlink("p/linkdir", "real")
    ws.write("p/GEMINI.md", "@./inside.md\n@./leak.md\n@./loop.md\n@./linkdir/target.md\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def symlinked_memory_file(ws: Workspace):
    ws.project("p")
    ws.write("p/shared/AGENT-RULES.md", "rules\n@./extra.md\n")
    ws.write("p/shared/extra.md", "extra beside the real file\n")
    ws.write("p/sub/extra.md", "extra beside the link\n")
    ws.symlink("p/sub/GEMINI.md", "../shared/AGENT-RULES.md")
    return ws.path("p/sub"), ["GEMINI.md"]


@case
def global_imports(ws: Workspace):
    ws.write_global("global\n@./more.md\n@../outside.md\n")
    ws.write("home/.gemini/more.md", "more global\n")
    ws.write("home/outside.md", "not in ~/.gemini\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "project\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def percent_escapes(ws: Workspace):
    ws.project("p")
    ws.write("p/my notes.md", "spaced\n")
    ws.write("p/my%20notes.md", "percent\n")
    ws.write("p/GEMINI.md", "@./my%20notes.md\n@./a%ZZ.md\n@./%E2%82.md\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def bad_bytes(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", b"caf\xe9 \xf0\x9f\x98 ok\nNUL:\x00:end\n\xed\xa0\x80 \xc0\xaf\n@./imp.md\n")
    ws.write("p/imp.md", b"\xff imported bad byte\n")
    return ws.path("p"), ["GEMINI.md"]


@case
def byte_order_marks(ws: Workspace):
    ws.write_global(b"\xef\xbb\xbf@./g.md\n")  # after a BOM, '@' is not at a word boundary
    ws.write("home/.gemini/g.md", "never imported\n")
    ws.project("p")
    ws.write("p/GEMINI.md", b"\xef\xbb\xbf# Root\n@./imp.md\n")
    ws.write("p/imp.md", b"\xef\xbb\xbfimported keeps its BOM\n")
    ws.write("p/only-bom/GEMINI.md", b"\xef\xbb\xbf \n")  # empty once trimmed
    return ws.path("p/only-bom"), ["GEMINI.md"]


@case
def javascript_whitespace(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "\ufeff\u00a0\u3000\u2028 text \x1c\x1d\x1e\x1f\x85\v\f \u205f")
    ws.write("p/a/GEMINI.md", "\x85\x1f")  # not whitespace to JavaScript: kept
    ws.write("p/a/b/GEMINI.md", "\u2000\u200a\ufeff\t")  # whitespace only: left out
    return ws.path("p/a/b"), ["GEMINI.md"]


@case
def several_file_names(ws: Workspace):
    ws.write_global("global gemini\n")
    ws.write_global("global agents\n", name="AGENTS.md")
    ws.project("p")
    ws.write("p/AGENTS.md", "root agents @./CLAUDE.md\n")
    ws.write("p/CLAUDE.md", "claude\n")
    ws.write("p/GEMINI.md", "root gemini\n")
    ws.write("p/src/AGENTS.md", "src agents\n")
    return ws.path("p/src"), ["AGENTS.md", "GEMINI.md"]


@case
def several_file_names_gemini_first(ws: Workspace):
    ws.project("p")
    ws.write("p/AGENTS.md", "root agents\n")
    ws.write("p/GEMINI.md", "root gemini\n")
    return ws.path("p"), ["GEMINI.md", "AGENTS.md"]



@case
def directory_sorting_before_its_parent(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "root\n")
    ws.write("p/Docs/GEMINI.md", "docs\n")
    return ws.path("p/Docs"), ["GEMINI.md"]



@case
def no_git_root(ws: Workspace):
    ws.write("top/GEMINI.md", "above the working directory\n")
    ws.write("top/here/GEMINI.md", "here\n")
    return ws.path("top/here"), ["GEMINI.md"]



@case
def string_sort_across_levels(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "root gemini\n")
    ws.write("p/AGENTS.md", "root agents\n")
    ws.write("p/Docs/GEMINI.md", "Docs gemini\n")
    ws.write("p/Docs/api/AGENTS.md", "api agents\n")
    ws.write("p/Docs/api/GEMINI.md", "api gemini\n")
    ws.write("p/Docs/api/Zed/GEMINI.md", "Zed: sorts before api's files\n")
    return ws.path("p/Docs/api/Zed"), ["GEMINI.md", "AGENTS.md"]


@case
def utf16_sort_of_names(ws: Workspace):
    # JavaScript compares UTF-16 code units: U+1D49C (D835 DC9C) sorts before U+FF21, the
    # other way round from code points.
    ws.write_global("global fullwidth\n", name="\uff21.md")
    ws.write_global("global script\n", name="\U0001d49c.md")
    ws.project("p")
    ws.write("p/\uff21.md", "fullwidth A\n")
    ws.write("p/\U0001d49c.md", "script A\n")
    return ws.path("p"), ["\uff21.md", "\U0001d49c.md"]


@case
def linked_file_sorting_before_its_target(ws: Workspace):
    ws.project("p")
    ws.write("p/GEMINI.md", "root, also linked from Docs\n")
    ws.symlink("p/Docs/GEMINI.md", "../GEMINI.md")
    ws.write("p/Docs/AGENTS.md", "docs agents\n")
    return ws.path("p/Docs"), ["GEMINI.md", "AGENTS.md"]


@case
def no_git_root_in_home(ws: Workspace):
    ws.write_global("global\n")
    ws.write("home/GEMINI.md", "the home directory is the working directory\n")
    return ws.home, ["GEMINI.md"]


@case
def working_directory_below_global_dir(ws: Workspace):
    ws.project("home")  # a dotfiles repository: the home directory is the project root
    ws.write_global("global\n")
    ws.write("home/GEMINI.md", "home, above the global directory: not reached\n")
    ws.write("home/.gemini/sub/GEMINI.md", "below the global directory\n")
    return ws.path("home/.gemini/sub"), ["GEMINI.md"]


@case
def import_escaping_git_root_from_subdirectory(ws: Workspace):
    ws.project("p")
    ws.write("p/top.md", "top of the project\n")
    ws.write("p/a/b/GEMINI.md", "@../../top.md\n@../../../outside.md\n")
    ws.write("outside.md", "outside\n")
    return ws.path("p/a/b"), ["GEMINI.md"]


# Gemini's settings.json --------------------------------------------------------------------------
#
# These cases give Memory Lens no --filename flag: both sides read ~/.gemini/settings.json and the
# working directory's .gemini/settings.json (Gemini through its own loadSettings, one Node process
# per case). A project settings file counts only in a folder Gemini trusts (trustedFolders.json).

SETTINGS_CASES: set[str] = set()


def settings_case(fn: Case) -> Case:
    SETTINGS_CASES.add(fn.__name__)
    return case(fn)


def trust(ws: Workspace, folder: Path) -> None:
    ws.write("home/.gemini/trustedFolders.json", json.dumps({str(folder): "TRUST_FOLDER"}))


@settings_case
def settings_file_name_string(ws: Workspace):
    ws.write("home/.gemini/settings.json", '{\n  // comments are allowed\n  "context": {"fileName": "AGENTS.md"}\n}\n')
    ws.write_global("global gemini\n")
    ws.write_global("global agents\n", name="AGENTS.md")
    ws.project("p")
    ws.write("p/AGENTS.md", "root agents\n")
    ws.write("p/GEMINI.md", "root gemini\n")
    ws.write("p/CLAUDE.md", "not configured\n")
    ws.write("p/src/AGENTS.md", "src agents\n")
    return ws.path("p/src"), []


@settings_case
def settings_file_name_list_project_wins(ws: Workspace):
    ws.write("home/.gemini/settings.json", '{"context": {"fileName": ["CLAUDE.md"], "importFormat": "flat"}}')
    ws.project("p")
    trust(ws, ws.path("p"))
    ws.write("p/.gemini/settings.json", '{"context": {"fileName": ["AGENTS.md", " CONTEXT.md ", "AGENTS.md"]}}')
    ws.write("p/AGENTS.md", "agents @./more.md\n")
    ws.write("p/more.md", "more\n")
    ws.write("p/CONTEXT.md", "context\n")
    ws.write("p/GEMINI.md", "gemini\n")
    ws.write("p/CLAUDE.md", "only the user's settings name this\n")
    return ws.path("p"), []


@settings_case
def settings_untrusted_project_file_ignored(ws: Workspace):
    ws.project("p")
    ws.write("p/.gemini/settings.json", '{"context": {"fileName": "AGENTS.md", "importFormat": "flat"}}')
    ws.write("p/AGENTS.md", "agents: not loaded, the folder is not trusted\n")
    ws.write("p/GEMINI.md", "gemini @./a.md\n")
    ws.write("p/a.md", "a\n")
    return ws.path("p"), []


@settings_case
def settings_memory_boundary_markers(ws: Workspace):
    ws.write("home/.gemini/settings.json", '{"context": {"memoryBoundaryMarkers": ["package.json", "/abs", "../up"]}}')
    ws.project("repo")
    ws.write("repo/GEMINI.md", "repo root: above the package, not loaded\n")
    ws.write("repo/notes.md", "outside the package root\n")
    ws.write("repo/pkg/package.json", "{}\n")
    ws.write("repo/pkg/GEMINI.md", "package @./in.md @../notes.md\n")
    ws.write("repo/pkg/in.md", "inside\n")
    ws.write("repo/pkg/lib/GEMINI.md", "lib\n")
    return ws.path("repo/pkg/lib"), []


@settings_case
def settings_boundary_marker_above_the_project(ws: Workspace):
    """A marker found above every project (`["etc"]` or `["home"]` find `/` on a real system; here
    the sandbox root holds `etc`): the chain and the import root start there, and an import of any
    file below it, the user's keys included, is read (issue 23; over MCP it is withheld)."""
    ws.write("home/.gemini/settings.json", '{"context": {"memoryBoundaryMarkers": ["etc"]}}')
    ws.mkdir("etc")
    key = ws.write("home/.ssh/id_ed25519", "planted key\n")
    ws.write("GEMINI.md", "above the project: loaded from the marker's directory down\n")
    ws.project("p")
    ws.write("p/GEMINI.md", f"project @{key} and @../home/.ssh/id_ed25519\n")
    return ws.path("p"), []


@settings_case
def settings_import_format_flat(ws: Workspace):
    ws.write("home/.gemini/settings.json", '{"context": {"importFormat": "flat"}}')
    ws.write_global("global @./g.md\n")
    ws.write("home/.gemini/g.md", "  global import  \n")
    ws.project("p")
    ws.write("p/GEMINI.md", (
        "  root first @./a.md then @./b.md, `@./code.md` and @./missing.md @../out.md @https://x/y.md\n"
        "@./docs\n@./a.md again\n"))
    ws.write("p/a.md", "A imports @./c.md and @./b.md\n")
    ws.write("p/b.md", "B imports its importer @./GEMINI.md and @./a.md\n")
    ws.write("p/c.md", "C @./d/e.md\n")
    ws.write("p/d/e.md", "E @../f.md\n")
    ws.write("p/f.md", "F @./g.md\n")
    ws.write("p/g.md", "G @./h.md\n")
    ws.write("p/h.md", "H, deeper than five: flat has no depth limit\n")
    ws.write("p/code.md", "never\n")
    ws.mkdir("p/docs")
    ws.write("p/blank/GEMINI.md", " \n\n")  # whitespace only: flat still wraps it
    ws.write("out.md", "outside\n")
    return ws.path("p/blank"), []


@settings_case
def settings_no_boundary_markers(ws: Workspace):
    ws.write("home/.gemini/settings.json", '{"context": {"memoryBoundaryMarkers": []}}')
    ws.project("p")
    ws.write("p/GEMINI.md", "project root: not read without markers\n")
    ws.write("p/src/GEMINI.md", "the working directory alone\n")
    return ws.path("p/src"), []


# Running both ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Workspace, Path, list[str]]]:
    base = Path(os.path.realpath(tmp_path_factory.mktemp("fidelity")))
    built = {}
    for name, build in CASES.items():
        ws = Workspace(base / name)
        cwd, names = build(ws)
        built[name] = (ws, cwd, names)
    return built


@pytest.fixture(scope="module")
def gemini(trees, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    _require_node()
    try:
        pkg = install(cache_dir(), GEMINI_VERSION)
    except (subprocess.SubprocessError, OSError) as err:
        message = f"cannot install @google/gemini-cli-core@{GEMINI_VERSION}: {err}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    cli = install_cli(cache_dir(), GEMINI_VERSION)
    jobs = [[{"id": name, "home": str(ws.home), "cwd": str(cwd), "fileNames": names}
              for name, (ws, cwd, names) in trees.items() if name not in SETTINGS_CASES]]
    jobs += [[{"id": name, "home": str(ws.home), "cwd": str(cwd), "settings": True}]
             for name, (ws, cwd, _) in trees.items() if name in SETTINGS_CASES]
    out: dict[str, str] = {}
    for cases in jobs:
        job = tmp_path_factory.mktemp("job") / "job.json"
        job.write_text(json.dumps({"cases": cases}))
        env = {"PATH": os.environ.get("PATH", ""), "NODE_ENV": "production", "HOME": str(job.parent)}
        proc = subprocess.run(["node", str(DRIVER), str(pkg), str(job), str(cli)], env=env, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        out.update(json.loads(proc.stdout))
    return out


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(reason=XFAIL[name], strict=True)) if name in XFAIL else name
    for name in CASES])
def test_show_annotated_is_what_gemini_loads(name: str, trees, gemini) -> None:
    ws, cwd, names = trees[name]
    flags = [arg for n in names for arg in ("--filename", n)]
    result = ws.run("show", "--format", "annotated", *flags, cwd=cwd)
    assert result.rc == 0, result
    expected = gemini[name] + "\n" if gemini[name] else ""
    assert result.stdout == expected, (
        f"{name}: Memory Lens differs from Gemini CLI {GEMINI_VERSION}\n"
        f"--- Memory Lens ---\n{result.stdout!r}\n--- Gemini CLI ---\n{expected!r}")
