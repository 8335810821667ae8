"""Shared fixtures: an isolated workspace (`sandbox.Workspace`) for every CLI test.

The helpers live in `sandbox.py`, a module of their own: `conftest` is not a unique module name
in this tree (tests/editors has one too), so tests import from `sandbox`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import Workspace, isolated_root


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bytecode cache shared by every CLI run of the session (it only makes start-up faster)."""
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture
def ws(tmp_path: Path, bytecode_cache: Path) -> Workspace:
    """An isolated workspace (see `sandbox.isolated_root`)."""
    return Workspace(isolated_root(tmp_path), bytecode_cache)
