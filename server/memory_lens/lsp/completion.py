"""textDocument/completion after `@` in a memory file: the files and folders an import can name.

Typing `@` (at the start of a line or after whitespace, where Gemini CLI counts a mention) or a
`/` inside such a mention lists the entries of the directory typed so far, relative to the memory
file's own directory (an absolute one when the path starts with `/`). Folders end in `/`, so
completing goes on into them; Markdown files come first. At most `MAX_ITEMS` entries are read, so
a huge directory never stalls the server.
"""

from __future__ import annotations

import os
import posixpath
from typing import TYPE_CHECKING

from lsprotocol import types

from memory_lens.core.node_paths import js_resolve
from memory_lens.lsp.convert import uri_to_path

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer

TRIGGERS = ["@", "/"]
MAX_ITEMS = 500
_SPACE = " \t\r\n"


def typed_mention(line_before: str) -> str | None:
    """The path typed after `@` up to the cursor, when the cursor is in a mention; else None."""
    start = max(line_before.rfind(c) for c in _SPACE) + 1
    word = line_before[start:]
    return word[1:] if word.startswith("@") else None


def entries(directory: str) -> list[tuple[str, bool]]:
    """(name, is_dir) of up to MAX_ITEMS entries of DIRECTORY, `.git` left out; [] if unreadable."""
    found: list[tuple[str, bool]] = []
    try:
        with os.scandir(directory) as it:
            for entry in it:
                if entry.name == ".git":
                    continue
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                found.append((entry.name, is_dir))
                if len(found) >= MAX_ITEMS:
                    break
    except (OSError, ValueError):
        return []
    return found


def complete(base: str, typed: str, replace: types.Range) -> list[types.CompletionItem]:
    """The completions for the path TYPED after `@` in a memory file in directory BASE; each
    replaces REPLACE, the part typed after the last `/`."""
    head, _, tail = typed.rpartition("/")
    directory = js_resolve(base, (head or "/") if typed.startswith("/") else (head or "."))
    items = []
    for name, is_dir in entries(directory):
        if not name.startswith(tail):
            continue
        label = name + ("/" if is_dir else "")
        rank = "1" if is_dir else "0" if name.lower().endswith(".md") else "2"
        items.append(types.CompletionItem(
            label=label, kind=types.CompletionItemKind.Folder if is_dir else types.CompletionItemKind.File,
            detail=posixpath.join(directory, name), sort_text=f"{rank}{name.lower()}", filter_text=label,
            text_edit=types.TextEdit(range=replace, new_text=label)))
    return items


def register(server: MemoryLensServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=TRIGGERS))
    def completion(ls: MemoryLensServer, params: types.CompletionParams) -> types.CompletionList | None:
        path = uri_to_path(params.text_document.uri)
        if not ls.is_memory_path(path):
            return None
        assert path is not None
        doc = ls.document(params.text_document.uri)
        if doc is None:
            return None
        offset = doc.offset_at_position(params.position)
        line_start = doc.source.rfind("\n", 0, offset) + 1
        typed = typed_mention(doc.source[line_start:offset])
        if typed is None:
            return None
        tail = typed.rpartition("/")[2]
        replace = types.Range(start=doc.client_position_at_offset(offset - len(tail)), end=params.position)
        return types.CompletionList(is_incomplete=False, items=complete(str(path.parent), typed, replace))
