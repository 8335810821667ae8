"""A command line that guides: options before or after the command, `show` saying when there is
no memory, a help text for every argument, `check` over a whole project, `remove` taking the
heading it leaves bare, and messages that read as docs/cli.md shows them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from memory_lens.core.scan import find_memory_files

if TYPE_CHECKING:
    from sandbox import Workspace

DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


# Options before or after the command ---------------------------------------------------------


@pytest.fixture
def two_globals(ws: Workspace) -> Workspace:
    ws.write_global("- from the default global dir\n")
    ws.write("g/GEMINI.md", "- from g\n")
    ws.write("g/AGENTS.md", "- agents in g\n")
    return ws


@pytest.mark.parametrize("args", [
    ("--global-dir", "{g}", "show"),
    ("show", "--global-dir", "{g}"),
    ("--global-dir={g}", "show"),
])
def test_global_dir_before_or_after_the_command(two_globals: Workspace, args: tuple[str, ...]) -> None:
    ws = two_globals
    result = ws.ok(*(a.format(g=ws.path("g")) for a in args))
    assert result.stdout == "- from g\n"


def test_every_common_option_works_before_the_command(two_globals: Workspace) -> None:
    ws = two_globals
    g = str(ws.path("g"))
    before = ws.ok("--filename", "AGENTS.md", "--filename", "GEMINI.md", "--global-dir", g, "--debug", "show")
    after = ws.ok("show", "--filename", "AGENTS.md", "--filename", "GEMINI.md", "--global-dir", g, "--debug")
    assert before.stdout == after.stdout == "- agents in g\n\n- from g\n"
    assert before.stderr == after.stderr and "debug: global" in before.stderr
    assert ws.json("--global-dir", g, "list") == ws.json("list", "--global-dir", g)
    assert ws.json("--global-dir", g, "check", str(ws.path("g"))) == []


def test_the_option_after_the_command_wins(two_globals: Workspace) -> None:
    ws = two_globals
    result = ws.ok("--global-dir", str(ws.path("g")), "show", "--global-dir", str(ws.global_dir))
    assert result.stdout == "- from the default global dir\n"


def test_options_before_the_command_reach_the_writing_commands(two_globals: Workspace) -> None:
    ws = two_globals
    ws.ok("--global-dir", str(ws.path("g")), "add", "--scope", "global", "Added before")
    assert ws.read("g/GEMINI.md") == "- from g\n\n## Gemini Added Memories\n- Added before\n"
    ws.ok("--global-dir", str(ws.path("g")), "remove", "Added before")
    assert ws.read("g/GEMINI.md") == "- from g\n"
    assert ws.read("home/.gemini/GEMINI.md") == "- from the default global dir\n"


def test_an_option_without_a_command_is_a_usage_error_about_the_command(ws: Workspace) -> None:
    result = ws.run("--global-dir", str(ws.path("g")))
    assert result.rc == 2 and result.stdout == ""
    assert "required: COMMAND" in result.stderr and "invalid choice" not in result.stderr
    assert len(result.stderr.splitlines()) == 1


# show on an empty chain -------------------------------------------------------------------------


def test_show_with_no_memory_says_so_on_stderr_only(ws: Workspace) -> None:
    ws.project("p")
    for fmt in ("text", "annotated"):
        result = ws.run("show", "--format", fmt, cwd=ws.path("p"))
        assert (result.rc, result.stdout) == (0, "")
        assert result.stderr == (
            f"memory-lens: no memory for {ws.path('p')}: no GEMINI.md found in the global directory "
            f"{ws.global_dir} nor in the directories an agent loads for it (--debug lists them); "
            'save a first entry with: memory-lens add "TEXT"\n')
    as_json = ws.run("show", "--format", "json", cwd=ws.path("p"))
    assert as_json.rc == 0 and as_json.stderr == "" and as_json.json()["sources"] == []


def test_show_names_every_filename_looked_for(ws: Workspace) -> None:
    result = ws.ok("show", "--filename", "AGENTS.md", "--filename", "GEMINI.md")
    assert "no AGENTS.md or GEMINI.md found" in result.stderr


def test_show_with_only_empty_or_skipped_files_says_why(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "\n\n")
    ws.mkdir("home/.gemini")
    ws.symlink("home/.gemini/GEMINI.md", "nowhere.md")  # dangling: skipped with a warning
    result = ws.run("show", cwd=ws.path("p"))
    assert (result.rc, result.stdout) == (0, "")
    assert result.stderr.splitlines()[-1] == (
        f"memory-lens: no memory for {ws.path('p')}: its 2 memory file(s) are empty or were skipped "
        "(see the warnings above, or --debug)")


def test_show_with_memory_prints_no_hint(ws: Workspace) -> None:
    ws.write_global("- a\n")
    result = ws.ok("show")
    assert (result.stdout, result.stderr) == ("- a\n", "")


# Help for every argument ------------------------------------------------------------------------

_ITEM = re.compile(r"^  (\S.*?)(?:\s{2,}(\S.*))?$")
_SUBCOMMAND = re.compile(r"^    ([a-z][a-z-]*)\s{2,}\S")


def _undescribed(text: str) -> tuple[list[str], list[str]]:
    """The arguments of a --help text that have no description, and the subcommands it lists."""
    lines, missing, subcommands, section = text.splitlines(), [], [], False
    for i, line in enumerate(lines):
        if line and not line.startswith(" "):
            section = line.endswith(":") and not line.startswith("usage:")
            continue
        if not section:
            continue
        sub = _SUBCOMMAND.match(line)
        if sub:
            subcommands.append(sub.group(1))
            continue
        item = _ITEM.match(line)
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if item and not item.group(2) and not (following.startswith("   ") and following.strip()):
            missing.append(item.group(1))
    return missing, subcommands


def test_every_argument_and_option_of_every_command_has_help(ws: Workspace) -> None:
    pending: list[tuple[str, ...]] = [()]
    seen: dict[tuple[str, ...], list[str]] = {}
    while pending:
        command = pending.pop()
        result = ws.ok(*command, "--help")
        missing, subcommands = _undescribed(result.stdout)
        seen[command] = missing
        pending += [(*command, s) for s in subcommands]
    assert {("show",), ("add",), ("list",), ("remove",), ("check",), ("notes", "search")} <= set(seen)
    assert {c: m for c, m in seen.items() if m} == {}


def test_the_help_check_catches_an_argument_without_help() -> None:
    text = ("usage: x\n\npositional arguments:\n  TEXT\n  PATH        described\n\noptions:\n"
            "  --scope {a,b}\n  --format {text,json,annotated}\n                        described below\n")
    assert _undescribed(text) == (["TEXT", "--scope {a,b}"], [])


def test_help_describes_the_points_users_asked_about(ws: Workspace) -> None:
    assert "the entry to save" in ws.ok("add", "--help").stdout
    check = " ".join(ws.ok("check", "--help").stdout.split())
    assert "every memory file under it" in check and "json: an array of findings" in check
    listing = " ".join(ws.ok("list", "--help").stdout.split())
    assert "all: both (default)" in listing and "json: an array of entries" in listing
    top = ws.ok("--help").stdout
    assert "--global-dir DIR" in top and "before or after the command" in " ".join(top.split())


# check over a project ----------------------------------------------------------------------------


@pytest.fixture
def project_tree(ws: Workspace) -> Workspace:
    ws.write_global("- Use pnpm\n")
    ws.project("p")
    ws.write("p/GEMINI.md", "# Project\n- Tabs\n")
    ws.write("p/src/GEMINI.md", "- Own\n- own.\n")  # a duplicate, two levels below the root
    ws.write("p/src/deep/er/GEMINI.md", "- use PNPM\n")  # redundant with the global file
    ws.write("p/.gitignore", "generated/\n")
    ws.write("p/generated/GEMINI.md", "- x\n- x\n")  # ignored by git: not a memory file agents load
    ws.write("p/.geminiignore", "private/\n")
    ws.write("p/private/GEMINI.md", "- y\n- y\n")  # ignored by .geminiignore
    ws.mkdir("p/.git/info")
    ws.write("p/.git/info/exclude", "scratch/\n")
    ws.write("p/scratch/GEMINI.md", "- z\n- z\n")
    ws.write("p/src/notes.md", "- Own\n- Own\n")  # not named like a memory file
    return ws


def _found(result) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["code"]) for f in result.json()]


def test_check_at_the_project_root_checks_every_memory_file_under_it(project_tree: Workspace) -> None:
    ws = project_tree
    result = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert result.rc == 0, result
    assert _found(result) == [
        (str(ws.path("p/src/GEMINI.md")), 2, "duplicate"),
        (str(ws.path("p/src/deep/er/GEMINI.md")), 1, "redundant"),
    ]


def test_check_with_no_path_checks_the_whole_project_from_any_subdirectory(project_tree: Workspace) -> None:
    ws = project_tree
    from_root = ws.run("check", "--format", "json", cwd=ws.path("p"))
    for cwd in ("p/src/deep", "p/generated"):
        assert ws.run("check", "--format", "json", cwd=ws.path(cwd)).json() == from_root.json()
    text = ws.run("check", cwd=ws.path("p/src/deep"))
    assert text.rc == 0 and len(text.stdout.splitlines()) == 2
    assert text.stderr == "memory-lens: checked 4 memory file(s): 2 finding(s): 0 error(s), 1 warning(s)\n"


def test_check_dir_checks_its_chain_and_the_files_under_it(project_tree: Workspace) -> None:
    ws = project_tree
    sub = ws.run("check", "--format", "json", str(ws.path("p/src/deep")))
    # p/src/GEMINI.md is in the chain of p/src/deep; p/src/deep/er/GEMINI.md is under it.
    assert _found(sub) == [(str(ws.path("p/src/GEMINI.md")), 2, "duplicate"),
                           (str(ws.path("p/src/deep/er/GEMINI.md")), 1, "redundant")]
    ws.write("p/GEMINI.md", "# Project\n- Tabs\n- tabs\n")
    sub = ws.run("check", "--format", "json", str(ws.path("p/src/deep")))
    assert _found(sub)[0] == (str(ws.path("p/GEMINI.md")), 3, "duplicate")
    summary = ws.run("check", str(ws.path("p/src/deep"))).stderr
    assert summary == "memory-lens: checked 4 memory file(s): 3 finding(s): 0 error(s), 2 warning(s)\n"
    below = ws.run("check", "--format", "json", str(ws.path("p/src/deep/er")))
    assert _found(below) == _found(sub)  # the same chain, nothing more below


def test_check_finds_the_files_the_language_server_scan_finds(project_tree: Workspace) -> None:
    ws = project_tree
    ws.write("p/src/GEMINI.md", b"\xc3\x28 not UTF-8\n- Own\n")
    scanned = find_memory_files(ws.path("p"), ["GEMINI.md"])
    assert [p.relative_to(ws.path("p")).as_posix() for p in scanned] == [
        "GEMINI.md", "src/GEMINI.md", "src/deep/er/GEMINI.md"]
    result = ws.run("check", "--format", "json", cwd=ws.path("p"))
    assert {f["path"] for f in result.json()} == {str(ws.path("p/src/GEMINI.md")),
                                                 str(ws.path("p/src/deep/er/GEMINI.md"))}
    assert "checked 4 memory file(s)" in ws.run("check", cwd=ws.path("p")).stderr  # the global file too


def test_check_dir_exit_status_follows_the_worst_finding_anywhere_below(project_tree: Workspace) -> None:
    ws = project_tree
    ws.symlink("p/src/deep/GEMINI.md", "nowhere.md")  # dangling: unreadable, an error
    ws.mkdir("p/other/GEMINI.md")  # a directory of that name: an error too
    result = ws.run("check", cwd=ws.path("p"))
    assert result.rc == 1
    assert f"{ws.path('p/src/deep/GEMINI.md')}:1:1: error: " in result.stdout
    assert f"{ws.path('p/other/GEMINI.md')}:1:1: error: " in result.stdout
    assert ws.run("check", "--strict", str(ws.path("p/src/GEMINI.md"))).rc == 1  # a duplicate: a warning
    assert ws.run("check", str(ws.path("p/src/GEMINI.md"))).rc == 0


def test_check_file_still_checks_only_that_file(project_tree: Workspace) -> None:
    ws = project_tree
    result = ws.run("check", "--format", "json", str(ws.path("p/GEMINI.md")))
    assert result.rc == 0 and result.json() == []
    assert ws.run("check", str(ws.path("p/GEMINI.md"))).stderr == (
        "memory-lens: checked 1 memory file(s): no problems found\n")


def test_check_outside_a_project_checks_the_cwd_chain_and_says_how_to_check_a_tree(ws: Workspace) -> None:
    ws.write("home/work/GEMINI.md", "- a\n- a\n")
    ws.write("home/work/below/GEMINI.md", "- b\n- b\n")
    result = ws.run("check", "--format", "json", cwd=ws.path("home/work"))
    assert _found(result) == [(str(ws.path("home/work/GEMINI.md")), 2, "duplicate")]
    text = ws.run("check", cwd=ws.path("home/work"))
    assert text.stderr.splitlines() == [
        "memory-lens: not inside a project (no .git found above the current directory): checked the files the "
        "current directory loads; to check every memory file under a directory: memory-lens check DIR",
        "memory-lens: checked 1 memory file(s): 1 finding(s): 0 error(s), 1 warning(s)"]
    tree = ws.run("check", "--format", "json", str(ws.path("home/work")))
    assert len(tree.json()) == 2


def test_check_with_nothing_to_check_says_so(ws: Workspace) -> None:
    ws.project("p")
    result = ws.run("check", cwd=ws.path("p"))
    assert (result.rc, result.stdout) == (0, "")
    assert result.stderr == "memory-lens: no memory files found: no problems found\n"


# remove takes the heading it leaves bare -----------------------------------------------------------


@pytest.mark.parametrize("original", [
    "# Shop\nA Django shop.\n",
    "# Shop\r\nA Django shop.\r\n",
    "",
    "# Shop\nno final newline",
])
def test_adding_then_removing_the_only_entry_gives_the_file_back(ws: Workspace, original: str) -> None:
    ws.project("p")
    if original:
        ws.write("p/GEMINI.md", original)
    ws.ok("add", "Use pnpm, not npm", cwd=ws.path("p"))
    assert "## Gemini Added Memories" in ws.read("p/GEMINI.md")
    ws.ok("remove", "Use pnpm, not npm", cwd=ws.path("p"))
    after = ws.read("p/GEMINI.md")
    assert "Gemini Added Memories" not in after
    assert after == (original if not original or original.endswith("\n") else original + "\n")
    shown = ws.run("show", cwd=ws.path("p"))
    assert "Gemini Added Memories" not in shown.stdout


def test_the_heading_stays_while_anything_else_is_under_it(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "# P\n\n## Gemini Added Memories\n- one\n- two\n\n## Later\n- three\n")
    ws.ok("remove", "one", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == "# P\n\n## Gemini Added Memories\n- two\n\n## Later\n- three\n"
    ws.ok("remove", "two", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == "# P\n\n## Later\n- three\n"
    ws.write("p/GEMINI.md", "## Gemini Added Memories\nA paragraph someone wrote.\n- one\n")
    ws.ok("remove", "one", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == "## Gemini Added Memories\nA paragraph someone wrote.\n"
    ws.write("p/GEMINI.md", "## Gemini Added Memories\n- one\n### Details\n")
    ws.ok("remove", "one", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == "## Gemini Added Memories\n### Details\n"


def test_only_the_section_holding_the_entry_loses_its_heading(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- loose\n\n## Gemini Added Memories\n- kept\n\n## Notes\n- one\n")
    ws.ok("remove", "loose", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == "## Gemini Added Memories\n- kept\n\n## Notes\n- one\n"
    ws.ok("remove", "one", cwd=ws.path("p"))  # a section of its own name: not Memory Lens's heading
    assert ws.read("p/GEMINI.md") == "## Gemini Added Memories\n- kept\n\n## Notes\n"


# docs/cli.md and the messages agree ---------------------------------------------------------------


def _documented(prefix: str) -> str:
    """The one line of docs/cli.md (inside a code block or a code span) that starts with PREFIX."""
    found = [line.strip().strip("`") for line in DOCS.read_text(encoding="utf-8").splitlines()
             if line.strip().strip("`").startswith(prefix)]
    assert len(found) == 1, (prefix, found)
    return found[0]


def test_the_documented_no_project_error_is_what_add_prints(ws: Workspace) -> None:
    ws.mkdir("x")
    result = ws.run("add", "--scope", "project", "anything", cwd=ws.path("x"))
    assert result.rc == 1
    doc = _documented("memory-lens: error: /tmp/x is not inside a project")
    assert result.stderr == doc.replace("/tmp/x", str(ws.path("x"))) + "\n"


def test_the_documented_messages_of_add_remove_and_show_are_what_the_cli_prints(ws: Workspace) -> None:
    ws.project("shop")
    ws.write("shop/GEMINI.md", "# Shop\nA Django shop.\n")
    here = {"cwd": ws.path("shop")}
    home = str(ws.path("shop"))

    def same(result, doc: str) -> None:
        assert result.stderr == doc.replace("/home/me/shop", home) + "\n"

    same(ws.run("add", "Use pnpm, not npm", **here), _documented("memory-lens: saved to project memory /home"))
    same(ws.run("add", "Use pnpm, not npm", **here), _documented("memory-lens: already in project memory /home"))
    same(ws.run("remove", "nope", **here), _documented("memory-lens: error: no global or project memory entry"))
    same(ws.run("remove", "Use pnpm, not npm", **here), _documented("memory-lens: removed from project memory"))
    same(ws.run("add", "#", **here), _documented("memory-lens: error: nothing to save"))
    nowhere = ws.run("show", "/nowhere")
    assert nowhere.stderr == _documented("memory-lens: error: /nowhere: no such file") + "\n"
    ws.mkdir("empty/.git")
    empty = ws.run("show", cwd=ws.path("empty"))
    doc = _documented("memory-lens: no memory for /home/me/shop:")
    assert empty.stderr == doc.replace("/home/me/shop", str(ws.path("empty"))).replace(
        "/home/me/.gemini", str(ws.global_dir)) + "\n"
