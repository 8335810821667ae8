"""The Memory Lens language server (pygls 2): one module per LSP feature, wired in `server.py`."""
