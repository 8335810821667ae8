"""The package's import structure, read from the source (every `import` statement: at module
level, inside functions and under `TYPE_CHECKING`): no two modules import each other, directly or
round a longer circle, and the core imports neither the LSP libraries nor the MCP SDK."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "memory_lens"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["memory_lens", *path.relative_to(PACKAGE).with_suffix("").parts]
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imported(module: str, path: Path) -> set[str]:
    """Every name of `memory_lens` or another package that MODULE's import statements name,
    `from a import b` giving both `a` and `a.b`."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def _graph() -> dict[str, set[str]]:
    """module -> the modules of the package it imports. A package's `__init__` imported by one
    of its own modules is left out (Python runs it first anyway)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in _imported(module, path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                targets.add(name)
        graph[module] = targets
    return graph


def test_no_module_imports_another_that_imports_it_back() -> None:
    graph = _graph()
    assert {"memory_lens.cli", "memory_lens.lsp.app", "memory_lens.lsp.server", "memory_lens.core.notes.index"} <= set(graph)
    assert "memory_lens.lsp.server" in graph["memory_lens.lsp.hover"]  # type-only imports count
    assert "memory_lens.lsp.hover" in graph["memory_lens.lsp.app"]  # imports inside functions count
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as err:
        pytest.fail("an import circle: " + " -> ".join(err.args[1]))


def test_the_core_imports_no_lsp_library_nor_the_mcp_sdk() -> None:
    for module, path in _modules().items():
        if module.startswith("memory_lens.core"):
            outside = {name.split(".")[0] for name in _imported(module, path)}
            assert not outside & {"pygls", "lsprotocol", "mcp"}, module
            assert not any(name.startswith(("memory_lens.lsp", "memory_lens.mcp_server", "memory_lens.cli"))
                           for name in _imported(module, path)), module
