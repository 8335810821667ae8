"""The notes store: the operations of the notes spec (seed 002) over the two notes directories.

    create(name, content, tags=[], scope)      read(name, scope)       edit(name, content, scope)
    list(search="", tags=[], scope="both")     delete(name, scope)     search(query, scope="both")

Resolution: without a scope, `read`, `edit` and `delete` take the project's note when there is
one, else the global one; an explicit scope looks only there. `create` goes to the project
inside a project, else to the global notes. `list` and `search` cover both scopes unless told
otherwise, project notes first; a global note hidden by a project note of the same name is
marked `shadowed`.

Results are small and paginated: `list` and `search` return a page of summaries (a snippet, not
the content) and a cursor for the next page; only `read` returns a note's full content. Files
that are not usable notes are reported (`problems`), never guessed at, never overwritten.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from memory_lens.core import paging
from memory_lens.core.discovery import Scope, find_project_root
from memory_lens.core.notes import fulltext
from memory_lens.core.notes.disk import (
    create_file,
    create_files,
    delete_note_file,
    read_note_file,
    rewrite_note_file,
)
from memory_lens.core.notes.index import NotesIndex, Row
from memory_lens.core.notes.locations import Location, NotesSettings, locations
from memory_lens.core.notes.model import (
    Note,
    NoteConflictError,
    NoteError,
    NoteExistsError,
    NoteFileError,
    NoteInvalidError,
    NoteNotFoundError,
    Problem,
    StoredNote,
    folded_name,
    new_note,
    now_timestamp,
    parse_scope,
    revision_of,
    skeleton,
    validate_content,
    validate_name,
    validate_tags,
)
from memory_lens.core.notes.naming import candidate_filenames
from memory_lens.core.secrets import refuse_secrets
from memory_lens.core.write_policy import DEFAULT_HINT, WriteArea, project_area
from memory_lens.core.writer import MemoryFileError, update_memory_file

DEFAULT_LIMIT = 20
MAX_LIMIT = 200
INDEX_VERSION = 1


class NoProjectError(NoteError):
    """Project notes were asked for outside any project. `worded(option)` is the message with
    the way to ask for global notes in the caller's own words (`--scope global` in the CLI)."""

    reason = "not inside a project (no .git found above the working directory), so there are no project notes"

    def __init__(self) -> None:
        super().__init__(self.worded("the global scope"))

    def worded(self, global_scope: str) -> str:
        return f"{self.reason}: use {global_scope}, or run `git init` at the project root"


@dataclass(frozen=True)
class NoteSummary:
    """One note in a list or search result: everything but the full content."""

    name: str
    scope: Scope
    tags: tuple[str, ...]
    created_at: str
    updated_at: str
    snippet: str
    path: Path
    revision: str
    shadowed: bool
    score: float | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"name": self.name, "scope": self.scope.value, "tags": list(self.tags),
                                "created_at": self.created_at, "updated_at": self.updated_at,
                                "snippet": self.snippet, "path": str(self.path), "revision": self.revision,
                                "shadowed": self.shadowed}
        if self.score is not None:
            data["score"] = round(self.score, 6)
        return data


@dataclass(frozen=True)
class Page:
    """A page of notes: the items, how many there are in all, the cursor of the next page (None
    on the last), and the unusable files of the scopes listed (on the first page only)."""

    notes: list[NoteSummary]
    total: int
    next_cursor: str | None
    problems: list[Problem] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"notes": [n.to_json() for n in self.notes], "total": self.total,
                "next_cursor": self.next_cursor, "problems": [p.to_json() for p in self.problems]}


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the note now on disk, whether anything changed, and warnings (an
    `index.json` that could not be kept in step)."""

    note: StoredNote
    changed: bool
    warnings: list[str] = field(default_factory=list)


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise NoteInvalidError(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return min(limit, MAX_LIMIT)


class NotesStore:
    """Notes of one project (or none) and the global notes."""

    def __init__(self, settings: NotesSettings, project_root: Path | None, *,
                 index_dir: Path | None = None, freshness: float = 0.0,
                 follow_outside_links: bool = False, hint: str = DEFAULT_HINT) -> None:
        self.settings = settings
        self.project_root = project_root
        self.follow_outside_links = follow_outside_links  # `Settings.follow_outside_links`
        self.hint = hint
        self.locations = locations(settings, project_root)
        self._bulk: set[Location] | None = None
        self.index = NotesIndex(self.locations, index_dir=index_dir, freshness=freshness,
                                areas={loc.scope: self.write_area(loc) for loc in self.locations})

    @classmethod
    def for_directory(cls, directory: Path, settings: NotesSettings, **options: Any) -> NotesStore:
        """The store of DIRECTORY's project (the nearest `.git` at or above it), if any."""
        return cls(settings, find_project_root(directory), **options)

    def close(self) -> None:
        self.index.close()

    # Locations -------------------------------------------------------------------------------

    def write_area(self, loc: Location) -> WriteArea:
        """Where writes to LOC may land (`write_policy`): project notes inside the project (so a
        `.memory-lens/notes` or `.aicoder/memory` that links out of it is refused), global notes
        inside the global notes directory."""
        if loc.scope is Scope.PROJECT and self.project_root is not None:
            return project_area(self.project_root, self.follow_outside_links, self.hint)
        return WriteArea((loc.directory,), f"the global notes directory {loc.directory}",
                         self.follow_outside_links, self.hint)

    def location(self, scope: Scope) -> Location:
        for loc in self.locations:
            if loc.scope is scope:
                return loc
        raise NoProjectError()

    def _scopes(self, scope: Any) -> list[Scope]:
        chosen = parse_scope(scope, allow_both=True)
        if chosen is None:
            return [loc.scope for loc in self.locations]
        self.location(chosen)
        return [chosen]

    def default_scope(self) -> Scope:
        """Where `create` puts a note without a scope: the project inside a project."""
        return self.locations[0].scope

    # Finding one note -------------------------------------------------------------------------

    def _lookup(self, loc: Location, name: str) -> StoredNote | None:
        """The note NAME in LOC: at its own file name, else wherever the index saw it at its last
        sync. Without a sync, so that creating a note costs the same however many there are: a
        file written by hand under another name since is found at the next sync (and, when a note
        of its name was created meanwhile, reported as a duplicate)."""
        broken: NoteFileError | None = None
        for fname in candidate_filenames(name):
            path = loc.directory / fname
            try:
                stored = read_note_file(path, loc.scope, self.write_area(loc))
            except NoteNotFoundError:
                continue
            except NoteFileError as err:
                broken = broken or NoteFileError(f"{path}: {err}")
                continue
            if stored.name == name:
                return stored
        for fname in self.index.holders(loc.scope, name):
            try:
                stored = read_note_file(loc.directory / fname, loc.scope, self.write_area(loc))
            except NoteError:
                continue
            if stored.name == name:
                return stored
        if broken is not None:
            raise broken
        return None

    def _lookup_synced(self, loc: Location, name: str) -> StoredNote | None:
        """`_lookup`, with the index brought in step first when the note is not at its own file."""
        found = self._lookup(loc, name)
        if found is None:
            self.index.sync()
            found = self._lookup(loc, name)
        return found

    def read(self, name: str, scope: Any = None) -> StoredNote:
        """The note NAME: the project's, else the global one (or only in SCOPE)."""
        validate_name(name)
        chosen = parse_scope(scope)
        searched = [self.location(chosen)] if chosen else self.locations
        for loc in searched:
            found = self._lookup_synced(loc, name)
            if found is not None:
                return found
        where = f"{chosen.value} notes" if chosen else " or ".join(f"{loc.scope.value}" for loc in searched) + " notes"
        raise NoteNotFoundError(f"no note named {name!r} in {where}; list them with `memory-lens notes list`")

    # Writing -----------------------------------------------------------------------------------

    def create(self, name: str, content: str, tags: Iterable[str] | None = None, scope: Any = None,
               allow_secret: bool = False) -> WriteResult:
        """A new note NAME; NoteExistsError when SCOPE already has a note of that name; SecretError
        when CONTENT holds a secret, unless ALLOW_SECRET (`core/secrets.py`)."""
        chosen = parse_scope(scope) or self.default_scope()
        self.location(chosen)  # outside a project: NoProjectError before anything else
        note = new_note(name, content, tags, chosen)
        refuse_secrets(content, allow_secret, "the note ")
        result = self.insert(note)
        return WriteResult(result.note, True, result.warnings + self._lookalikes(name))

    def _lookalikes(self, name: str) -> list[str]:
        """A warning for each note, of either scope, whose name looks like NAME but is another
        (`model.skeleton`: `Nоtes` with a Cyrillic о and `Notes`), found through the index's
        `look` column: one indexed look-up, however many notes there are."""
        wanted, folded = skeleton(name), folded_name(name)
        out = []
        for loc in self.locations:
            for other in self.index.names(loc.scope, look=wanted):
                theirs = folded_name(other)
                if theirs != folded:
                    mine, its = next((a, b) for a, b in zip(folded, theirs) if a != b)
                    out.append(f"the note name {name!r} looks like that of the {loc.scope.value} note {other!r} "
                               f"but is another name (U+{ord(mine):04X} where it has U+{ord(its):04X}); "
                               "check it is the one you meant")
        return out

    def _exists(self, name: str, scope: Scope) -> NoteExistsError:
        return NoteExistsError(f"a {scope.value} note named {name!r} already exists; edit it, "
                               "or delete it first")

    def free_path(self, loc: Location, name: str) -> Path:
        """The file a new note NAME goes to: its file name, unless another note or an unusable
        file is there (then the longer form, when NAME has one)."""
        names = candidate_filenames(name)
        for fname in names:
            path = loc.directory / fname
            try:
                there = read_note_file(path, loc.scope, self.write_area(loc))
            except NoteNotFoundError:
                return path
            except NoteFileError as err:
                if fname == names[-1]:
                    raise NoteFileError(f"{path}: {err}; a note named {name!r} would be written there: "
                                        "fix or remove that file first") from None
                continue
            if there.name == name:  # another process created it since the caller looked
                raise self._exists(name, loc.scope)
        raise NoteExistsError(f"cannot create the note {name!r}: its files {', '.join(names)} in {loc.directory} "
                              "hold other notes; give it another name")

    def find(self, name: str, scope: Scope) -> StoredNote | None:
        """The note NAME in SCOPE only, or None."""
        validate_name(name)
        return self._lookup_synced(self.location(scope), name)

    def insert(self, note: Note) -> WriteResult:
        """Create NOTE exactly as given (its timestamps kept: import); NoteExistsError when its
        scope already has a note of that name."""
        loc = self.location(note.scope)
        if self._lookup(loc, note.name) is not None:
            raise self._exists(note.name, note.scope)
        path, text = self.free_path(loc, note.name), note.encode()
        try:
            create_file(path, text, self.write_area(loc))  # NoteExistsError when PATH exists, whatever it holds
        except NoteExistsError:
            raise self._exists(note.name, note.scope) from None
        return WriteResult(StoredNote(note, path, revision_of(text)), True, self._after_write(loc, path.name))

    def overwrite(self, existing: StoredNote, note: Note) -> WriteResult:
        """Replace the note EXISTING (as read) with NOTE, in EXISTING's file (import --replace)."""
        loc = self.location(existing.scope)

        def transform(current: StoredNote) -> Note | None:
            _check_same(current, existing.name, None)
            return None if current.note == note else replace(note, scope=loc.scope)

        result, changed = rewrite_note_file(existing.path, loc.scope, transform, self.write_area(loc))
        return WriteResult(result, changed, self._after_write(loc, existing.path.name) if changed else [])

    def edit(self, name: str, content: str | None = None, scope: Any = None, tags: Iterable[str] | None = None,
             expected_revision: str | None = None, allow_secret: bool = False) -> WriteResult:
        """Replace the content and/or the tags of the note NAME (found as `read` finds it).
        With EXPECTED_REVISION, refuse (NoteConflictError) if the file changed since; new CONTENT
        holding a secret raises SecretError, unless ALLOW_SECRET."""
        if content is not None:
            validate_content(content)
            refuse_secrets(content, allow_secret, "the note ")
        new_tags = validate_tags(tags) if tags is not None else None
        stored = self.read(name, scope)
        loc = self.location(stored.scope)

        def transform(current: StoredNote) -> Note | None:
            _check_same(current, name, expected_revision)
            note = current.note
            body = note.content if content is None else content
            labels = note.tags if new_tags is None else new_tags
            if body == note.content and labels == note.tags:
                return None
            return replace(note, content=body, tags=labels, updated_at=now_timestamp(), scope=loc.scope)

        result, changed = rewrite_note_file(stored.path, loc.scope, transform, self.write_area(loc))
        warnings = self._after_write(loc, stored.path.name) if changed else []
        return WriteResult(result, changed, warnings)

    def delete(self, name: str, scope: Any = None, expected_revision: str | None = None) -> WriteResult:
        """Delete the note NAME (found as `read` finds it)."""
        stored = self.read(name, scope)
        loc = self.location(stored.scope)
        deleted = delete_note_file(stored.path, loc.scope, lambda current: _check_same(current, name, expected_revision),
                                   self.write_area(loc))
        return WriteResult(deleted, True, self._after_write(loc, stored.path.name))

    def write_raw(self, loc: Location, fname: str, text: str, replace: bool) -> bool:
        """Write TEXT as file FNAME of LOC (restore): only when the file is missing, or REPLACE.
        True when written."""
        path = loc.directory / fname

        def change(current: str) -> tuple[str | None, bool]:
            if current == text:
                return None, False
            if (current or path.exists()) and not replace:
                raise NoteExistsError(f"{path} exists with other content")
            return text, True

        try:
            written = update_memory_file(path, change, area=self.write_area(loc))
        except MemoryFileError as err:
            raise NoteFileError(str(err)) from None
        if written:
            self._after_write(loc, fname)
        return written

    def _after_write(self, loc: Location, fname: str) -> list[str]:
        """Index what was written; keep `index.json` in step (aicoder layout). In `bulk`: once,
        at its end."""
        if self._bulk is not None:
            self._bulk.add(loc)
            return []
        self.index.record(loc, fname)
        return self.refresh_index_file(loc)

    @contextmanager
    def bulk(self) -> Iterator[list[str]]:
        """Many writes at once (restore, import): the index and `index.json` are brought in step
        once, at the end, instead of after each write (which lists the directory, so thousands of
        writes would cost the square of their number). Yields the list its warnings go to."""
        self._bulk = set()
        warnings: list[str] = []
        try:
            yield warnings
        finally:
            touched, self._bulk = self._bulk, None
            self.index.sync()
            for loc in sorted(touched, key=lambda t: t.scope.value):
                warnings += self.refresh_index_file(loc)

    def create_many(self, loc: Location, files: Sequence[tuple[str, str]]) -> list[str]:
        """Create the note files FILES ((file name, text)) of LOC at once (`disk.create_files`)
        in `bulk`; the file names that were taken (nothing written there)."""
        assert self._bulk is not None, "create_many runs in bulk()"
        self._bulk.add(loc)
        return create_files(loc.directory, files, self.write_area(loc))

    def names(self, scope: Scope) -> dict[str, str]:
        """The file name of every note of SCOPE, by note name (the index brought in step first)."""
        self.index.sync()
        return self.index.names(scope)

    def refresh_index_file(self, loc: Location) -> list[str]:
        """Write LOC's `index.json` from its notes (aicoder layout); warnings when it cannot be."""
        index_file = loc.index_file
        if index_file is None:
            return []
        self.index.sync(force=True)
        entries = {row.name: {"file": row.path.name, "tags": list(row.tags), "created_at": row.created_at,
                              "updated_at": row.updated_at} for row in sorted(self._all_rows(loc.scope), key=lambda r: r.name)}
        text = json.dumps({"version": INDEX_VERSION, "notes": entries}, ensure_ascii=False, indent=2) + "\n"
        try:
            update_memory_file(index_file, lambda current: (None if current == text else text, None),
                               area=self.write_area(loc))
        except MemoryFileError as err:
            return [f"{err}; the notes are saved, but the index was not updated"]
        return []

    def _all_rows(self, scope: Scope, tags: Sequence[str] = ()) -> list[Row]:
        ids, _ = self.index.list_ids([scope], tags, 0, 1 << 62)
        return [row for start in range(0, len(ids), 500) for row in self.index.rows(ids[start:start + 500])]

    def every_note(self, scope: Scope, tags: Sequence[str] = ()) -> list[Note]:
        """Every note of SCOPE (having every tag of TAGS) in listing order, as the index holds
        them after bringing it in step: `export`, in one pass whatever the number of notes."""
        self.location(scope)
        wanted = validate_tags(tags)
        self.index.sync()
        return [Note(r.name, r.content, r.tags, r.created_at, r.updated_at, r.scope)
                for r in self._all_rows(scope, wanted)]

    # Listing and searching --------------------------------------------------------------------

    def list(self, search: str = "", tags: Sequence[str] = (), scope: Any = "both",
             limit: int | None = None, cursor: str | None = None) -> Page:
        """A page of notes in SCOPE, project first, by name; with SEARCH, only the notes it
        matches (the search syntax of `search`); with TAGS, only notes having every tag."""
        return self._query("list", search, scope, tags, limit, cursor)

    def search(self, query: str, scope: Any = "both", tags: Sequence[str] = (),
               limit: int | None = None, cursor: str | None = None) -> Page:
        """A page of the notes QUERY matches, best first (BM25)."""
        return self._query("search", query, scope, tags, limit, cursor)

    def _query(self, kind: str, text: str, scope: Any, tags: Sequence[str], limit: int | None,
               cursor: str | None) -> Page:
        scopes = self._scopes(scope)
        wanted = validate_tags(tags)
        size = _limit(limit)
        if kind == "search" and (not isinstance(text, str) or not text.strip()):
            raise NoteInvalidError("give something to search for")
        query = None
        if text and text.strip():
            query = fulltext.parse_query(text)
            if query.empty:
                raise NoteInvalidError(f"nothing to search for in {text!r}: give at least one word")
        owner = paging.fingerprint(kind, text, list(wanted), [s.value for s in scopes])
        try:
            offset = paging.decode_cursor(cursor, owner)
        except paging.CursorError as err:
            raise NoteInvalidError(str(err)) from None
        with self.index.request():
            self.index.sync()
            if kind == "list":
                ids, total = self.index.list_ids(scopes, wanted, offset, size, query)
                scores = None
            else:
                assert query is not None
                scored, total = self.index.search_ids(query, scopes, wanted, offset, size)
                ids, scores = [i for i, _ in scored], dict(scored)
            items = self._summaries(self.index.rows(ids), query, scores)
            return Page(items, total, paging.next_cursor(offset, len(items), total, owner),
                        [] if cursor else self.index.problems(scopes))

    def problems(self, scope: Any = "both") -> list[Problem]:
        """Every file of the notes directories that is not a usable note, with the reason."""
        scopes = self._scopes(scope)
        self.index.sync()
        return self.index.problems(scopes)

    def _summaries(self, rows: list[Row], query: fulltext.Query | None,
                   scores: dict[int, float] | None) -> list[NoteSummary]:
        in_project: set[str] = set()
        if any(loc.scope is Scope.PROJECT for loc in self.locations):
            in_project = self.index.visible_names(Scope.PROJECT, [r.name for r in rows if r.scope is Scope.GLOBAL])
        out = []
        for row in rows:
            shadowed = row.scope is Scope.GLOBAL and row.name in in_project
            out.append(NoteSummary(row.name, row.scope, row.tags, row.created_at, row.updated_at,
                                   fulltext.snippet(row.content, query), row.path, row.revision, shadowed,
                                   scores.get(row.id) if scores else None))
        return out



def _check_same(current: StoredNote, name: str, expected_revision: str | None) -> None:
    if current.name != name:
        raise NoteNotFoundError(f"{current.path} now holds the note {current.name!r}, not {name!r}; nothing changed")
    if expected_revision is not None and current.revision != expected_revision:
        raise NoteConflictError(
            f"the note {name!r} changed since it was read (revision {current.revision}, expected "
            f"{expected_revision}); read it again and redo the change", current.revision)
