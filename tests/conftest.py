"""Shared fixtures: an isolated workspace (`sandbox.Workspace`) for every CLI test.

The helpers live in `sandbox.py`, a module of their own: `conftest` is not a unique module name
in this tree (tests/editors has one too), so tests import from `sandbox`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox import Workspace


def _ancestor_markers(path: Path) -> list[Path]:
    found = []
    for d in path.parents:
        for name in (".git", "GEMINI.md", "AGENTS.md", "CONTEXT.md"):
            if os.path.lexists(d / name):
                found.append(d / name)
    return found


@pytest.fixture(scope="session", autouse=True)
def entry_cache_in_tmp(tmp_path_factory: pytest.TempPathFactory):
    """In-process language-server stores keep parsed entries in a session directory, not in the
    user's cache (servers started by the tests get the sandbox's XDG_CACHE_HOME)."""
    from memory_lens.core import entry_cache

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(entry_cache, "default_path",
                   lambda: tmp_path_factory.getbasetemp() / "entry-cache" / entry_cache.FILE_NAME)
        yield


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bytecode cache shared by every CLI run of the session (it only makes start-up faster)."""
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture
def ws(tmp_path: Path, bytecode_cache: Path) -> Workspace:
    """An isolated workspace. Fails loudly if the temp directory's ancestors hold memory files or
    a `.git`, since that would leak into chains that search upward."""
    root = Path(os.path.realpath(tmp_path))
    stray = _ancestor_markers(root)
    if stray:
        pytest.fail(f"the temp directory's ancestors hold {stray}; set --basetemp to a clean place")
    return Workspace(root, bytecode_cache)
