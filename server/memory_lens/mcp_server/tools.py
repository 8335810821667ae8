"""What each MCP tool does, as plain functions over a `ToolContext` (no MCP import): the server
module wraps them as tools. Every result is a small JSON object; a failure is a `ToolFailure`
whose message tells the model what to do instead.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import unquote, urlparse

from memory_lens.core import paging
from memory_lens.core.agents import agent_view, gemini, user_dir
from memory_lens.core.agents.common import confined
from memory_lens.core.discovery import Scope, TargetError, find_project_root, resolve_target
from memory_lens.core.edit import EntryTextError, plan_add
from memory_lens.core.entries import (
    EntryNotFoundError,
    NoProjectError,
    list_entries,
    memory_file_for,
    remove_entry,
    resolve_scope,
    save_entry,
    write_area,
)
from memory_lens.core.files import read_memory_file
from memory_lens.core.imports import WITHHELD
from memory_lens.core.markdown import clean_entry_text
from memory_lens.core.merge import load_memory
from memory_lens.core.notes import NoteError, NotesStore, StoredNote
from memory_lens.core.read_policy import ReadArea, read_area
from memory_lens.core.secrets import Secret, SecretError, find_secrets
from memory_lens.core.settings import Settings
from memory_lens.core.write_policy import is_inside
from memory_lens.core.writer import MemoryFileError, allowed_target
from memory_lens.mcp_server.approvals import Approvals
from memory_lens.mcp_server.schemas import MAX_FACT_CHARS


class ToolFailure(Exception):
    """A tool could not do what was asked (the message is for the model and the user)."""


_CLI_HINTS = (  # what the core's messages tell a CLI user to run, and what a model calls instead
    (re.compile(r"`memory-lens notes list[^`]*`"), "memory_list"),
    (re.compile(r"(?:run )?`memory-lens list[^`]*`"), "call list_memory_entries"),
    (re.compile(r"`?--scope (project|global|both)`?"), r'scope "\1"'),
)


def for_mcp(message: str) -> str:
    """MESSAGE with the CLI commands and flags it names put as the MCP tools and arguments that do the same."""
    for pattern, replacement in _CLI_HINTS:
        message = pattern.sub(replacement, message)
    return message


@dataclass
class ToolContext:
    """Everything the tools work on: the directory the server serves, its settings and stores."""

    directory: Path
    settings: Settings
    store: NotesStore
    approvals: Approvals
    warnings: list[str] = field(default_factory=list)

    @property
    def project_root(self) -> Path | None:
        return find_project_root(self.directory)


def _note_ref(stored: StoredNote) -> dict[str, Any]:
    return stored.to_json(content=False)


SECRET_ADVICE = ("a model cannot override this: leave the secret out (say where it is kept instead), or ask the "
                 "user to save it themselves")


def _notes(call: Any) -> Any:
    try:
        return call()
    except SecretError as err:
        raise ToolFailure(f"{err}: {SECRET_ADVICE}") from None
    except NoteError as err:
        raise ToolFailure(str(err)) from None


# Notes (seed 002) ----------------------------------------------------------------------------------


def memory_create(ctx: ToolContext, name: str, content: str, tags: list[str] | None = None,
                  scope: str | None = None) -> dict[str, Any]:
    result = _notes(lambda: ctx.store.create(name, content, tags or [], scope))
    return {"created": True, "note": _note_ref(result.note), "warnings": result.warnings}


def memory_read(ctx: ToolContext, name: str, scope: str | None = None) -> dict[str, Any]:
    stored = _notes(lambda: ctx.store.read(name, scope))
    return stored.to_json()


def memory_list(ctx: ToolContext, search: str = "", tags: list[str] | None = None, scope: str | None = None,
                cursor: str | None = None, limit: int | None = None) -> dict[str, Any]:
    size = limit or 20
    page = _notes(lambda: ctx.store.list(search or "", tags or [], scope or "both", size, cursor))
    return page.to_json()


def memory_edit(ctx: ToolContext, name: str, content: str, scope: str | None = None) -> dict[str, Any]:
    result = _notes(lambda: ctx.store.edit(name, content, scope))
    return {"changed": result.changed, "note": _note_ref(result.note), "warnings": result.warnings}


def memory_delete(ctx: ToolContext, name: str, scope: str | None = None) -> dict[str, Any]:
    result = _notes(lambda: ctx.store.delete(name, scope))
    return {"deleted": _note_ref(result.note), "warnings": result.warnings}


def memory_search(ctx: ToolContext, query: str, scope: str | None = None, cursor: str | None = None,
                  limit: int | None = None) -> dict[str, Any]:
    size = limit or 20
    page = _notes(lambda: ctx.store.search(query, scope or "both", (), size, cursor))
    return page.to_json()


# Memory files (seeds 001, 004) ---------------------------------------------------------------------


def _refuse_long(fact: str) -> None:
    """The SDK checks `fact`; this checks the text the user may have edited in the form."""
    if len(fact) > MAX_FACT_CHARS:
        raise ToolFailure(f"the fact is {len(fact)} characters, over the {MAX_FACT_CHARS}-character limit of a memory "
                          "entry (a line or a paragraph): save a short statement, and keep longer knowledge in a "
                          "note (memory_create)")


@dataclass(frozen=True)
class SavePlan:
    """Where `save_memory` would write FACT, and what would change."""

    scope: Scope
    path: Path
    text: str  # the cleaned entry text
    already_present: bool
    diff: str
    secret: Secret | None  # the first secret in the fact: only the user may allow saving it


def plan_save(ctx: ToolContext, fact: str, scope: str | None) -> SavePlan:
    """The file, the entry and the diff `save_memory` would write, computed from the file as it
    is now (the write itself computes it again under the lock)."""
    if not clean_entry_text(fact):
        raise ToolFailure("nothing to save: the fact is empty once '#' and list markers are removed")
    try:
        chosen, root = resolve_scope(scope, ctx.directory)
    except NoProjectError as err:
        raise ToolFailure(str(err)) from None
    path = memory_file_for(chosen, root, ctx.settings)
    try:  # a link out of the project is refused before its target is read or shown in a diff
        allowed_target(path, write_area(chosen, root, ctx.settings, path))
    except MemoryFileError as err:
        raise ToolFailure(str(err)) from None
    current = read_memory_file(path, ctx.settings.max_file_bytes)
    if current.exists and not current.ok:
        raise ToolFailure(f"{path}: {current.reason}; fix or remove it, then try again")
    try:
        plan = plan_add(current.text, fact)
    except EntryTextError as err:
        raise ToolFailure(str(err)) from None
    diff = "".join(difflib.unified_diff(current.text.splitlines(keepends=True), plan.content.splitlines(keepends=True),
                                        fromfile=f"a/{path.name}", tofile=f"b/{path.name}", n=2))
    found = find_secrets(fact)
    return SavePlan(chosen, path, plan.text, plan.already_present, diff, found[0] if found else None)


def save_fact(ctx: ToolContext, text: str, scope: Scope, allow_secret: bool = False) -> dict[str, Any]:
    """Write TEXT as an entry of SCOPE's memory file (what `memory-lens add` does). ALLOW_SECRET:
    the user confirmed a secret in the approval form; the result then does not repeat the text."""
    _refuse_long(text)
    try:
        result = save_entry(text, ctx.directory, ctx.settings, scope, allow_secret=allow_secret)
    except SecretError as err:
        raise ToolFailure(f"{err}: {SECRET_ADVICE}") from None
    except (EntryTextError, NoProjectError, MemoryFileError) as err:
        raise ToolFailure(str(err)) from None
    return {"saved": result.added, "already_present": not result.added, "scope": result.scope.value,
            "path": str(result.path), "line": result.line + 1,
            "text": SECRET_WITHHELD if allow_secret and find_secrets(result.text) else result.text,
            "created_file": result.created}


SECRET_WITHHELD = "(not repeated: it holds a secret the user chose to save)"


def root_paths(uris: Sequence[str]) -> list[Path]:
    """The directories of a client's roots (`file:` URIs; others are skipped)."""
    paths = []
    for uri in uris:
        parsed = urlparse(uri)
        if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
            path = unquote(parsed.path)
            if os.name == "nt" and path[2:3] == ":":  # file:///C:/x
                path = path[1:]
            paths.append(Path(path))
    return paths


def client_area(ctx: ToolContext, roots: Sequence[Path] | None, agents: Sequence[str] = ()) -> ReadArea:
    """What the client may be shown: its ROOTS (without any, the project of the server's directory,
    or that directory outside a project), the global memory directory and the user-level
    directories of AGENTS (`~/.claude`, `$CODEX_HOME`, ...; docs/security.md)."""
    homes = [d for d in (user_dir(a) for a in agents) if d is not None]
    if roots:
        what = "the client's roots " + ", ".join(map(str, roots))
    else:
        roots = [ctx.project_root or ctx.directory]
        what = f"the server's project {roots[0]}"
    if homes:
        what += (", the agent's own directory " if len(homes) == 1 else ", the agents' own directories ") \
            + ", ".join(map(str, homes))
    return read_area([*roots, *homes], ctx.settings.global_dir, what)


def _target(ctx: ToolContext, path: str | None, area: ReadArea) -> Path:
    raw = path if path and os.path.isabs(os.path.expanduser(path)) else str(ctx.directory / (path or ""))
    try:
        target = resolve_target(raw)
    except TargetError as err:
        raise ToolFailure(str(err)) from None
    if not is_inside(target, area.roots):
        raise ToolFailure(f"{path or target} is outside {area.what}: give a path inside them")
    return target


def _read_memory(ctx: ToolContext, path: str | None, roots: Sequence[Path] | None) -> tuple[Any, list[dict]]:
    """The memory for PATH as the client may see it, and what was withheld from it (path, reason)."""
    area = client_area(ctx, roots)
    memory = load_memory(_target(ctx, path, area), ctx.settings, reader=area.reader(ctx.settings.max_file_bytes),
                         withheld=area.withheld)
    withheld = [{"path": str(s.path), "reason": s.reason} for s in memory.sources
                if not s.readable and area.withheld(s.path)]
    for source in memory.sources:
        withheld += [{"path": str(n.path), "reason": n.message} for n in _withheld_imports(source.imports)]
    return memory, withheld


def _withheld_imports(nodes: Sequence[Any]):
    for node in nodes:
        if node.status == WITHHELD:
            yield node
        yield from _withheld_imports(node.children)


def list_memory_entries(ctx: ToolContext, scope: str | None = None, path: str | None = None,
                        cursor: str | None = None, limit: int | None = None,
                        roots: Sequence[Path] | None = None) -> dict[str, Any]:
    chosen = scope or "all"
    size = limit or 50
    memory, withheld = _read_memory(ctx, path, roots)
    scopes = [Scope.GLOBAL, Scope.PROJECT] if chosen == "all" else [Scope(chosen)]
    entries = list_entries(memory, scopes)
    owner = paging.fingerprint("entries", chosen, str(memory.target_dir))
    try:
        offset = paging.decode_cursor(cursor, owner)
    except paging.CursorError as err:
        raise ToolFailure(str(err)) from None
    page = entries[offset:offset + size]
    return {"entries": [e.to_json() for e in page], "total": len(entries),
            "next_cursor": paging.next_cursor(offset, len(page), len(entries), owner),
            "warnings": list(memory.warnings), "withheld": withheld}


def remove_memory_entry(ctx: ToolContext, text: str, scope: str | None = None) -> dict[str, Any]:
    warnings: list[str] = []
    try:
        removed = remove_entry(text, ctx.directory, ctx.settings, scope, warn=warnings.append)
    except (EntryNotFoundError, MemoryFileError) as err:
        raise ToolFailure(str(err).strip("'\"")) from None
    return {"removed": removed.to_json(), "warnings": warnings}


def effective_memory(ctx: ToolContext, path: str | None = None, agent: str | None = None,
                     roots: Sequence[Path] | None = None) -> dict[str, Any]:
    """What `memory-lens show --format json` prints for PATH (`AgentView.to_json`) as AGENT loads
    it, less what the client may not see (ROOTS: its roots; see `client_area`), plus what was
    withheld. Claude Code, for a file PATH, is started in the server's directory (as `show` in the
    current directory) and reads PATH."""
    if agent in (None, gemini.AGENT):
        memory, withheld = _read_memory(ctx, path, roots)
        return {**gemini.view_of(memory).to_json(), "withheld": withheld}
    area = client_area(ctx, roots, [agent])
    target = _target(ctx, path, area)
    asked = _asked(ctx, path)
    read = agent in ("claude", "copilot-vscode") and os.path.isfile(asked)
    from memory_lens.core.explain import start_dir

    with confined(area.withheld):
        view = agent_view(agent, start_dir(target, ctx.directory) if read else target, ctx.settings,
                          file=asked if read else None)
    withheld = [{"path": str(s.path), "reason": s.reason} for s in view.sources
                if not s.loaded and area.withheld(s.path)]
    return {**view.to_json(), "withheld": withheld}


def _asked(ctx: ToolContext, path: str | None) -> Path:
    """PATH as given, absolute (relative to the server's directory)."""
    return Path(os.path.abspath(os.path.join(ctx.directory, os.path.expanduser(path or ""))))


def explain_context(ctx: ToolContext, path: str, agents: Sequence[str] | None = None,
                    roots: Sequence[Path] | None = None) -> dict[str, Any]:
    """`memory-lens explain PATH --format json` (`core.explain`), for a PATH inside the client's
    roots; a file outside them is not read: not loaded, with the reason."""
    from memory_lens.core.agents import AGENTS
    from memory_lens.core.explain import explain

    area = client_area(ctx, roots, agents or AGENTS)
    _target(ctx, path, area)
    with confined(area.withheld):
        return explain(_asked(ctx, path), ctx.settings, agents).to_json()
