"""How a `memory-lens` command ends: the program's name its messages start with, the exit
statuses, and the two errors `cli.main` turns into them. Shared by `cli` and `cli_notes`."""

from __future__ import annotations

PROG = "memory-lens"
EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad command-line usage (exit 2)."""


class Failure(Exception):
    """The command could not do what was asked (exit 1)."""
