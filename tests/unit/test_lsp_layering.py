"""The language server's modules import the server type for annotations only: no module of
`memory_lens.lsp` but `app` (`build_server`, `run_stdio`: where the server and its features are
put together) imports `memory_lens.lsp.server` when it runs. `test_import_structure` checks that
no import, type-only or not, makes a circle."""

from __future__ import annotations

import json
import subprocess
import sys


# The entry point, which makes the server (`build_server`, `run_stdio`), and the server module itself.
ENTRY_POINTS = {"app", "server"}

# In a fresh interpreter, import every other module of the package and name each module whose
# running code asked for memory_lens.lsp.server (the frame that executes the import statement).
IMPORT_ALL = """
import importlib, json, pkgutil, sys, traceback
import memory_lens.lsp as package

importers = set()

class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "memory_lens.lsp.server":
            for frame, _ in traceback.walk_stack(None):
                module = frame.f_globals.get("__name__", "")
                if module.startswith("memory_lens."):
                    importers.add(module)
                    break
        return None

sys.meta_path.insert(0, Spy())
imported = [info.name for info in pkgutil.iter_modules(package.__path__) if info.name not in ENTRY_POINTS]
for name in imported:
    importlib.import_module("memory_lens.lsp." + name)
print(json.dumps({"imported": imported, "importers": sorted(importers),
                  "loaded": "memory_lens.lsp.server" in sys.modules}))
"""


def test_no_lsp_module_imports_the_server_at_run_time() -> None:
    script = f"ENTRY_POINTS = {sorted(ENTRY_POINTS)!r}\n" + IMPORT_ALL
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert {"watch", "live", "lifecycle", "hover", "code_lens", "symbols"} <= set(result.pop("imported"))
    assert result == {"importers": [], "loaded": False}


def test_every_command_handler_has_annotations_pygls_can_resolve() -> None:
    """pygls resolves a command handler's annotations when the command runs (to convert its
    arguments): an annotation naming a type imported for type checking only would fail there."""
    import typing

    from memory_lens.core.settings import Settings
    from memory_lens.lsp.app import build_server

    commands = build_server(Settings()).protocol.fm.commands
    assert commands
    for name, handler in commands.items():
        typing.get_type_hints(getattr(handler, "func", handler))  # raises NameError otherwise
