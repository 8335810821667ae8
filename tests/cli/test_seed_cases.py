"""Every test case of seed 000 (Steps 1.1, 1.2, 1.3, 2.1, 3.1, 5.1, 5.2, 6.1), through the CLI."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace


def sources(ws: Workspace, *args: str, **kwargs) -> list[str]:
    return [s["path"] for s in ws.json("show", *args, **kwargs)["sources"]]


# Step 1.1: read the global GEMINI.md ------------------------------------------------------


def test_1_1_global_file_is_read(ws: Workspace) -> None:
    ws.write_global("Global instruction.")
    result = ws.ok("show")
    assert result.stdout == "Global instruction.\n"
    assert result.stderr == ""


def assert_no_memory(result) -> None:
    """An empty result: nothing on stdout, no warning or error, only the hint `show` gives when
    there is no memory at all (issue 12)."""
    assert result.stdout == ""
    assert result.stderr.startswith("memory-lens: no memory for ") and result.stderr.count("\n") == 1
    assert "warning" not in result.stderr and "error" not in result.stderr


def test_1_1_no_global_file_gives_empty_output(ws: Workspace) -> None:
    ws.mkdir("home/.gemini")
    result = ws.ok("show")
    assert_no_memory(result)
    assert ws.json("show") == {"agent": "gemini", "text": "", "project_root": None, "target_dir": str(ws.home),
                               "tokens": 0, "sources": [], "warnings": []}


def test_1_1_no_global_directory_gives_empty_output(ws: Workspace) -> None:
    assert not ws.global_dir.exists()
    result = ws.ok("show")
    assert_no_memory(result)


# Step 1.2: the files of the hierarchy, general to specific ----------------------------------


@pytest.fixture
def mock_project(ws: Workspace) -> Workspace:
    ws.write_global("Global")
    ws.project("mock-project")
    ws.write("mock-project/GEMINI.md", "Project")
    ws.write("mock-project/src/feature/GEMINI.md", "Feature")
    ws.write("mock-project/src/feature/file.ts", "export {}\n")
    return ws


def test_1_2_chain_from_global_to_feature(mock_project: Workspace) -> None:
    ws = mock_project
    expected = [str(ws.global_dir / "GEMINI.md"), str(ws.path("mock-project/GEMINI.md")),
                str(ws.path("mock-project/src/feature/GEMINI.md"))]
    assert sources(ws, cwd=ws.path("mock-project/src/feature")) == expected
    # The same chain for the directory of a file given as PATH.
    assert sources(ws, str(ws.path("mock-project/src/feature/file.ts"))) == expected
    shown = ws.json("show", cwd=ws.path("mock-project/src/feature"))
    assert shown["project_root"] == str(ws.path("mock-project"))
    assert shown["text"] == "Global\n\nProject\n\nFeature"


def test_1_2_outside_any_repository(ws: Workspace) -> None:
    ws.write_global("Global")
    ws.write("home/plain/GEMINI.md", "Plain")
    ws.write("home/plain/deeper/GEMINI.md", "Deeper")
    shown = ws.json("show", cwd=ws.path("home/plain/deeper"))
    assert shown["project_root"] is None
    # Seed 000 has the search go up to the home directory; Gemini CLI 0.61.0, whose loading
    # Memory Lens shows, reads the working directory alone (docs/agents.md).
    assert [s["path"] for s in shown["sources"]] == [
        str(ws.global_dir / "GEMINI.md"), str(ws.path("home/plain/deeper/GEMINI.md"))]
    assert shown["text"] == "Global\n\nDeeper"


def test_1_2_missing_files_at_various_levels(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/a/GEMINI.md", "A")
    ws.write("p/a/b/c/GEMINI.md", "C")
    ws.mkdir("p/a/b/c/d")
    # No global file, nothing at p, p/a/b or p/a/b/c/d.
    assert sources(ws, cwd=ws.path("p/a/b/c/d")) == [str(ws.path("p/a/GEMINI.md")),
                                                     str(ws.path("p/a/b/c/GEMINI.md"))]


# Step 1.3: reading several files, some missing or unreadable ---------------------------------


def test_1_3_missing_and_unreadable_files_give_nothing(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Content of file1")
    ws.mkdir("p/nonexistent")  # no GEMINI.md here
    ws.symlink("p/nonexistent/unreadable/GEMINI.md", "gone.md")  # cannot be read at all
    # (A file with bad bytes is not unreadable: the agent loads it, see tests/cli/test_encoding.py.)
    result = ws.run("show", "--format", "json", cwd=ws.path("p/nonexistent/unreadable"))
    assert result.rc == 0, result
    shown = result.json()
    assert shown["text"] == "Content of file1"
    assert [(s["path"], s["readable"]) for s in shown["sources"]] == [
        (str(ws.path("p/GEMINI.md")), True),
        (str(ws.path("p/nonexistent/unreadable/GEMINI.md")), False)]
    (warning,) = shown["warnings"]
    assert "unreadable/GEMINI.md" in warning and result.stderr == ""


# Step 2.1: concatenation ------------------------------------------------------------------


@pytest.mark.parametrize(
    "contents, expected",
    [
        (["Global instruction.", "Project instruction.", None, "Feature instruction."],
         "Global instruction.\n\nProject instruction.\n\nFeature instruction."),
        ([None, "Only instruction.", None], "Only instruction."),
        (["First.", "Second."], "First.\n\nSecond."),
        ([None, None], ""),
        (["Instruction1", None, "Instruction3"], "Instruction1\n\nInstruction3"),
    ],
)
def test_2_1_concatenation(ws: Workspace, contents: list[str | None], expected: str) -> None:
    """Each content is a level of the chain (global, then deeper and deeper); None: no file."""
    ws.project("p")
    levels = ["home/.gemini"] + ["p" + "/d" * i for i in range(len(contents) - 1)]
    for level, content in zip(levels, contents):
        ws.mkdir(level)
        if content is not None:
            ws.write(f"{level}/GEMINI.md", content)
    result = ws.ok("show", cwd=ws.path(levels[-1]))
    assert result.stdout == (expected + "\n" if expected else "")


def test_2_1_empty_files_add_no_blank_lines(ws: Workspace) -> None:
    ws.project("p")
    ws.write_global("G")
    ws.write("p/GEMINI.md", "")
    ws.write("p/d/GEMINI.md", " \n\t\n")
    ws.write("p/d/e/GEMINI.md", "E")
    assert ws.ok("show", cwd=ws.path("p/d/e")).stdout == "G\n\nE\n"


# Step 3.1: the whole load -------------------------------------------------------------------


@pytest.fixture
def test_project(ws: Workspace) -> Workspace:
    ws.write_global("Global")
    ws.project("test-project")
    ws.write("test-project/GEMINI.md", "Project Root")
    ws.write("test-project/src/GEMINI.md", "Source Level")
    ws.write("test-project/src/moduleA/GEMINI.md", "Module A")
    ws.mkdir("test-project/other")
    return ws


def test_3_1_module_a(test_project: Workspace) -> None:
    result = test_project.ok("show", cwd=test_project.path("test-project/src/moduleA"))
    assert result.stdout == "Global\n\nProject Root\n\nSource Level\n\nModule A\n"


def test_3_1_other_directory_without_its_own_file(test_project: Workspace) -> None:
    result = test_project.ok("show", cwd=test_project.path("test-project/other"))
    assert result.stdout == "Global\n\nProject Root\n"


def test_3_1_path_argument_equals_cwd(test_project: Workspace) -> None:
    ws = test_project
    by_arg = ws.ok("show", str(ws.path("test-project/src/moduleA")))
    assert by_arg.stdout == "Global\n\nProject Root\n\nSource Level\n\nModule A\n"


def test_3_1_outside_any_project_only_global(test_project: Workspace) -> None:
    ws = test_project
    ws.mkdir("home/scratch")
    assert ws.ok("show", cwd=ws.path("home/scratch")).stdout == "Global\n"


def test_3_1_outside_any_project_without_global_is_empty(ws: Workspace) -> None:
    ws.mkdir("home/scratch")
    result = ws.ok("show", cwd=ws.path("home/scratch"))
    assert_no_memory(result)


# Step 5.1: an unreadable file in the hierarchy -----------------------------------------------


def test_5_1_other_files_still_load(test_project: Workspace) -> None:
    ws = test_project
    ws.write("test-project/src/GEMINI.md", b"Source \x00 Level")  # a NUL byte: loaded as the agent does
    result = ws.run("show", cwd=ws.path("test-project/src/moduleA"))
    assert result.rc == 0
    assert result.stdout == "Global\n\nProject Root\n\nSource \x00 Level\n\nModule A\n"
    assert "warning" in result.stderr and str(ws.path("test-project/src/GEMINI.md")) in result.stderr


# Step 5.2: symbolic links -----------------------------------------------------------------------


def test_5_2_symlinked_memory_file_is_followed(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/actual-GEMINI.md", "Actual content")
    ws.mkdir("p/cwd")
    ws.symlink("p/cwd/GEMINI.md", "../actual-GEMINI.md")
    shown = ws.json("show", cwd=ws.path("p/cwd"))
    assert shown["text"] == "Actual content"
    assert shown["sources"][0]["path"] == str(ws.path("p/cwd/GEMINI.md"))  # the path as found
    assert shown["sources"][0]["bytes"] == len("Actual content")


def test_5_2_symlinked_directory_in_the_path(ws: Workspace) -> None:
    """A link to a directory is resolved: the chain is that of the real directory."""
    ws.write_global("Global")
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.write("p/src/feature/GEMINI.md", "Feature")
    ws.symlink("p/shortcut", "src/feature")
    ws.write("elsewhere/real/GEMINI.md", "Real")  # no project: the chain goes upward
    ws.symlink("home/linked", str(ws.path("elsewhere/real")))

    inside = ws.json("show", str(ws.path("p/shortcut")))
    assert inside["text"] == "Global\n\nRoot\n\nFeature"
    assert inside["project_root"] == str(ws.path("p"))
    assert inside["sources"][-1]["path"] == str(ws.path("p/src/feature/GEMINI.md"))
    # As a working directory too.
    assert ws.ok("show", cwd=ws.path("p/shortcut")).stdout == "Global\n\nRoot\n\nFeature\n"

    outside = ws.json("show", str(ws.path("home/linked")))
    assert outside["project_root"] is None
    mine = [s["path"] for s in outside["sources"] if s["path"].startswith(str(ws.root))]
    assert mine == [str(ws.global_dir / "GEMINI.md"), str(ws.path("elsewhere/real/GEMINI.md"))]


def test_5_2_file_path_through_a_symlinked_directory(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.write("p/src/GEMINI.md", "Src")
    ws.write("p/src/code.py", "")
    ws.symlink("p/alias", "src")
    assert ws.ok("show", str(ws.path("p/alias/code.py"))).stdout == "Root\n\nSrc\n"


# Step 6.1: the --debug trace ---------------------------------------------------------------------


def test_6_1_debug_trace_on_stderr_only(test_project: Workspace) -> None:
    ws = test_project
    cwd = ws.path("test-project/src/moduleA")
    plain = ws.ok("show", cwd=cwd)
    debug = ws.ok("show", "--debug", cwd=cwd)
    assert debug.stdout == plain.stdout  # nothing extra on stdout
    err = debug.stderr
    assert str(cwd) in err  # the directory memory is resolved for
    assert str(ws.path("test-project")) in err and "project root" in err
    for found in ("home/.gemini/GEMINI.md", "test-project/GEMINI.md", "test-project/src/GEMINI.md",
                  "test-project/src/moduleA/GEMINI.md"):
        line = next(ln for ln in err.splitlines() if str(ws.path(found)) + ":" in ln)
        assert "loaded" in line
    assert "Module A" in err  # the merged text (or a snippet of it)
    assert all(ln.startswith("memory-lens: ") for ln in err.splitlines())


def test_6_1_debug_shows_missing_and_unusable_files(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Root")
    ws.mkdir("p/sub/GEMINI.md")  # a directory: unusable
    result = ws.ok("show", "--debug", "--format", "json", cwd=ws.path("p/sub"))
    lines = result.stderr.splitlines()
    missing = [ln for ln in lines if str(ws.global_dir / "GEMINI.md") in ln]
    assert missing and "not found" in missing[0]
    unusable = [ln for ln in lines if str(ws.path("p/sub/GEMINI.md")) in ln]
    assert any("directory" in ln for ln in unusable)
    assert result.json()["text"] == "Root"  # stdout is still only the JSON document


def test_6_1_missing_files_are_silent_without_debug(ws: Workspace) -> None:
    ws.project("p")
    ws.mkdir("p/a/b")
    result = ws.ok("show", cwd=ws.path("p/a/b"))
    assert_no_memory(result)
    assert os.listdir(ws.path("p/a/b")) == []
