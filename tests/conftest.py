"""Shared fixtures: an isolated workspace (`sandbox.Workspace`) for every CLI test; and the
`slow` marker on the layers that start a server or an editor for each test.

`pytest` with no paths and no `-m` runs the fast layers only (`-m "not slow"`); `pytest tests`,
as `scripts/test.sh` runs it, runs every layer, and a path names what it names.

The helpers live in `sandbox.py`, a module of their own: `conftest` is not a unique module name
in this tree (tests/editors has one too), so tests import from `sandbox`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox import Workspace, isolated_root

TESTS = Path(__file__).parent
# The layers that start a language server, an MCP server, an editor or a benchmark run per test:
# together about five sixths of the suite's time (tests/e2e alone three quarters).
SLOW_LAYERS = ("e2e", "mcp", "editors", "benchmarks")


def pytest_configure(config: pytest.Config) -> None:
    """With no paths and no `-m`, leave the slow layers out."""
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS and not config.option.markexpr:
        config.option.markexpr = "not slow"


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.args_source is pytest.Config.ArgsSource.TESTPATHS and config.option.markexpr == "not slow":
        return f"fast layers only (-m 'not slow': {', '.join(SLOW_LAYERS)} left out); `pytest tests` runs them all"
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(TESTS) and item.path.relative_to(TESTS).parts[0] in SLOW_LAYERS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bytecode cache shared by every CLI run of the session (it only makes start-up faster)."""
    return tmp_path_factory.mktemp("pycache")


@pytest.fixture
def ws(tmp_path: Path, bytecode_cache: Path) -> Workspace:
    """An isolated workspace (see `sandbox.isolated_root`)."""
    return Workspace(isolated_root(tmp_path), bytecode_cache)
