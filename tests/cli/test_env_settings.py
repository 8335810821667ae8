"""Settings from the environment on the command line (docs/settings.md): one resolver for every
command, one-line errors that name the variable."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import Workspace


def test_a_relative_notes_dir_is_refused_with_one_line(ws: Workspace) -> None:
    """MEMORY_LENS_NOTES_DIR=relative/dir would be a different directory for each process (the CLI
    in one directory, the servers in another): refused, and nothing is created."""
    proj = ws.project("proj")
    before = ws.snapshot()
    for args in (["notes", "create", "n", "text", "--scope", "global"], ["notes", "list"]):
        result = ws.run(*args, cwd=proj, env={"MEMORY_LENS_NOTES_DIR": "relative/dir"})
        lines = result.stderr.strip().splitlines()
        assert result.rc == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result
        assert "MEMORY_LENS_NOTES_DIR='relative/dir'" in lines[0] and "absolute" in lines[0]
    assert ws.snapshot() == before
    absolute = ws.path("elsewhere")
    ws.ok("notes", "create", "n", "text", "--scope", "global", cwd=proj, env={"MEMORY_LENS_NOTES_DIR": str(absolute)})
    assert (absolute / "n.json").exists()


def test_the_size_limit_given_on_the_command_line_governs_the_write(ws: Workspace) -> None:
    """--max-file-size reaches the writer through the settings, not through the environment."""
    proj = ws.project("proj")
    ws.write("proj/GEMINI.md", "# Big\n" + "x" * 200 + "\n")
    refused = ws.run("add", "Use tabs", cwd=proj, env={"MEMORY_LENS_MAX_FILE_SIZE": "100"})
    assert refused.rc == 1 and "over the 100-byte limit" in refused.stderr
    ws.ok("add", "Use tabs", "--max-file-size", "1000", cwd=proj, env={"MEMORY_LENS_MAX_FILE_SIZE": "100"})
    assert ws.path("proj/GEMINI.md").read_text().endswith("- Use tabs\n")


def test_the_language_server_warns_about_a_relative_notes_dir_and_starts(ws: Workspace) -> None:
    """`serve` (stdin closed: it starts and ends at once) logs the bad value once and goes on with
    the default notes directory."""
    result = ws.run("serve", cwd=ws.project("proj"), env={"MEMORY_LENS_NOTES_DIR": "relative/dir"})
    assert result.rc == 0 and result.stdout == ""
    assert result.stderr.splitlines() == ["memory-lens: warning: ignoring MEMORY_LENS_NOTES_DIR='relative/dir': expected "
                                          "an absolute directory path (a relative one means a different directory in "
                                          "each process); using the default"]
