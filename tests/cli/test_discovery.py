"""Discovery rules of the contract: filenames, the global directory, the target, the project root,
the chain, and which files count."""

from __future__ import annotations

import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace


def paths(shown: dict) -> list[str]:
    return [s["path"] for s in shown["sources"]]


# Memory filenames -------------------------------------------------------------------------------


@pytest.fixture
def two_names(ws: Workspace) -> Workspace:
    ws.write_global("global gemini", "GEMINI.md")
    ws.write_global("global agents", "AGENTS.md")
    ws.project("p")
    ws.write("p/GEMINI.md", "root gemini")
    ws.write("p/AGENTS.md", "root agents")
    ws.write("p/src/GEMINI.md", "src gemini")
    ws.write("p/src/AGENTS.md", "src agents")
    return ws


def test_default_filename_is_gemini_md(two_names: Workspace) -> None:
    ws = two_names
    assert ws.ok("show", cwd=ws.path("p/src")).stdout == "global gemini\n\nroot gemini\n\nsrc gemini\n"


def test_several_filenames_load_in_gemini_order(two_names: Workspace) -> None:
    """Global files in list order; project files as Gemini CLI 0.61.0 sorts their paths, so
    AGENTS.md comes before GEMINI.md in a directory whatever the list order."""
    ws = two_names
    result = ws.ok("show", "--filename", "AGENTS.md", "--filename", "GEMINI.md", cwd=ws.path("p/src"))
    assert result.stdout == ("global agents\n\nglobal gemini\n\nroot agents\n\nroot gemini\n\n"
                             "src agents\n\nsrc gemini\n")
    shown = ws.json("show", "--filename", "GEMINI.md", "--filename", "AGENTS.md", cwd=ws.path("p/src"))
    assert paths(shown) == [str(ws.global_dir / "GEMINI.md"), str(ws.global_dir / "AGENTS.md"),
                            str(ws.path("p/AGENTS.md")), str(ws.path("p/GEMINI.md")),
                            str(ws.path("p/src/AGENTS.md")), str(ws.path("p/src/GEMINI.md"))]


def test_project_files_are_sorted_as_strings_across_directories(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "root")
    ws.write("p/Docs/GEMINI.md", "Docs")  # "/p/Docs/..." sorts before "/p/GEMINI.md"
    ws.write("p/Docs/x/GEMINI.md", "x")
    assert ws.ok("show", cwd=ws.path("p/Docs/x")).stdout == "Docs\n\nx\n\nroot\n"


def test_filenames_from_the_environment(two_names: Workspace) -> None:
    ws = two_names
    env = {"MEMORY_LENS_FILENAMES": "AGENTS.md, GEMINI.md"}
    assert ws.ok("show", cwd=ws.path("p/src"), env=env).stdout == (
        "global agents\n\nglobal gemini\n\nroot agents\n\nroot gemini\n\nsrc agents\n\nsrc gemini\n")
    # A flag wins over the environment.
    assert ws.ok("show", "--filename", "GEMINI.md", cwd=ws.path("p/src"), env=env).stdout == (
        "global gemini\n\nroot gemini\n\nsrc gemini\n")


def test_only_listed_names_load(two_names: Workspace) -> None:
    ws = two_names
    assert ws.ok("show", "--filename", "AGENTS.md", cwd=ws.path("p/src")).stdout == (
        "global agents\n\nroot agents\n\nsrc agents\n")


def test_first_filename_is_written_to(ws: Workspace) -> None:
    ws.project("p")
    ws.ok("add", "via flags", "--filename", "AGENTS.md", "--filename", "GEMINI.md", cwd=ws.path("p"))
    assert ws.read("p/AGENTS.md") == "## Gemini Added Memories\n- via flags\n"
    assert not ws.path("p/GEMINI.md").exists()
    ws.ok("add", "via env", cwd=ws.path("p"), env={"MEMORY_LENS_FILENAMES": "CONTEXT.md,AGENTS.md"})
    assert ws.read("p/CONTEXT.md") == "## Gemini Added Memories\n- via env\n"
    ws.ok("add", "global one", "--scope", "global", "--filename", "AGENTS.md", "--filename", "GEMINI.md",
          cwd=ws.path("p"))
    assert ws.read("home/.gemini/AGENTS.md") == "## Gemini Added Memories\n- global one\n"


@pytest.mark.parametrize("bad", ["", "a/b.md"])
def test_unusable_filename_is_a_usage_error(ws: Workspace, bad: str) -> None:
    result = ws.run("show", "--filename", bad)
    assert result.rc == 2 and result.stdout == ""
    assert "filename" in result.stderr


# The global directory -------------------------------------------------------------------------


@pytest.fixture
def alt_global(ws: Workspace) -> Workspace:
    """A default global file, an alternative global dir, and a project to run in."""
    ws.write_global("- default global entry\n")
    ws.write("alt/GEMINI.md", "- alt global entry\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "- project entry\n")
    return ws


@pytest.mark.parametrize("how", ["flag", "env"])
def test_global_dir_override_show(alt_global: Workspace, how: str) -> None:
    ws = alt_global
    args, env = _override(ws, how)
    shown = ws.json("show", *args, cwd=ws.path("p"), env=env)
    assert shown["text"] == "- alt global entry\n\n- project entry"
    assert shown["sources"][0] == {"path": str(ws.path("alt/GEMINI.md")), "scope": "global",
                                   "readable": True, "bytes": 19, "tokens": 5, "reason": "", "imports": []}


@pytest.mark.parametrize("how", ["flag", "env"])
def test_global_dir_override_list(alt_global: Workspace, how: str) -> None:
    ws = alt_global
    args, env = _override(ws, how)
    listed = ws.json("list", "--scope", "global", *args, cwd=ws.path("p"), env=env)
    assert listed == [{"text": "alt global entry", "path": str(ws.path("alt/GEMINI.md")), "line": 1,
                       "scope": "global"}]


@pytest.mark.parametrize("how", ["flag", "env"])
def test_global_dir_override_add(alt_global: Workspace, how: str) -> None:
    ws = alt_global
    args, env = _override(ws, how)
    ws.ok("add", "new global", "--scope", "global", *args, cwd=ws.path("p"), env=env)
    assert ws.read("alt/GEMINI.md") == "- alt global entry\n\n## Gemini Added Memories\n- new global\n"
    assert ws.read("home/.gemini/GEMINI.md") == "- default global entry\n"


@pytest.mark.parametrize("how", ["flag", "env"])
def test_global_dir_override_add_creates_the_directory(ws: Workspace, how: str) -> None:
    args, env = _override(ws, how)
    ws.ok("add", "fresh", *args, env=env)  # no project: global by default
    assert ws.read("alt/GEMINI.md") == "## Gemini Added Memories\n- fresh\n"
    assert not ws.global_dir.exists()


@pytest.mark.parametrize("how", ["flag", "env"])
def test_global_dir_override_remove(alt_global: Workspace, how: str) -> None:
    ws = alt_global
    args, env = _override(ws, how)
    result = ws.run("remove", "default global entry", *args, cwd=ws.path("p"), env=env)
    assert result.rc == 1  # the default global file is not in this chain
    ws.ok("remove", "alt global entry", *args, cwd=ws.path("p"), env=env)
    assert ws.read("alt/GEMINI.md") == ""
    assert ws.read("home/.gemini/GEMINI.md") == "- default global entry\n"


@pytest.mark.parametrize("how", ["flag", "env"])
def test_global_dir_override_check(alt_global: Workspace, how: str) -> None:
    ws = alt_global
    ws.write("p/GEMINI.md", "- alt global entry\n")  # redundant with the alternative global file
    args, env = _override(ws, how)
    findings = ws.json("check", *args, cwd=ws.path("p"), env=env)
    assert [(f["path"], f["code"]) for f in findings] == [(str(ws.path("p/GEMINI.md")), "redundant")]
    assert str(ws.path("alt/GEMINI.md")) in findings[0]["message"]


def test_global_dir_flag_beats_environment(alt_global: Workspace) -> None:
    ws = alt_global
    ws.write("alt2/GEMINI.md", "second alt")
    result = ws.ok("show", "--global-dir", str(ws.path("alt2")), cwd=ws.path("p"),
                   env={"MEMORY_LENS_GLOBAL_DIR": str(ws.path("alt"))})
    assert result.stdout == "second alt\n\n- project entry\n"


def test_serve_accepts_global_dir(ws: Workspace) -> None:
    result = ws.run("serve", "--help")
    assert result.rc == 0 and "--global-dir" in result.stdout


def _override(ws: Workspace, how: str) -> tuple[list[str], dict[str, str]]:
    alt = str(ws.path("alt"))
    return (["--global-dir", alt], {}) if how == "flag" else ([], {"MEMORY_LENS_GLOBAL_DIR": alt})


def test_home_moves_the_global_directory(ws: Workspace) -> None:
    ws.write("other-home/.gemini/GEMINI.md", "other home")
    ws.write_global("first home")
    ws.mkdir("work")
    assert ws.ok("show", cwd=ws.path("work")).stdout == "first home\n"
    assert ws.ok("show", cwd=ws.path("work"), env={"HOME": str(ws.path("other-home"))}).stdout == "other home\n"


# The target directory ---------------------------------------------------------------------------


def test_file_path_means_its_directory(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.write("p/a/GEMINI.md", "A")
    ws.write("p/a/main.py", "print()\n")
    assert ws.ok("show", str(ws.path("p/a/main.py"))).stdout == "Root\n\nA\n"
    assert ws.ok("show", str(ws.path("p/a/GEMINI.md"))).stdout == "Root\n\nA\n"


def test_relative_path_is_taken_from_the_cwd(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.write("p/a/GEMINI.md", "A")
    assert ws.ok("show", "a", cwd=ws.path("p")).stdout == "Root\n\nA\n"
    assert ws.ok("show", "..", cwd=ws.path("p/a")).stdout == "Root\n"


def test_symlinked_file_counts_where_the_link_is(ws: Workspace) -> None:
    """A file PATH means the file's own directory, even when the file is a symlink: an agent
    working there loads that directory's chain (the link's target directory plays no part)."""
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.write("p/deep/GEMINI.md", "Deep")
    ws.write("p/deep/real.txt", "x")
    ws.symlink("p/link.txt", "deep/real.txt")
    assert ws.ok("show", str(ws.path("p/link.txt"))).stdout == "Root\n"


def test_symlinked_memory_file_is_in_its_own_chain(ws: Workspace) -> None:
    """Seed 000 step 5.2: CWD/GEMINI.md linked to ../actual-GEMINI.md loads the target's content,
    whether PATH names the directory or the link itself; `check` of the link compares it with the
    more general files of its own directory's chain."""
    ws.project("p")
    ws.write("p/GEMINI.md", "- Root rule\n")
    ws.write("p/actual-GEMINI.md", "- Actual rule\n- root rule\n")
    ws.symlink("p/cwd/GEMINI.md", "../actual-GEMINI.md")
    expected = "- Root rule\n\n- Actual rule\n- root rule\n"
    assert ws.ok("show", str(ws.path("p/cwd"))).stdout == expected
    assert ws.ok("show", str(ws.path("p/cwd/GEMINI.md"))).stdout == expected
    for target in ("p/cwd", "p/cwd/GEMINI.md"):
        found = ws.json("check", "--format", "json", str(ws.path(target)))
        assert [(f["path"], f["line"], f["code"]) for f in found] == [
            (str(ws.path("p/cwd/GEMINI.md")), 2, "redundant")], target


@pytest.mark.parametrize(
    "command",
    [["show", "{missing}"], ["list", "--dir", "{missing}"], ["add", "x", "--dir", "{missing}"],
     ["remove", "x", "--dir", "{missing}"], ["check", "{missing}"]],
    ids=["show", "list", "add", "remove", "check"],
)
def test_nonexistent_path_fails_with_one_line(ws: Workspace, command: list[str]) -> None:
    missing = str(ws.path("no/such/place"))
    before = ws.snapshot()
    result = ws.run(*[c.replace("{missing}", missing) for c in command])
    assert result.rc == 1
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1
    assert missing in result.stderr and "no such file or directory" in result.stderr
    assert ws.snapshot() == before


def test_dangling_symlink_as_path_fails(ws: Workspace) -> None:
    ws.symlink("dangling", "nowhere")
    result = ws.run("show", str(ws.path("dangling")))
    assert result.rc == 1 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert "symlink to a missing target" in result.stderr


def test_check_of_a_dangling_memory_file_reports_it_unreadable(ws: Workspace) -> None:
    ws.project("p")
    ws.symlink("p/GEMINI.md", "nowhere.md")
    result = ws.run("check", "--format", "json", str(ws.path("p/GEMINI.md")))
    assert result.rc == 1
    assert [(f["path"], f["code"], f["severity"]) for f in result.json()] == [
        (str(ws.path("p/GEMINI.md")), "unreadable", "error")]


@pytest.mark.parametrize("command", [["show"], ["list"], ["add", "x"], ["remove", "x"], ["check"]],
                         ids=["show", "list", "add", "remove", "check"])
def test_a_deleted_current_directory_fails_with_one_line(ws: Workspace, command: list[str]) -> None:
    gone = ws.mkdir("gone")
    script = f"import os, subprocess, sys; os.chdir({str(gone)!r}); os.rmdir({str(gone)!r}); " \
             f"sys.exit(subprocess.run({[*ws.command, *command]!r}).returncode)"
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=ws.env(),
                          timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "memory-lens: error: the current directory no longer exists; cd to an existing directory or give a PATH"]


def test_a_name_too_long_fails_with_one_line(ws: Workspace) -> None:
    result = ws.run("show", str(ws.path("x" * 300)))
    assert result.rc == 1 and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "File name too long" in result.stderr
    assert "unexpected" not in result.stderr


# The project root ---------------------------------------------------------------------------------


@pytest.mark.parametrize("git_file", [False, True], ids=["git-dir", "git-file"])
def test_project_root_is_the_nearest_git_marker(ws: Workspace, git_file: bool) -> None:
    ws.write_global("Global")
    ws.write("home/GEMINI.md", "Home")  # above the project: never part of its chain
    ws.write("home/outer/GEMINI.md", "Outer")
    ws.project("home/outer")
    ws.project("home/outer/inner", git_file=git_file)
    ws.write("home/outer/inner/GEMINI.md", "Inner")
    ws.write("home/outer/inner/x/GEMINI.md", "X")
    shown = ws.json("show", cwd=ws.path("home/outer/inner/x"))
    assert shown["project_root"] == str(ws.path("home/outer/inner"))
    assert shown["text"] == "Global\n\nInner\n\nX"


def test_project_root_is_the_target_itself(ws: Workspace) -> None:
    ws.project("p", git_file=True)
    ws.write("GEMINI.md", "Above the project")
    ws.write("p/GEMINI.md", "Root")
    shown = ws.json("show", cwd=ws.path("p"))
    assert (shown["project_root"], shown["text"]) == (str(ws.path("p")), "Root")


# The chain without a project root ---------------------------------------------------------------


def test_chain_without_project_is_the_target_alone(ws: Workspace) -> None:
    """Gemini CLI 0.61.0: no `.git` found, so the working directory is its own ceiling."""
    ws.write_global("Global")
    ws.write("home/GEMINI.md", "Home itself")
    ws.write("home/a/GEMINI.md", "A")
    ws.write("home/a/b/GEMINI.md", "B")
    shown = ws.json("show", cwd=ws.path("home/a/b"))
    assert shown["project_root"] is None
    assert shown["text"] == "Global\n\nB"
    assert paths(shown) == [str(ws.global_dir / "GEMINI.md"), str(ws.path("home/a/b/GEMINI.md"))]


def test_home_directory_itself_loads_its_own_file(ws: Workspace) -> None:
    ws.write_global("Global")
    ws.write("home/GEMINI.md", "Home itself")
    assert ws.ok("show", cwd=ws.home).stdout == "Global\n\nHome itself\n"


def test_global_directory_is_never_a_project_directory(ws: Workspace) -> None:
    ws.project("home")
    ws.write_global("Global")
    ws.write("home/GEMINI.md", "Home, above the global directory")
    ws.write("home/.gemini/sub/GEMINI.md", "Sub")
    assert ws.ok("show", cwd=ws.global_dir).stdout == "Global\n"
    assert ws.ok("show", cwd=ws.path("home/.gemini/sub")).stdout == "Global\n\nSub\n"


def test_home_inside_a_project_is_part_of_the_project(ws: Workspace) -> None:
    """With a project root above home, the chain runs from the root: home is an ordinary level."""
    ws.project(".")
    ws.write("GEMINI.md", "Root")
    ws.write("home/GEMINI.md", "Home level")
    ws.write("home/a/GEMINI.md", "A")
    assert ws.ok("show", cwd=ws.path("home/a")).stdout == "Root\n\nHome level\n\nA\n"


# Which files count ----------------------------------------------------------------------------------


def test_missing_files_are_skipped_silently(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/a/b/GEMINI.md", "B")
    result = ws.ok("show", "--filename", "GEMINI.md", "--filename", "AGENTS.md", cwd=ws.path("p/a/b"))
    assert (result.stdout, result.stderr) == ("B\n", "")


def test_same_real_file_never_loads_twice(ws: Workspace) -> None:
    ws.write_global("Global")
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.symlink("p/AGENTS.md", "GEMINI.md")  # a second name for the same file
    ws.symlink("p/sub/GEMINI.md", str(ws.global_dir / "GEMINI.md"))  # the global file again
    shown = ws.json("show", "--filename", "GEMINI.md", "--filename", "AGENTS.md", cwd=ws.path("p/sub"))
    assert shown["text"] == "Global\n\nRoot"
    assert paths(shown) == [str(ws.global_dir / "GEMINI.md"), str(ws.path("p/GEMINI.md"))]


def test_global_dir_inside_the_chain_loads_once(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.write("p/a/GEMINI.md", "A")
    shown = ws.json("show", "--global-dir", str(ws.path("p")), cwd=ws.path("p/a"))
    assert shown["text"] == "Root\n\nA"
    assert [(s["path"], s["scope"]) for s in shown["sources"]] == [
        (str(ws.path("p/GEMINI.md")), "global"), (str(ws.path("p/a/GEMINI.md")), "project")]


def test_bom_is_dropped(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "\ufeffWith BOM\n".encode("utf-8"))
    shown = ws.json("show", cwd=ws.path("p"))
    assert shown["text"] == "With BOM"
    assert shown["sources"][0]["bytes"] == 12  # the file's size, BOM included
    assert ws.ok("show", cwd=ws.path("p")).stdout == "With BOM\n"


def test_contents_are_stripped_and_joined_with_a_blank_line(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "\n\n  # Root\n\n  indented line\n\n\n")
    ws.write("p/a/GEMINI.md", "\t\r\nA  \r\n\r\n")
    shown = ws.json("show", cwd=ws.path("p/a"))
    assert shown["text"] == "# Root\n\n  indented line\n\nA"


def test_text_output_has_at_most_one_trailing_newline(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Root\n\n\n\n")
    assert ws.ok("show", cwd=ws.path("p")).stdout == "Root\n"


def test_empty_file_is_listed_but_adds_nothing(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "  \n\n")
    ws.write("p/a/GEMINI.md", "A")
    shown = ws.json("show", cwd=ws.path("p/a"))
    assert shown["text"] == "A"
    assert shown["sources"][0] == {"path": str(ws.path("p/GEMINI.md")), "scope": "project",
                                   "readable": True, "bytes": 4, "tokens": 0, "reason": "", "imports": []}
