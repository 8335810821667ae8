"""The pure core of Memory Lens: discovery, merging, entries, editing, checks.

Nothing in this package imports pygls or lsprotocol; the CLI and the language server
are thin adapters over these functions.
"""
