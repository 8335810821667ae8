"""A note: its fields, their rules, and its JSON form on disk.

A note file holds exactly the fields of the notes spec (seed 002):

    {"name": ..., "content": ..., "tags": [...], "created_at": "2025-10-08T03:07:11Z",
     "updated_at": "2025-10-08T03:07:11Z", "scope": "project"}

Reading is strict about types (a file that breaks them is reported by name and skipped, never
guessed at) and lenient about what does no harm: fields Memory Lens does not know are kept, and
timestamps may carry fractions of a second or a `+00:00` offset.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from memory_lens.core.discovery import Scope

MAX_NAME_CHARS = 128
MAX_TAG_CHARS = 64
MAX_TAGS = 64
MAX_CONTENT_BYTES = 1024 * 1024  # UTF-8 bytes of content a note may hold
# A note file may be bigger than its content (JSON escapes a control character as six bytes);
# anything beyond this is not read at all.
MAX_FILE_BYTES = 7 * MAX_CONTENT_BYTES
FIELDS = ("name", "content", "tags", "created_at", "updated_at", "scope")
# `tags` may be left out (no tags) and so may `scope` (the directory decides it); a file without
# any of these is not a note.
REQUIRED_FIELDS = ("name", "content", "created_at", "updated_at")


class NoteError(Exception):
    """A notes operation could not be carried out (the message says what to do)."""


class NoteInvalidError(NoteError, ValueError):
    """A name, tag, content or scope breaks the rules."""


class NoteExistsError(NoteError):
    """A note with that name is already in that scope."""


class NoteNotFoundError(NoteError, LookupError):
    """No note has that name (in that scope)."""


class NoteConflictError(NoteError):
    """The note changed since it was read (its revision is not the one expected)."""

    def __init__(self, message: str, current_revision: str | None) -> None:
        super().__init__(message)
        self.current_revision = current_revision


class NoteFileError(NoteError):
    """A note file cannot be used (malformed, unreadable, too large) or written."""


@dataclass(frozen=True)
class Note:
    """One note, as stored. `extra` keeps fields Memory Lens does not know, in file order."""

    name: str
    content: str
    tags: tuple[str, ...]
    created_at: str
    updated_at: str
    scope: Scope
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def fields(self) -> dict[str, Any]:
        """The spec's six fields, in its order."""
        return {"name": self.name, "content": self.content, "tags": list(self.tags), "created_at": self.created_at,
                "updated_at": self.updated_at, "scope": self.scope.value}

    def to_json(self) -> dict[str, Any]:
        """The note's fields, in the spec's order (unknown fields after them)."""
        return {**self.fields(), **{k: v for k, v in self.extra.items() if k not in FIELDS}}

    def encode(self) -> str:
        """The file's text: pretty-printed JSON, UTF-8 kept as is, one final newline."""
        return json.dumps(self.to_json(), ensure_ascii=False, indent=2) + "\n"


def revision_of(text: str) -> str:
    """A short digest of a note file's text: what `expected_revision` compares against."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def now_timestamp() -> str:
    """The current time as the spec writes it: UTC, whole seconds, `Z`."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_timestamp(value: str) -> datetime | None:
    """An ISO-8601 timestamp with a UTC designator (`Z` or an offset), else None."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


# Control characters (category Cc: U+0000-U+001F, U+007F-U+009F), lone surrogates (Cs) and the
# line and paragraph separators.
_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029]")


def _bad_chars(text: str) -> str | None:
    found = _BAD_CHAR.search(text)
    return f"U+{ord(found.group()):04X}" if found else None


# Characters that show nothing or reorder what follows, so that a name shows as another: the
# format characters (category Cf: zero-width spaces and joiners, bidirectional controls, the
# byte order mark, the soft hyphen...) and the fillers and selectors that draw nothing.
_BLANK = set("\u034f\u115f\u1160\u3164\uffa0\u180b\u180c\u180d\u180f") | {chr(c) for c in range(0xFE00, 0xFE10)}


def _invisible(text: str) -> str | None:
    if text.isascii():
        return None
    for ch in text:
        if ch in _BLANK or unicodedata.category(ch) == "Cf" or 0xE0100 <= ord(ch) <= 0xE01EF:
            return f"U+{ord(ch):04X} {unicodedata.name(ch, '')}".rstrip()
    return None


# Letters of other scripts that look like Latin ones (Unicode's confusables, UTS #39, for the
# Cyrillic and Greek letters, as their capitals look once case-folded), and the digits read as o
# and l: what `skeleton` maps. A one-for-one map, so a skeleton is as long as the case-folded name.
_LOOKALIKES = str.maketrans("авекмнорстухіјѕԁԛԝһӏүαβεζηικμνορτυχ01",
                            "abekmhopctyxijsdqwhlyabezhikmnoptyxol")


def folded_name(name: str) -> str:
    """NAME in NFKC, case-folded (as the index's `name_key`)."""
    return unicodedata.normalize("NFKC", name).casefold()


def skeleton(name: str) -> str:
    """What NAME looks like: `folded_name` with lookalike letters mapped to Latin. Two names with
    one skeleton and different folded forms read as each other (`Nоtes` with a Cyrillic о, and
    `Notes`)."""
    return folded_name(name).translate(_LOOKALIKES)


def validate_name(name: Any) -> str:
    """NAME when it is a usable note name: 1-128 characters, any language, no control,
    invisible or bidirectional control characters, no leading or trailing whitespace."""
    if not isinstance(name, str):
        raise NoteInvalidError("a note name must be a string")
    if not name or not name.strip():
        raise NoteInvalidError("a note name cannot be empty")
    if len(name) > MAX_NAME_CHARS:
        raise NoteInvalidError(f"a note name has at most {MAX_NAME_CHARS} characters "
                               f"(this one has {len(name)}); shorten it")
    bad = _bad_chars(name)
    if bad:
        raise NoteInvalidError(f"a note name cannot contain control characters (found {bad}); "
                               "use letters, digits, spaces and punctuation")
    hidden = _invisible(name)
    if hidden:
        raise NoteInvalidError(f"a note name cannot contain invisible or bidirectional control characters "
                               f"(found {hidden}): they make a name look like another; remove it")
    if name != name.strip():
        raise NoteInvalidError(f"a note name cannot start or end with whitespace: {name!r}; "
                               f"use {name.strip()!r}")
    return name


def validate_tag(tag: Any) -> str:
    if not isinstance(tag, str):
        raise NoteInvalidError("a tag must be a string")
    cleaned = tag.strip()
    if not cleaned:
        raise NoteInvalidError("a tag cannot be empty")
    if len(cleaned) > MAX_TAG_CHARS:
        raise NoteInvalidError(f"a tag has at most {MAX_TAG_CHARS} characters: {cleaned[:20]!r}…")
    if "," in cleaned:
        raise NoteInvalidError(f"a tag cannot contain a comma: {cleaned!r}; give each tag on its own")
    bad = _bad_chars(cleaned)
    if bad:
        raise NoteInvalidError(f"a tag cannot contain control characters (found {bad})")
    return cleaned


def validate_tags(tags: Iterable[Any] | None) -> tuple[str, ...]:
    """TAGS cleaned (stripped), in order, without repeats (compared case-insensitively)."""
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, Iterable):
        raise NoteInvalidError("tags must be a list of strings")
    unique: dict[str, str] = {}  # the first of the tags of each `tag_key`
    for tag in tags:
        cleaned = validate_tag(tag)
        unique.setdefault(tag_key(cleaned), cleaned)
    if len(unique) > MAX_TAGS:
        raise NoteInvalidError(f"a note has at most {MAX_TAGS} tags (got {len(unique)})")
    return tuple(unique.values())


tag_key = folded_name  # what tag filters compare: tags match whatever their case and Unicode form


def validate_content(content: Any) -> str:
    if not isinstance(content, str):
        raise NoteInvalidError("a note's content must be a string")
    if "\0" in content:
        raise NoteInvalidError("a note's content cannot contain a NUL character")
    try:
        size = len(content.encode("utf-8"))
    except UnicodeEncodeError:
        raise NoteInvalidError("a note's content is not valid Unicode (a lone surrogate)") from None
    if size > MAX_CONTENT_BYTES:
        raise NoteInvalidError(f"a note's content is at most {MAX_CONTENT_BYTES} bytes of UTF-8 "
                               f"(got {size}); split it into several notes")
    return content


def parse_scope(value: Any, allow_both: bool = False) -> Scope | None:
    """`project` or `global` as a Scope; `both` (when allowed) or None as None."""
    if value is None or (allow_both and value == "both"):
        return None
    if isinstance(value, Scope):
        return value
    try:
        return Scope(value)
    except ValueError:
        allowed = "project, global" + (" or both" if allow_both else "")
        raise NoteInvalidError(f"unknown scope {value!r}: use {allowed}") from None


def new_note(name: str, content: str, tags: Iterable[str] | None, scope: Scope, now: str | None = None) -> Note:
    """A fresh note, every field checked."""
    stamp = now or now_timestamp()
    return Note(validate_name(name), validate_content(content), validate_tags(tags), stamp, stamp, scope)


def decode_note(text: str, scope: Scope) -> Note:
    """The note in a file's TEXT; NoteFileError saying what is wrong with it. The directory
    decides the scope (a file copied between scopes belongs where it is now)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise NoteFileError(f"is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg})") from None
    except RecursionError:
        raise NoteFileError("is not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise NoteFileError(f"is not a note: expected a JSON object, found {type(data).__name__}")
    missing = [key for key in REQUIRED_FIELDS if key not in data]
    if missing:
        raise NoteFileError(f"is not a note: missing {', '.join(repr(m) for m in missing)}")
    try:
        name = validate_name(data["name"])
        content = validate_content(data["content"])
        raw_tags = data.get("tags", [])
        if not isinstance(raw_tags, list):
            raise NoteInvalidError("'tags' must be a list of strings")
        tags = validate_tags(raw_tags)
    except NoteInvalidError as err:
        raise NoteFileError(f"is not a valid note: {err}") from None
    stamps = []
    for key in ("created_at", "updated_at"):
        value = data[key]
        if not isinstance(value, str) or parse_timestamp(value) is None:
            raise NoteFileError(f"is not a valid note: {key!r} must be an ISO-8601 UTC timestamp such as "
                                f"2025-10-08T03:07:11Z, not {value!r}")
        stamps.append(value)
    declared = data.get("scope")
    if declared is not None and declared not in ("project", "global"):
        raise NoteFileError(f"is not a valid note: 'scope' must be 'project' or 'global', not {declared!r}")
    created, updated = stamps
    extra = {k: v for k, v in data.items() if k not in FIELDS}
    return Note(name, content, tags, created, updated, scope, extra)


@dataclass(frozen=True)
class StoredNote:
    """A note as found on disk: where, and which revision of the file."""

    note: Note
    path: Path
    revision: str

    @property
    def name(self) -> str:
        return self.note.name

    @property
    def scope(self) -> Scope:
        return self.note.scope

    def to_json(self, content: bool = True) -> dict[str, Any]:
        """A note's JSON, the one shape the CLI, the MCP tools and the language server give
        (docs/notes.md, JSON output): the six fields, its file and revision; without CONTENT
        (the MCP tools' confirmations), the content left out."""
        data = {**self.note.fields(), "path": str(self.path), "revision": self.revision}
        if not content:
            del data["content"]
        return data


@dataclass(frozen=True)
class Problem:
    """A file in a notes directory that is not a usable note, and why."""

    scope: Scope
    path: Path
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"scope": self.scope.value, "path": str(self.path), "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.path}: skipped: {self.reason}"
