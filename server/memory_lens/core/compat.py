"""Where the core relies on how another library works inside, in one place, with why.

(The language server's own list is lsp/compat.py; this module imports nothing, so that the scan's
helper process can use it and stay small.)

rignore (pyproject: `rignore>=0.6`; tests/unit/test_core_compat.py pins the behaviour below):

- rignore makes each path it yields by calling `pathlib.Path` on the path's text, importing
  `pathlib` for it (src/lib.rs, `path_buf_to_pathlib_path`, the same from 0.6 to 0.8). The scan's
  helper process (core/scan_worker.py) only needs the text, so before it imports rignore it puts a
  `pathlib` module whose `Path` is `str` in its place: the helper then neither imports pathlib
  (with `re`, `fnmatch`, `urllib`: ~2 MB and a good part of its start) nor builds a `Path` for
  each of the thousands of directories it walks (~15% of the walk's time). Should rignore ever
  build its paths another way, the helper fails on its first subtree and the scan walks the
  subtrees in its own process instead: slower, never wrong.

detect-secrets (pyproject: `detect-secrets>=1.5,<1.6`): `regex_only` says which plugins need not
run on a line none of their expressions matches in; `requests_deferred` keeps `requests` out of
the import of its plugins (below).
"""

from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator


def rignore_yields_text() -> bool:
    """Make rignore, when imported after this call, yield paths as `str` in this process. Only
    for a process that has no other use for pathlib. False when it is too late (pathlib or
    rignore is already imported)."""
    if "pathlib" in sys.modules or "rignore" in sys.modules:
        return False
    text_paths = type(sys)("pathlib", "What rignore imports to build its paths: here, plain text.")
    text_paths.Path = str  # type: ignore[attr-defined]
    sys.modules["pathlib"] = text_paths
    return True


def regex_only(plugin: object) -> bool:
    """Whether detect-secrets PLUGIN finds nothing but what its `denylist` expressions match.

    detect-secrets (pyproject: `detect-secrets>=1.5,<1.6`): a `RegexBasedDetector` that keeps the
    class's own `analyze_string` yields each match of `findall` of each expression of its
    `denylist` (plugins/base.py), so on a line none of them matches (`search` finds nothing) it
    yields nothing, and core/secrets.py does not start it there. A plugin with its own
    `analyze_string` (the JSON web token one) always runs."""
    from detect_secrets.plugins.base import RegexBasedDetector

    return (isinstance(plugin, RegexBasedDetector)
            and type(plugin).analyze_string is RegexBasedDetector.analyze_string
            and isinstance(getattr(type(plugin), "denylist", None), (list, tuple)))


class _DeferredRequests(type(sys)):  # a module
    """Stands for `requests` in the modules imported while it is in `sys.modules`: anything asked
    of it is the real module's, imported then; but `Response` while `importing` (the return type
    two plugins name in a signature, evaluated when they are defined) is `object`."""

    importing = True

    def __getattr__(self, name: str) -> Any:
        if name == "Response" and self.importing:
            return object
        real = sys.modules.get("requests")
        if real is None or real is self:
            import importlib

            with _deferring:
                if sys.modules.get("requests") is self:
                    del sys.modules["requests"]
                real = importlib.import_module("requests")
        return getattr(real, name)


_deferring = threading.RLock()


@contextmanager
def requests_deferred() -> Iterator[None]:
    """Import detect-secrets' plugins inside this block, and `requests` is not imported with them.

    Every plugin module, and detect-secrets' base plugin, does `import requests` (with urllib3,
    http.client, ssl: about half of the import's time, ~0.15 s of CPU, more on a loaded machine)
    only to call a provider's API in `verify`, which Memory Lens never calls, and to catch its
    errors there. So while the block runs `requests` is a `_DeferredRequests`, which imports the
    real module the first time anything is asked of it (a `verify`, an `except` clause reached);
    after the block `import requests` gives the real module as always."""
    with _deferring:
        if "requests" in sys.modules:
            yield
            return
        stand_in = _DeferredRequests("requests")
        sys.modules["requests"] = stand_in
        try:
            yield
        finally:
            stand_in.importing = False
            if sys.modules.get("requests") is stand_in:
                del sys.modules["requests"]
