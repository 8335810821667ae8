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
"""

from __future__ import annotations

import sys


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
