"""`memory-lens add`: scope, target file, TEXT cleaning, placement, line endings, duplicates."""

from __future__ import annotations

import json

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace

HEADER = "## Gemini Added Memories"


@pytest.fixture
def proj(ws: Workspace) -> Workspace:
    ws.project("p")
    ws.mkdir("p/src/deep")
    return ws


def add(ws: Workspace, *args: str, cwd: str = "p") -> None:
    result = ws.run("add", *args, cwd=ws.path(cwd))
    assert result.rc == 0, result
    assert result.stdout == ""


# Scope and target file ------------------------------------------------------------------------------


def test_default_scope_is_the_project_root_file(proj: Workspace) -> None:
    ws = proj
    result = ws.ok("add", "Use pnpm", cwd=ws.path("p/src/deep"))
    assert result.stdout == ""
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- Use pnpm\n"
    assert "project" in result.stderr and str(ws.path("p/GEMINI.md")) in result.stderr
    assert not ws.path("p/src/deep/GEMINI.md").exists()
    assert not ws.global_dir.exists()


def test_default_scope_outside_a_project_is_global_created_with_parents(ws: Workspace) -> None:
    ws.mkdir("home/scratch")
    assert not ws.global_dir.exists()
    result = ws.ok("add", "My name is Alice", cwd=ws.path("home/scratch"))
    assert ws.read("home/.gemini/GEMINI.md") == f"{HEADER}\n- My name is Alice\n"
    assert "global" in result.stderr
    assert not ws.path("home/scratch/GEMINI.md").exists()


def test_dir_option_picks_the_project(proj: Workspace) -> None:
    ws = proj
    ws.project("q")
    ws.write("q/file.txt", "")
    ws.ok("add", "for q", "--dir", str(ws.path("q/file.txt")), cwd=ws.path("p"))
    assert ws.read("q/GEMINI.md") == f"{HEADER}\n- for q\n"
    assert not ws.path("p/GEMINI.md").exists()


def test_scope_global_inside_a_project(proj: Workspace) -> None:
    ws = proj
    ws.ok("add", "everywhere", "--scope", "global", cwd=ws.path("p/src"))
    assert ws.read("home/.gemini/GEMINI.md") == f"{HEADER}\n- everywhere\n"
    assert not ws.path("p/GEMINI.md").exists()


def test_scope_project_without_a_project_fails_and_writes_nothing(ws: Workspace) -> None:
    ws.mkdir("home/scratch")
    before = ws.snapshot()
    result = ws.run("add", "x", "--scope", "project", cwd=ws.path("home/scratch"))
    assert result.rc == 1
    assert result.stdout == ""
    assert "project" in result.stderr and len(result.stderr.splitlines()) == 1
    assert ws.snapshot() == before


def test_project_file_with_parents_missing_global_dir(proj: Workspace) -> None:
    ws = proj
    ws.ok("add", "deep global", "--scope", "global", "--global-dir", str(ws.path("a/b/c")), cwd=ws.path("p"))
    assert ws.read("a/b/c/GEMINI.md") == f"{HEADER}\n- deep global\n"


def test_symlinked_memory_file_is_written_through(proj: Workspace) -> None:
    ws = proj
    ws.write("shared/team.md", "# Team rules\n")
    ws.symlink("p/GEMINI.md", "../shared/team.md")  # outside the project: the user opts in
    ws.ok("add", "linked entry", "--follow-outside-links", cwd=ws.path("p"))
    assert os.path.islink(ws.path("p/GEMINI.md"))
    assert os.readlink(ws.path("p/GEMINI.md")) == "../shared/team.md"
    assert ws.read("shared/team.md") == f"# Team rules\n\n{HEADER}\n- linked entry\n"


def test_symlinked_global_file_is_written_through(ws: Workspace) -> None:
    ws.write("dotfiles/gemini.md", "")
    ws.symlink("home/.gemini/GEMINI.md", str(ws.path("dotfiles/gemini.md")))
    ws.ok("add", "dotfile entry", "--scope", "global", env={"MEMORY_LENS_FOLLOW_OUTSIDE_LINKS": "1"})
    assert os.path.islink(ws.global_dir / "GEMINI.md")
    assert ws.read("dotfiles/gemini.md") == f"{HEADER}\n- dotfile entry\n"


def test_file_mode_is_kept(proj: Workspace) -> None:
    ws = proj
    p = ws.write("p/GEMINI.md", "# Rules\n")
    p.chmod(0o600)
    add(ws, "private")
    assert (p.stat().st_mode & 0o777) == 0o600


# TEXT cleaning ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, saved",
    [
        ("   padded\t ", "padded"),
        ("# - * + Use pnpm", "Use pnpm"),
        ("--  Use pnpm", "Use pnpm"),
        ("-x", "-x"),  # a dash without whitespace is kept
        ("*bold* words", "*bold* words"),
    ],
)
def test_text_is_cleaned(proj: Workspace, text: str, saved: str) -> None:
    ws = proj
    add(ws, "--", text)
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- {saved}\n"


@pytest.mark.parametrize("text", ["", "\n\t\n", "# - * +"])
def test_empty_text_fails_and_writes_nothing(proj: Workspace, text: str) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "# Rules\n")
    before = ws.snapshot()
    result = ws.run("add", "--", text, cwd=ws.path("p"))
    assert result.rc == 1, result
    assert result.stdout == "" and "empty" in result.stderr
    assert ws.snapshot() == before


def test_empty_text_creates_no_file(proj: Workspace) -> None:
    ws = proj
    assert ws.run("add", "#", cwd=ws.path("p")).rc == 1
    assert not ws.path("p/GEMINI.md").exists()


def test_double_dash_ends_options(proj: Workspace) -> None:
    ws = proj
    add(ws, "--", "- starts with a dash")
    add(ws, "--", "--scope")
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- starts with a dash\n- --scope\n"


def test_text_starting_with_dash_needs_double_dash(proj: Workspace) -> None:
    ws = proj
    result = ws.run("add", "-x", cwd=ws.path("p"))
    assert result.rc == 2 and result.stdout == ""
    assert not ws.path("p/GEMINI.md").exists()


def test_bare_marker_runs_are_empty(proj: Workspace) -> None:
    """A marker run that ends the text is an empty list item: `--` is empty, not `- --` (which
    would be a thematic break that list, remove and the duplicate check cannot see)."""
    ws = proj
    ws.write("p/GEMINI.md", f"{HEADER}\n- a\n")
    before = ws.snapshot()
    for text in ("--", "# - *"):
        result = ws.run("add", "--", text, cwd=ws.path("p"))
        assert result.rc == 1, result
        assert result.stdout == "" and "empty" in result.stderr
    assert ws.snapshot() == before
    add(ws, "--", "--x")
    assert ws.json("list", cwd=ws.path("p"))[-1]["text"] == "--x"


# Placement -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "before, after",
    [
        pytest.param("", f"{HEADER}\n- NEW\n", id="empty-file"),
        pytest.param("# Rules\nUse tabs.\n", f"# Rules\nUse tabs.\n\n{HEADER}\n- NEW\n", id="no-header"),
        pytest.param("# Rules\nUse tabs.", f"# Rules\nUse tabs.\n\n{HEADER}\n- NEW\n",
                     id="no-final-newline"),
        pytest.param(f"# T\n{HEADER}\n- a\n\n## Other\n- o\n",
                     f"# T\n{HEADER}\n- a\n- NEW\n\n## Other\n- o\n", id="ends-at-level-2"),
        pytest.param(f"{HEADER}\n- a\n# Top\n- t\n", f"{HEADER}\n- a\n- NEW\n# Top\n- t\n", id="ends-at-level-1"),
        pytest.param(f"{HEADER}\n- a\n### Sub\n- s\n\n## Other\n",
                     f"{HEADER}\n- a\n### Sub\n- s\n- NEW\n\n## Other\n", id="level-3-stays-inside"),
        pytest.param(f"{HEADER}\n- a\n---\n- after break\n",
                     f"{HEADER}\n- a\n- NEW\n---\n- after break\n", id="ends-at-thematic-break"),
        pytest.param(f"{HEADER}\n- a\n* * *\n- after break\n",
                     f"{HEADER}\n- a\n- NEW\n* * *\n- after break\n", id="ends-at-spaced-break"),
        pytest.param(f"{HEADER}\n- a\n  more of a\n\n  still a\n\nParagraph.\n",
                     f"{HEADER}\n- a\n  more of a\n\n  still a\n- NEW\n\nParagraph.\n",
                     id="after-continuation-lines"),
        pytest.param(f"{HEADER}\nIntro text.\n\n## Other\n",
                     f"{HEADER}\n- NEW\nIntro text.\n\n## Other\n", id="right-under-header"),
        pytest.param(f"```\n{HEADER}\n- fenced\n```\n",
                     f"```\n{HEADER}\n- fenced\n```\n\n{HEADER}\n- NEW\n", id="header-in-fence-ignored"),
        pytest.param(f"{HEADER}\n- a\n```\n- not an entry\n```\n",
                     f"{HEADER}\n- a\n- NEW\n```\n- not an entry\n```\n", id="fenced-item-is-not-an-entry"),
    ],
)
def test_placement(proj: Workspace, before: str, after: str) -> None:
    """One case per placement rule; tests/unit/test_edit.py has the full table."""
    ws = proj
    ws.write("p/GEMINI.md", before)
    add(ws, "NEW")
    assert ws.read("p/GEMINI.md") == after


def test_new_file_starts_with_the_header(proj: Workspace) -> None:
    ws = proj
    add(ws, "first")
    add(ws, "second")
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- first\n- second\n"


def test_multi_line_text_is_one_entry(proj: Workspace) -> None:
    ws = proj
    add(ws, "first line\nsecond line\n\nafter a blank")
    add(ws, "next")
    assert ws.read("p/GEMINI.md") == (f"{HEADER}\n- first line\n  second line\n\n  after a blank\n"
                                      "- next\n")
    listed = ws.json("list", cwd=ws.path("p"))
    assert [e["text"] for e in listed] == ["first line\nsecond line\n\nafter a blank", "next"]
    assert [e["line"] for e in listed] == [2, 6]


def test_existing_content_is_kept_byte_for_byte(proj: Workspace) -> None:
    ws = proj
    original = ("\ufeff# Rules  \n\tTabbed line\t\n  * item with trailing space \n\n"
                f"{HEADER}\n- a   \n  \tcontinued\n\n\n"
                "Trailing paragraph with unicode: é ü 漢字 🚀\r\n\nlast line without newline")
    ws.write("p/GEMINI.md", original.encode("utf-8"))
    add(ws, "NEW")
    data = ws.path("p/GEMINI.md").read_bytes()
    inserted = b"- NEW\n"
    at = data.index(inserted)
    assert data[:at] + data[at + len(inserted):] == original.encode("utf-8")
    assert data[:at].endswith(b"  \tcontinued\n")  # right after the last entry of the section


def test_crlf_file_gets_crlf_lines(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "# Rules\r\nUse tabs.\r\n")
    add(ws, "one")
    add(ws, "two\nlines")
    data = ws.path("p/GEMINI.md").read_bytes()
    assert data == (b"# Rules\r\nUse tabs.\r\n\r\n## Gemini Added Memories\r\n- one\r\n- two\r\n"
                    b"  lines\r\n")


def test_crlf_file_without_final_newline(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "# Rules\r\nUse tabs.")
    add(ws, "one")
    assert ws.path("p/GEMINI.md").read_bytes() == (
        b"# Rules\r\nUse tabs.\r\n\r\n## Gemini Added Memories\r\n- one\r\n")


def test_bom_is_kept(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "\ufeff# Rules\n".encode("utf-8"))
    add(ws, "x")
    assert ws.path("p/GEMINI.md").read_bytes() == "\ufeff# Rules\n\n## Gemini Added Memories\n- x\n".encode()


# Duplicates ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "existing, text",
    [
        ("- Use pnpm.", "use   PNPM!"),  # whitespace, case, trailing punctuation
        ("* Use\n  pnpm", "# Use pnpm;"),  # marker, continuation line, cleaned TEXT
        ("- ｕｓｅ　ｐｎｐｍ", "use pnpm"),  # NFKC
        ("- Straße", "STRASSE"),  # case folding
        ("- 日本語を使う。", "日本語を使う！"),  # full-width punctuation
    ],
)
def test_duplicate_is_not_written(proj: Workspace, existing: str, text: str) -> None:
    ws = proj
    original = f"# Rules\n\n{HEADER}\n{existing}\n"
    ws.write("p/GEMINI.md", original)
    result = ws.run("add", "--", text, cwd=ws.path("p"))
    assert result.rc == 0, result
    assert result.stdout == ""
    assert "already" in result.stderr
    assert ws.read("p/GEMINI.md") == original


def test_duplicate_anywhere_in_the_file_counts(proj: Workspace) -> None:
    ws = proj
    original = "- Use pnpm\n\n# Notes\n"
    ws.write("p/GEMINI.md", original)
    result = ws.ok("add", "use pnpm", cwd=ws.path("p"))
    assert "already" in result.stderr and ws.read("p/GEMINI.md") == original


def test_same_entry_in_another_file_is_not_a_duplicate(proj: Workspace) -> None:
    ws = proj
    ws.write_global(f"{HEADER}\n- Use pnpm\n")
    add(ws, "Use pnpm")
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- Use pnpm\n"


def test_fenced_item_is_not_a_duplicate(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "```\n- Use pnpm\n```\n")
    add(ws, "Use pnpm")
    assert ws.read("p/GEMINI.md") == f"```\n- Use pnpm\n```\n\n{HEADER}\n- Use pnpm\n"


def test_different_text_is_not_a_duplicate(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", f"{HEADER}\n- Use pnpm\n")
    add(ws, "Use pnpm 9")
    add(ws, "Use pnpm?")  # `?` is not dropped
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- Use pnpm\n- Use pnpm 9\n- Use pnpm?\n"


def test_text_with_an_unclosed_fence_stays_one_entry(proj: Workspace) -> None:
    """A fence the text opens stays inside its entry: what follows is still read as before."""
    ws = proj
    ws.write("p/GEMINI.md", f"# Rules\n\n{HEADER}\n- one\n\n## Later\n- two\n")
    result = ws.run("add", "example:\n```", cwd=ws.path("p"))
    assert result.rc == 0, result.stderr
    assert ws.read("p/GEMINI.md") == f"# Rules\n\n{HEADER}\n- one\n- example:\n  ```\n\n## Later\n- two\n"
    listed = ws.run("list", "--format", "json", cwd=ws.path("p"))
    assert [e["text"] for e in json.loads(listed.stdout)] == ["one", "example:\n```", "two"]
    assert ws.run("add", "three", cwd=ws.path("p")).rc == 0
    assert ws.run("remove", "two", cwd=ws.path("p")).rc == 0
    assert ws.read("p/GEMINI.md") == f"# Rules\n\n{HEADER}\n- one\n- example:\n  ```\n- three\n\n## Later\n"


def test_an_unclosed_fence_in_an_entry_does_not_hide_what_follows(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", f"{HEADER}\n- a\n  ```\n  code\n\n- b\n## Next\n- c\n")
    listed = ws.run("list", "--format", "json", cwd=ws.path("p"))
    assert [(e["text"], e["line"]) for e in json.loads(listed.stdout)] == [("a\n```\ncode", 2), ("b", 6), ("c", 8)]
    assert ws.run("add", "new", cwd=ws.path("p")).rc == 0
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- a\n  ```\n  code\n\n- b\n- new\n## Next\n- c\n"
    assert ws.run("remove", "b", cwd=ws.path("p")).rc == 0
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n- a\n  ```\n  code\n\n- new\n## Next\n- c\n"
