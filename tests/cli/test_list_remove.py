"""`memory-lens list` and `memory-lens remove`: what an entry is, output shapes, scopes, matching."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace

HEADER = "## Gemini Added Memories"


@pytest.fixture
def chain(ws: Workspace) -> Workspace:
    ws.write_global(f"{HEADER}\n- Global one\n- Shared rule\n")
    ws.project("p")
    ws.write("p/GEMINI.md", (
        "# Project\n"
        "Intro paragraph, not an entry.\n"
        "\n"
        "- Root entry\n"
        "  continued here\n"
        "\n"
        "  and after a blank\n"
        "    - nested item, part of the entry\n"
        "* Star entry\n"
        "+ Plus entry\n"
        "-not an entry (no space)\n"
        "  - indented item, not top level\n"
        "* * *\n"
        "```\n"
        "- fenced, not an entry\n"
        "```\n"
        "~~~\n"
        "- tilde fenced, not an entry\n"
        "~~~\n"
        "- Shared rule.\n"
    ))
    ws.write("p/src/GEMINI.md", "-\tTabbed entry\n")
    return ws


def test_list_json_shape_and_order(chain: Workspace) -> None:
    ws = chain
    listed = ws.json("list", cwd=ws.path("p/src"))
    g, r, s = str(ws.global_dir / "GEMINI.md"), str(ws.path("p/GEMINI.md")), str(ws.path("p/src/GEMINI.md"))
    assert listed == [
        {"text": "Global one", "path": g, "line": 2, "scope": "global"},
        {"text": "Shared rule", "path": g, "line": 3, "scope": "global"},
        {"text": "Root entry\ncontinued here\n\nand after a blank\n  - nested item, part of the entry",
         "path": r, "line": 4, "scope": "project"},
        {"text": "Star entry", "path": r, "line": 9, "scope": "project"},
        {"text": "Plus entry", "path": r, "line": 10, "scope": "project"},
        {"text": "Shared rule.", "path": r, "line": 20, "scope": "project"},
        {"text": "Tabbed entry", "path": s, "line": 1, "scope": "project"},
    ]


def test_list_scopes(chain: Workspace) -> None:
    ws = chain
    everything = ws.json("list", cwd=ws.path("p/src"))
    assert ws.json("list", "--scope", "all", cwd=ws.path("p/src")) == everything
    assert ws.json("list", "--scope", "global", cwd=ws.path("p/src")) == everything[:2]
    assert ws.json("list", "--scope", "project", cwd=ws.path("p/src")) == everything[2:]


def test_list_text_format(chain: Workspace) -> None:
    ws = chain
    result = ws.ok("list", "--scope", "project", "--dir", str(ws.path("p")))
    r = str(ws.path("p/GEMINI.md"))
    assert result.stdout == (
        f"{r}:4: [project] Root entry\n"
        "    continued here\n"
        "    \n"
        "    and after a blank\n"
        "      - nested item, part of the entry\n"
        f"{r}:9: [project] Star entry\n"
        f"{r}:10: [project] Plus entry\n"
        f"{r}:20: [project] Shared rule.\n"
    )
    assert result.stderr == ""


def test_list_nothing(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "Just prose.\n")
    assert ws.json("list", cwd=ws.path("p")) == []
    result = ws.ok("list", cwd=ws.path("p"))
    assert result.stdout == "" and "no entries" in result.stderr


def test_list_crlf_and_bom(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "\ufeff- one\r\n  two\r\n- three\r\n".encode())
    assert [(e["text"], e["line"]) for e in ws.json("list", cwd=ws.path("p"))] == [("one\ntwo", 1),
                                                                                   ("three", 3)]


# remove ------------------------------------------------------------------------------------------


def test_remove_first_match_in_list_order(chain: Workspace) -> None:
    """The global file comes first in list order, so it loses its copy of a shared entry first."""
    ws = chain
    result = ws.ok("remove", "shared RULE", cwd=ws.path("p/src"))
    assert result.stdout == ""
    assert "global" in result.stderr and str(ws.global_dir / "GEMINI.md") in result.stderr
    assert ws.read("home/.gemini/GEMINI.md") == f"{HEADER}\n- Global one\n"
    assert ws.read("p/GEMINI.md").endswith("~~~\n- Shared rule.\n")
    ws.ok("remove", "Shared rule", cwd=ws.path("p/src"))
    assert ws.read("p/GEMINI.md").endswith("~~~\n")


def test_remove_with_scope(chain: Workspace) -> None:
    ws = chain
    ws.ok("remove", "Shared rule", "--scope", "project", cwd=ws.path("p/src"))
    assert ws.read("home/.gemini/GEMINI.md") == f"{HEADER}\n- Global one\n- Shared rule\n"
    assert "Shared rule" not in ws.read("p/GEMINI.md")
    result = ws.run("remove", "Global one", "--scope", "project", cwd=ws.path("p/src"))
    assert result.rc == 1


def test_remove_takes_the_whole_entry_and_keeps_the_rest(chain: Workspace) -> None:
    ws = chain
    before = ws.read("p/GEMINI.md")
    ws.ok("remove", "# root entry continued here and after a blank - nested item, part of the entry",
          "--dir", str(ws.path("p")))
    after = ws.read("p/GEMINI.md")
    start = before.index("- Root entry")
    end = before.index("* Star entry")
    assert after == before[:start] + before[end:]


def test_remove_does_not_touch_fenced_items(chain: Workspace) -> None:
    ws = chain
    before = ws.snapshot()
    result = ws.run("remove", "fenced, not an entry", cwd=ws.path("p"))
    assert result.rc == 1 and result.stdout == ""
    assert ws.snapshot() == before


def test_remove_absent_fails_and_touches_nothing(chain: Workspace) -> None:
    ws = chain
    before = ws.snapshot()
    result = ws.run("remove", "never saved", cwd=ws.path("p/src"))
    assert result.rc == 1
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert ws.snapshot() == before


def test_remove_keeps_crlf_and_bom(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "\ufeff# T\r\n- one\r\n  two\r\n- three\r\n".encode())
    ws.ok("remove", "one two", cwd=ws.path("p"))
    assert ws.path("p/GEMINI.md").read_bytes() == "\ufeff# T\r\n- three\r\n".encode()


def test_remove_text_starting_with_a_dash(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- -x flag\n- keep\n")
    ws.ok("remove", "--", "-x flag", cwd=ws.path("p"))
    assert ws.read("p/GEMINI.md") == "- keep\n"


def test_remove_through_a_symlink_keeps_the_link(ws: Workspace) -> None:
    ws.project("p")
    ws.write("shared.md", "- a\n- b\n")
    ws.symlink("p/GEMINI.md", "../shared.md")  # outside the project: the user opts in
    ws.ok("remove", "a", "--follow-outside-links", cwd=ws.path("p"))
    assert ws.path("p/GEMINI.md").is_symlink()
    assert ws.read("shared.md") == "- b\n"
