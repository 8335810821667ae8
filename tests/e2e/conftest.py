"""End-to-end fixtures: a real `memory-lens serve` over stdio, driven by pytest-lsp's client.

A test gets its own sandbox under `tmp_path` (a HOME with a global memory file, a project
with `.git` and nested GEMINI.md files, lock and cache directories: `tests/sandbox.py`'s
`Workspace` with the default tree) and its own server process (unless it only reads, below),
started with HOME, MEMORY_LENS_LOCK_DIR and XDG_CACHE_HOME pointing into that sandbox. Every
test runs with the capabilities of VS Code, Neovim (latest), Neovim 0.7 and a bare client that
declares nothing (`client_name`). A test whose server behaviour does not depend on the
client's capabilities may leave out Neovim 0.7 with `@pytest.mark.clients(*FEATURE_CLIENTS)`
(VS Code, Neovim, bare: the set every feature test runs with) to keep the suite fast. Narrower
sets are for tests that cannot apply to the others, with a comment saying why. See
`harness.py` for what a session records and checks.

Tests that only read (requests that change nothing, documents opened but never edited) take
`shared_lsp` instead of `lsp`: one server per module and client on one sandbox
(`shared_ws`, the default tree; a module may override it to add files). After each such test
its documents are closed, and the test fails if it changed a file of the sandbox, edited a
buffer, or made the server log an error, so one test never sees another's edits.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio

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
    client, or over those its `clients` marker names; per module for a shared server."""
    if "client_name" in metafunc.fixturenames:
        marker = metafunc.definition.get_closest_marker("clients")
        names = marker.args if marker else CLIENTS
        unknown = set(names) - set(CLIENTS)
        assert not unknown, f"unknown clients {unknown}"
        shared = "shared_lsp" in metafunc.fixturenames
        metafunc.parametrize("client_name", names, scope="module" if shared else None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the module's shared server runs in the module's event loop, the server's."""
    for item in items:
        if "shared_lsp" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.asyncio(loop_scope="module"), append=False)


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


@pytest.fixture(scope="module")
def shared_ws(tmp_path_factory: pytest.TempPathFactory, bytecode_cache: Path) -> Workspace:
    """The default sandbox of the module's shared servers (a module may override this fixture
    to add files: the tests that share it only read them)."""
    workspace = Workspace(isolated_root(tmp_path_factory.mktemp("shared")), bytecode_cache)
    workspace.build_default()
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_session(shared_ws: Workspace, client_name: str) -> AsyncIterator[Session]:
    """One server per module and client on `shared_ws`, shut down (and checked) after the
    module's last test with that client."""
    session = await start_session(shared_ws, client_name)
    yield session
    await stop_session(session)


@pytest_asyncio.fixture(loop_scope="module")
async def shared_lsp(module_session: Session) -> AsyncIterator[Session]:
    """The module's server for a test that only reads. Afterwards: its documents are closed,
    and it fails if the test changed the sandbox, edited a buffer, or broke the server."""
    session = module_session
    ws = session.ws
    before = ws.snapshot(skip=[ws.data_dir])
    violations, stderr_lines = len(session.violations), len(session.stderr)
    yield session
    edited = sorted(uri for uri, version in session.versions.items() if version != 1)
    session.close_all()
    assert not edited, f"a test on the shared server edited {edited}; give it its own (`lsp`)"
    assert ws.snapshot(skip=[ws.data_dir]) == before, \
        "a test on the shared server changed the sandbox; give it its own (`lsp` or `start`)"
    assert not session.allow_server_errors, "a test that expects server errors needs its own server"
    assert session.server_alive(), "the server process died during the test"
    assert session.violations[violations:] == []
    errors = [line for line in session.stderr[stderr_lines:] if "Traceback" in line or ": ERROR:" in line]
    assert not errors, "the server logged errors:\n" + "".join(errors)
