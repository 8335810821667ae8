"""End-to-end fixtures: a real `memory-lens serve` over stdio, driven by pytest-lsp's client.

Every test gets its own sandbox under `tmp_path` (a HOME with a global memory file, a project
with `.git` and nested GEMINI.md files, lock and cache directories) and its own server process,
started with HOME, MEMORY_LENS_LOCK_DIR and XDG_CACHE_HOME pointing into that sandbox. Every
test runs with the capabilities of VS Code, Neovim (latest), Neovim 0.7 and a bare client that
declares nothing (`client_name`). A test whose server behaviour does not depend on the
client's capabilities may leave out Neovim 0.7 with `@pytest.mark.clients(*FEATURE_CLIENTS)`
(VS Code, Neovim, bare: the set every feature test runs with) to keep the suite fast. Narrower
sets are for tests that cannot apply to the others, with a comment saying why. See
`harness.py` for what a session records and checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest

from sandbox import isolated_root

from .harness import CLIENTS, Session, Workspace, start_session, stop_session

Starter = Callable[..., Awaitable[Session]]


@pytest.fixture
def ws(tmp_path: Path, bytecode_cache: Path) -> Workspace:
    """The default sandbox (see `Workspace.build_default`)."""
    workspace = Workspace(isolated_root(tmp_path), bytecode_cache)
    workspace.build_default()
    return workspace


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "clients(*names): run only with these client capability sets")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise `client_name` (the client whose capabilities a test runs with) over every
    client, or over those its `clients` marker names."""
    if "client_name" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("clients")
        names = marker.args if marker else CLIENTS
        unknown = set(names) - set(CLIENTS)
        assert not unknown, f"unknown clients {unknown}"
        metafunc.parametrize("client_name", names)


@pytest.fixture
def server_env() -> dict[str, str]:
    """Extra environment for every server of a test (a test module may override it)."""
    return {}


@pytest.fixture
async def start(ws: Workspace, client_name: str, server_env: dict[str, str]) -> AsyncIterator[Starter]:
    """A factory: `await start(**options)` starts and initializes a server for the sandbox
    (options: see `harness.start_session`). Every session is shut down at the end of the test."""
    sessions: list[Session] = []

    async def starter(**options: Any) -> Session:
        options["env"] = {**server_env, **(options.get("env") or {})}
        session = await start_session(ws, client_name, **options)
        sessions.append(session)
        return session

    yield starter
    for session in sessions:
        await stop_session(session)


@pytest.fixture
async def lsp(start: Starter) -> Session:
    """A server on the default sandbox, initialized, its first scan published."""
    return await start()
