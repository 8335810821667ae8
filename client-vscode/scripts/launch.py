"""Start the Memory Lens language server bundled with the VS Code extension.

The extension runs `python launch.py` when neither the `memoryLens.server.command` setting nor
the Python extension's interpreter provides a server. The server and its pure-Python
dependencies sit next to this file in `libs/`, so any Python 3.10 or newer can run it.
`launch.py --check` only imports the server and exits 0 (used when packaging).
"""

import os
import sys

if sys.version_info < (3, 10):
    sys.stderr.write(
        "Memory Lens needs Python 3.10 or newer; %s is %d.%d. Set memoryLens.server.command "
        "or put a newer Python on PATH.\n" % (sys.executable, sys.version_info[0], sys.version_info[1])
    )
    sys.exit(1)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "libs"))

from memory_lens.cli import main  # noqa: E402  (needs the path above)

if __name__ == "__main__":
    if sys.argv[1:] == ["--check"]:
        import memory_lens.core.similar  # noqa: F401  (rapidfuzz, vendored without its compiled files)
        import memory_lens.lsp.server  # noqa: F401

        print("memory-lens bundled server OK (Python %d.%d)" % sys.version_info[:2])
        sys.exit(0)
    sys.exit(main(["serve", *sys.argv[1:]]))
