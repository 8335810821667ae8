"""`memory-lens add` and `list` with odd text: control characters in the entry, and memory files
whose end or section would otherwise swallow a new entry (an unclosed code fence, an indented
line after the section header)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from memory_lens.core.markdown import parse

if TYPE_CHECKING:
    from sandbox import Workspace

HEADER = "## Gemini Added Memories"


@pytest.fixture
def proj(ws: Workspace) -> Workspace:
    ws.project("p")
    return ws


# Control characters in the entry ------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\v", "\f", "\x85", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e"])
def test_other_line_breaks_are_written_as_spaces(proj: Workspace, char: str) -> None:
    ws = proj
    ws.ok("add", f"Use pnpm{char}# Not a heading", cwd=ws.path("p"))
    written = ws.read("p/GEMINI.md")
    assert written == f"{HEADER}\n- Use pnpm # Not a heading\n"
    # A str.splitlines reader sees the same lines as a Markdown reader: no column-0 heading.
    assert written.splitlines() == [HEADER, "- Use pnpm # Not a heading"]


def test_list_prints_control_characters_escaped(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", "- bell\x07 esc\x1b[31m vt\x0b ls\u2028 nel\x85 del\x7f tab\tend\n")
    result = ws.ok("list", cwd=ws.path("p"))
    assert result.stdout == (f"{ws.path('p/GEMINI.md')}:1: [project] "
                             "bell\\x07 esc\\x1b[31m vt\\x0b ls\\u2028 nel\\x85 del\\x7f tab\tend\n")
    assert ws.json("list", "--format", "json", cwd=ws.path("p"))[0]["text"] == (
        "bell\x07 esc\x1b[31m vt\x0b ls\u2028 nel\x85 del\x7f tab\tend")


# Files that would swallow a new entry ---------------------------------------------------------


def test_add_to_a_file_ending_inside_an_unclosed_fence_goes_before_the_fence(proj: Workspace) -> None:
    ws = proj
    before = "# Notes\n\nSome text.\n```sh\nmake all\n"
    ws.write("p/GEMINI.md", before)
    result = ws.ok("add", "Use pnpm", cwd=ws.path("p"))
    written = ws.read("p/GEMINI.md")
    assert written == f"# Notes\n\nSome text.\n\n{HEADER}\n- Use pnpm\n\n```sh\nmake all\n"
    assert f"{ws.path('p/GEMINI.md')}:6" in result.stderr
    assert [e.text for e in parse(written).entries] == ["Use pnpm"]
    # The next entry joins the section, still outside the fence.
    ws.ok("add", "Use tabs", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == f"# Notes\n\nSome text.\n\n{HEADER}\n- Use pnpm\n- Use tabs\n\n```sh\nmake all\n"


def test_add_under_a_header_followed_by_an_indented_line_stays_one_entry(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", f"{HEADER}\n    indented code\n\n## Other\n- x\n")
    ws.ok("add", "Use pnpm", cwd=ws.path("p"))
    written = ws.read("p/GEMINI.md")
    assert written == f"{HEADER}\n    indented code\n\n- Use pnpm\n## Other\n- x\n"
    assert [(e.text, e.line) for e in parse(written).entries] == [("Use pnpm", 3), ("x", 5)]
    listed = ws.json("list", "--format", "json", cwd=ws.path("p"))
    assert [e["text"] for e in listed] == ["Use pnpm", "x"]


def test_add_under_a_header_followed_by_indented_lines_to_the_end(proj: Workspace) -> None:
    ws = proj
    ws.write("p/GEMINI.md", f"{HEADER}\n    indented code")
    ws.ok("add", "Use pnpm", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == f"{HEADER}\n    indented code\n- Use pnpm\n"


def test_no_place_for_the_entry_names_the_file_and_line_to_blame(proj: Workspace) -> None:
    ws = proj
    # The section runs up to an indented heading, and everything in it is indented.
    content = f"{HEADER}\n    indented code\n   ## Other\n    more\n"
    ws.write("p/GEMINI.md", content)
    result = ws.run("add", "Use pnpm", cwd=ws.path("p"))
    assert result.rc == 1
    assert result.stderr == (f"memory-lens: error: {ws.path('p/GEMINI.md')}:2: this line is indented, so a new "
                             "entry would swallow it; unindent it or move it out of the section, then try again\n")
    assert ws.read("p/GEMINI.md") == content

