"""The file a note lives in, derived from its name so that any name is safe on any system.

A name that is already a plain, lower-case file name (`api_key_rotation`, `build-issues`) is its
own file name, as AI Coder names them: `api_key_rotation.json`. Any other name keeps a readable
slug and gains a short hash of the exact name, so that names differing only in case, in Unicode
form or in the characters the slug drops never share a file, also on case-insensitive file
systems:

    "Build Issues"   -> build-issues-1f2e3d4c.json
    "日本語メモ"       -> 日本語メモ-8a7b6c5d.json
    "../etc/passwd"  -> etc-passwd-0c1d2e3f.json
    "CON"            -> con-4b5a6978.json      (reserved on Windows)
    "index"          -> index-2f3e4d5c.json    (index.json is the directory's index)

The slug: NFC, case-folded, every run of characters other than letters, digits, `_` and `-`
turned into one `-`, no leading or trailing `-` or `.`, at most 80 bytes of UTF-8. The note
itself always keeps its exact name; the file name is only where it is kept.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

SUFFIX = ".json"
INDEX_FILE = "index.json"
MAX_SLUG_BYTES = 80
_WINDOWS_RESERVED = {"con", "prn", "aux", "nul", "conin$", "conout$",
                     *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10)),
                     *(f"com{c}" for c in "¹²³"), *(f"lpt{c}" for c in "¹²³")}
_RESERVED_STEMS = _WINDOWS_RESERVED | {"index"}
_SEPARATORS = re.compile(r"[^\w-]+")
_PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")


def name_hash(name: str, length: int = 8) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def slug(name: str) -> str:
    """A readable, safe stem for NAME (may be empty)."""
    text = unicodedata.normalize("NFC", name).casefold()
    text = _SEPARATORS.sub("-", text)
    text = re.sub(r"-{2,}", "-", text).strip("-._")
    encoded = text.encode("utf-8")
    if len(encoded) > MAX_SLUG_BYTES:
        text = encoded[:MAX_SLUG_BYTES].decode("utf-8", "ignore").rstrip("-._")
    return text


def is_plain(name: str) -> bool:
    """NAME is its own safe file stem: lower-case ASCII letters, digits, `_`, `-`; not reserved."""
    return (len(name.encode("utf-8")) <= MAX_SLUG_BYTES and _PLAIN.match(name) is not None
            and name not in _RESERVED_STEMS)


def note_filename(name: str, hash_length: int = 8) -> str:
    """The file NAME is created in (see the module docstring)."""
    return name + SUFFIX if is_plain(name) else _hashed_filename(name, hash_length)


def _hashed_filename(name: str, hash_length: int) -> str:
    stem = slug(name)
    digest = name_hash(name, hash_length)
    return f"{stem}-{digest}{SUFFIX}" if stem else f"note-{digest}{SUFFIX}"


def candidate_filenames(name: str) -> list[str]:
    """Where NAME may be, in order: its file name, then the form used when another note already
    holds that file: a plain name's own file may hold a note whose name merely slugs to it
    (`Build Issues` is in `build-issues-d3533b69.json`, so the note `build-issues-d3533b69`
    goes to `build-issues-d3533b69-<hash>.json`); a hashed name's next form has a longer hash
    (a collision of 8 hex digits; it does not happen in practice)."""
    if is_plain(name):
        return [name + SUFFIX, _hashed_filename(name, 8)]
    return [_hashed_filename(name, 8), _hashed_filename(name, 16)]


def is_note_file(filename: str) -> bool:
    """A directory entry that may hold a note: `*.json`, not hidden (temporary files of
    atomic writes start with '.'), not the directory's `index.json`."""
    return filename.endswith(SUFFIX) and not filename.startswith(".") and filename != INDEX_FILE
