"""Saving, listing and removing memory entries: the operations behind `add`, `list` and `remove`.

Project scope writes to `<project root>/<first filename>`; global scope to
`<global dir>/<first filename>`. Without an explicit scope, saving goes to the project when a
project root exists, else to the global file. Listing and removing work over the files of the
chain: "project" means every file below the global ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable

from memory_lens.core.discovery import Scope, find_project_root
from memory_lens.core.edit import AddPlan, RemovePlan, UnsafeEntryError, find_entry, plan_add, plan_remove
from memory_lens.core.files import too_large_reason
from memory_lens.core.markdown import Entry, clean_entry_text, normalize, parse
from memory_lens.core.merge import Memory, Source, load_memory, utf8_size
from memory_lens.core.secrets import refuse_secrets
from memory_lens.core.settings import Settings
from memory_lens.core.write_policy import DEFAULT_HINT, WriteArea, directory_area, global_area, project_area
from memory_lens.core.writer import MemoryFileError, update_memory_file


class NoProjectError(ValueError):
    """Project scope was asked for where there is no project root."""


class EntryNotFoundError(LookupError):
    """No entry matches the text to remove."""


@dataclass(frozen=True)
class SaveResult:
    """The outcome of saving one entry."""

    path: Path
    scope: Scope
    text: str
    line: int  # 0-based line of the entry in the file
    added: bool  # False when an equal entry was already there
    created: bool  # True when the file did not exist before


@dataclass(frozen=True)
class ListedEntry:
    """One entry of a chain's memory file."""

    text: str
    path: Path
    line: int  # 1-based
    scope: Scope
    end_line: int = 0  # 1-based, last line of the entry

    def to_json(self) -> dict:
        """An entry's one JSON: `list --format json`, MCP's list_memory_entries and remove_memory_entry,
        the language server's list and remove commands (which add `uri` and more)."""
        return entry_json(self.text, self.path, self.line, self.scope)


@dataclass(frozen=True)
class RemoveResult:
    path: Path
    scope: Scope
    text: str
    line: int  # 1-based line the entry started on

    def to_json(self) -> dict:
        return entry_json(self.text, self.path, self.line, self.scope)


def entry_json(text: str, path: Path, line: int, scope: Scope) -> dict:
    """An entry as JSON: its text, file, 1-based first line and scope."""
    return {"text": text, "path": str(path), "line": line, "scope": scope.value}


def resolve_scope(scope: Scope | str | None, target_dir: Path) -> tuple[Scope, Path | None]:
    """The scope to save in (project by default inside a project) and the project root."""
    root = find_project_root(target_dir)
    chosen = Scope(scope) if scope else (Scope.PROJECT if root else Scope.GLOBAL)
    if chosen is Scope.PROJECT and root is None:
        raise NoProjectError(
            f"{target_dir} is not inside a project (no .git found above it): "
            "save to global memory instead, or run `git init` at the project root"
        )
    return chosen, root


def memory_file_for(scope: Scope, root: Path | None, settings: Settings) -> Path:
    """The file new entries of SCOPE are written to."""
    if scope is Scope.GLOBAL:
        return settings.global_file()
    assert root is not None
    return root / settings.primary_filename


def write_area(scope: Scope, root: Path | None, settings: Settings, path: Path,
               hint: str = DEFAULT_HINT) -> WriteArea:
    """Where a write to memory file PATH of SCOPE may land (`write_policy`): the global memory
    directory, the project ROOT, or (a file of no project) PATH's own directory; links out of it
    are followed as SETTINGS say, and a file over its size limit is not rewritten."""
    if scope is Scope.GLOBAL:
        area = global_area(settings.global_dir, settings.follow_outside_links, hint)
    elif root is not None:
        area = project_area(root, settings.follow_outside_links, hint)
    else:
        area = directory_area(path.parent, settings.follow_outside_links, hint)
    return replace(area, max_file_bytes=settings.max_file_bytes)


def save_entry(text: str, target_dir: Path, settings: Settings, scope: Scope | str | None = None,
               hint: str = DEFAULT_HINT, allow_secret: bool = False) -> SaveResult:
    """Save TEXT as an entry in the scope's memory file, unless an equal entry is already there.
    A link out of the project (or the global directory) is written through only when
    `settings.follow_outside_links`; HINT says how to allow it. TEXT holding a secret raises
    SecretError (`core/secrets.py`) unless ALLOW_SECRET."""
    chosen, root = resolve_scope(scope, target_dir)
    path = memory_file_for(chosen, root, settings)
    plan_add("", text)  # bad text (empty, a NUL) fails here, before the file is touched
    refuse_secrets(text, allow_secret)
    refuse_too_large(path, settings)
    existed = path.exists()

    def change(content: str) -> tuple[str | None, AddPlan]:
        try:
            plan = plan_add(content, text)
        except UnsafeEntryError as err:
            raise err.at(path) from None
        if not plan.already_present and (size := utf8_size(plan.content)) > settings.max_file_bytes:
            # Past the limit no later write or remove could read the file again.
            raise MemoryFileError(f"{path}: saving this entry would make it {size} bytes, over the "
                                  f"{settings.max_file_bytes}-byte limit of the files Memory Lens reads; nothing written")
        return (None if plan.already_present else plan.content), plan

    plan = update_memory_file(path, change, area=write_area(chosen, root, settings, path, hint))
    return SaveResult(path, chosen, plan.text, plan.entry_line, not plan.already_present,
                      created=not existed and not plan.already_present)


def refuse_too_large(path: Path, settings: Settings) -> None:
    """Raise MemoryFileError when memory file PATH is over the size limit (it is never read)."""
    try:
        size = os.stat(path).st_size
    except (OSError, ValueError):
        return  # missing or unreadable: the writer says what is wrong
    if size > settings.max_file_bytes:
        raise MemoryFileError(f"{path}: {too_large_reason(size, settings.max_file_bytes)}; nothing written")


def list_entries(memory: Memory, scopes: Iterable[Scope] = (Scope.GLOBAL, Scope.PROJECT)) -> list[ListedEntry]:
    """Every entry of the usable files of MEMORY's chain in SCOPES, in chain order."""
    wanted = set(scopes)
    out: list[ListedEntry] = []
    for src in memory.sources:
        if src.scope not in wanted or not src.readable:
            continue
        for e in parse(src.text).entries:
            out.append(ListedEntry(e.text, src.path, e.line + 1, src.scope, e.end_line + 1))
    return out


def remove_entry(
    text: str,
    target_dir: Path,
    settings: Settings,
    scope: Scope | str | None = None,
    warn: Callable[[str], None] | None = None,
    hint: str = DEFAULT_HINT,
) -> RemoveResult:
    """Remove the first entry (in `list` order) whose normalised form matches TEXT's. WARN, when
    given, hears about the unusable files of the chain (they are skipped). Links out of the
    project are followed as `save_entry` says."""
    if not clean_entry_text(text):
        raise EntryNotFoundError("nothing to remove: the text is empty")
    memory = load_memory(target_dir, settings)
    for warning in memory.warnings if warn is not None else ():
        warn(warning)
    scopes = removal_scopes(scope)
    for src in memory.sources:
        if src.scope in scopes and not src.readable and src.bytes > settings.max_file_bytes:
            # It may hold the entry, and it cannot be read: say so rather than "no entry matches".
            raise MemoryFileError(f"{src.path}: {too_large_reason(src.bytes, settings.max_file_bytes)}; "
                                  "nothing removed")
    for src in removal_sources(memory, scopes):

        def change(content: str) -> tuple[str | None, Entry | None]:
            entry = find_entry(parse(content), text)
            if entry is None:
                return None, None
            plan: RemovePlan = plan_remove(content, entry)
            return plan.content, entry

        area = write_area(src.scope, memory.project_root, settings, src.path, hint)
        removed = update_memory_file(src.path, change, create=False, area=area)
        if removed is not None:
            return RemoveResult(src.path, src.scope, removed.text, removed.line + 1)
    where = " or ".join(s.value for s in scopes)
    raise EntryNotFoundError(
        f"no {where} memory entry matches {clean_entry_text(text)!r}; run `memory-lens list` to see the entries"
    )


def removal_scopes(scope: Scope | str | None) -> list[Scope]:
    """The scopes `remove` searches: SCOPE, or both (global first)."""
    return [Scope(scope)] if scope else [Scope.GLOBAL, Scope.PROJECT]


def removal_sources(memory: Memory, scopes: Iterable[Scope]) -> list[Source]:
    """The files of MEMORY's chain `remove` searches, in `list` order: readable, in SCOPES."""
    wanted = set(scopes)
    return [src for src in memory.sources if src.scope in wanted and src.readable]


def first_entry(memory: Memory, text: str, scope: Scope | str | None = None) -> tuple[Source, Entry] | None:
    """The file and entry `remove_entry` would remove for TEXT, as MEMORY stands."""
    if not clean_entry_text(text):
        return None
    for src in removal_sources(memory, removal_scopes(scope)):
        if (entry := find_entry(parse(src.text), text)) is not None:
            return src, entry
    return None


def remove_entry_at(path: Path, line: int, area: WriteArea | None = None) -> Entry:
    """Remove the entry covering 0-based LINE of memory file PATH; raises EntryNotFoundError.
    AREA is where the write may land (`write_area`; by default PATH's own directory)."""

    def change(content: str) -> tuple[str | None, Entry | None]:
        entry = parse(content).entry_at(line)
        if entry is None:
            return None, None
        return plan_remove(content, entry).content, entry

    removed = update_memory_file(path, change, create=False, area=area)
    if removed is None:
        raise EntryNotFoundError(f"{path}:{line + 1}: no memory entry on that line")
    return removed


def find_saved_entry(content: str, text: str, line: int) -> Entry | None:
    """The entry of CONTENT that saving TEXT made at 0-based LINE: the one whose normalised text
    is TEXT's, nearest LINE (lines may have been added or removed above it since); None if none."""
    wanted = normalize(clean_entry_text(text))
    same = [e for e in parse(content).entries if e.normalized == wanted]
    return min(same, key=lambda e: abs(e.line - line), default=None)


def remove_saved_entry(path: Path, text: str, line: int, area: WriteArea | None = None) -> Entry:
    """Remove from memory file PATH the entry that saving TEXT made at 0-based LINE (what undoing
    that save means; see `find_saved_entry`). Raises EntryNotFoundError when the file no longer has
    it: no other entry is ever taken in its place."""

    def change(content: str) -> tuple[str | None, Entry | None]:
        entry = find_saved_entry(content, text, line)
        if entry is None:
            return None, None
        return plan_remove(content, entry).content, entry

    removed = update_memory_file(path, change, create=False, area=area)
    if removed is None:
        first = clean_entry_text(text).splitlines()[0] if clean_entry_text(text) else text
        raise EntryNotFoundError(f"{path}: the entry {first!r} is no longer there; nothing removed")
    return removed


__all__ = [
    "EntryNotFoundError",
    "ListedEntry",
    "MemoryFileError",
    "NoProjectError",
    "RemoveResult",
    "SaveResult",
    "find_saved_entry",
    "first_entry",
    "list_entries",
    "memory_file_for",
    "remove_entry",
    "remove_entry_at",
    "remove_saved_entry",
    "resolve_scope",
    "save_entry",
    "write_area",
]
