"""Notes: names and their file names, note files read strictly, timestamps, Markdown documents."""

from __future__ import annotations

import json
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import document
from memory_lens.core.notes.model import (
    MAX_CONTENT_BYTES,
    NoteFileError,
    NoteInvalidError,
    decode_note,
    new_note,
    now_timestamp,
    parse_timestamp,
    validate_name,
    validate_tags,
)
from memory_lens.core.notes.naming import candidate_filenames, is_note_file, note_filename

WINDOWS_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def valid_names() -> st.SearchStrategy[str]:
    alphabet = st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029")
    return st.text(alphabet, min_size=1, max_size=128).filter(lambda s: s.strip() == s and s.strip())


@settings(max_examples=400, deadline=None)
@given(valid_names())
def test_every_valid_name_has_a_safe_file_name(name: str) -> None:
    fname = note_filename(name)
    assert fname.endswith(".json") and is_note_file(fname)
    stem = fname[:-5]
    assert "/" not in fname and "\\" not in fname and "\0" not in fname
    assert stem not in ("", ".", "..") and not stem.startswith(".") and not stem.endswith((".", " "))
    assert stem.split(".")[0].casefold() not in WINDOWS_RESERVED
    assert not any(c in fname for c in '<>:"|?*')
    assert fname == fname.casefold() or fname.lower() == fname  # one case: no clash on case-insensitive systems
    assert len(fname.encode("utf-8")) <= 120
    assert all(unicodedata.category(c) not in ("Cc", "Cs") for c in fname)


@settings(max_examples=300, deadline=None)
@given(valid_names(), valid_names())
def test_different_names_get_different_files_whatever_the_case(a: str, b: str) -> None:
    if a != b:
        assert note_filename(a).casefold() != note_filename(b).casefold()


@pytest.mark.parametrize("name, fname", [
    ("api_key_rotation", "api_key_rotation.json"),
    ("build-issues", "build-issues.json"),
    ("Build Issues", None), ("../etc/passwd", None), ("CON", None), ("index", None), ("a/b", None),
    ("日本語メモ", None), ("..", None), ("nul", None),
])
def test_plain_names_are_their_own_file_names_others_get_a_hash(name: str, fname: str | None) -> None:
    filename = note_filename(name)
    if fname is not None:
        assert filename == fname
    else:
        assert filename != name + ".json" and len(filename) > 14 and filename[-14:-5].startswith("-")


def test_names_differing_only_in_case_or_unicode_form_do_not_share_a_file() -> None:
    names = ["Notes", "notes", "NOTES", "caf\u00e9", "cafe\u0301", "Straße", "STRASSE"]
    files = {note_filename(n).casefold() for n in names}
    assert len(files) == len(names)
    assert candidate_filenames("Notes")[1] != candidate_filenames("Notes")[0]


def test_index_and_hidden_files_are_not_note_files() -> None:
    assert not is_note_file("index.json")
    assert not is_note_file(".x.json.abc.tmp") and not is_note_file(".hidden.json")
    assert not is_note_file("notes.txt") and is_note_file("a.json")


@pytest.mark.parametrize("name, problem", [
    ("", "empty"), ("   ", "empty"), ("x" * 129, "at most 128"), ("a\nb", "control"), ("a\0b", "control"),
    (" lead", "whitespace"), ("trail ", "whitespace"), (3, "string"),
])
def test_bad_names_are_refused_with_the_reason(name: object, problem: str) -> None:
    with pytest.raises(NoteInvalidError, match=problem):
        validate_name(name)


def test_names_of_128_characters_in_any_language_are_fine() -> None:
    for name in ["x" * 128, "日" * 128, "Привет мир", "مرحبا", "🙂 emoji note", "a/b\\c:d"]:
        assert validate_name(name) == name


def test_tags_are_cleaned_deduplicated_case_insensitively_and_checked() -> None:
    assert validate_tags([" Security", "security", "ops"]) == ("Security", "ops")
    for bad in (["a,b"], [""], ["x" * 65], "security", [3]):
        with pytest.raises(NoteInvalidError):
            validate_tags(bad)  # type: ignore[arg-type]


def test_a_note_file_round_trips_with_exactly_the_spec_fields() -> None:
    note = new_note("api_key_rotation", "Rotate keys", ["security"], Scope.PROJECT, now="2025-10-08T03:07:11Z")
    data = json.loads(note.encode())
    assert list(data) == ["name", "content", "tags", "created_at", "updated_at", "scope"]
    assert data == {"name": "api_key_rotation", "content": "Rotate keys", "tags": ["security"],
                    "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z", "scope": "project"}
    assert decode_note(note.encode(), Scope.PROJECT) == note


def test_timestamps_are_utc_iso_8601_with_z() -> None:
    stamp = now_timestamp()
    assert len(stamp) == 20 and stamp.endswith("Z") and parse_timestamp(stamp) is not None
    assert parse_timestamp("2025-10-08T03:07:11.123456+00:00") is not None
    assert parse_timestamp("2025-10-08 03:07") is None  # no zone: not UTC
    assert parse_timestamp("yesterday") is None


@pytest.mark.parametrize("text, reason", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"name": "a", "content": "b"}', "missing 'created_at', 'updated_at'"),
    ('{"name": 3, "content": "b", "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z"}', "string"),
    ('{"name": "a", "content": ["b"], "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z"}', "content"),
    ('{"name": "a", "content": "b", "tags": "x", "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z"}', "tags"),
    ('{"name": "a", "content": "b", "created_at": "monday", "updated_at": "2025-10-08T03:07:11Z"}', "created_at"),
    ('{"name": "a", "content": "b", "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z", "scope": "team"}', "scope"),
    ("[" * 100000, "nested too deeply"),
])
def test_malformed_note_files_say_what_is_wrong(text: str, reason: str) -> None:
    with pytest.raises(NoteFileError, match=reason):
        decode_note(text, Scope.PROJECT)


def test_content_over_the_limit_is_refused() -> None:
    with pytest.raises(NoteInvalidError, match="at most"):
        new_note("big", "x" * (MAX_CONTENT_BYTES + 1), [], Scope.GLOBAL)


def test_unknown_fields_are_kept_and_the_directory_decides_the_scope() -> None:
    text = json.dumps({"name": "a", "content": "b", "tags": [], "created_at": "2025-10-08T03:07:11Z",
                       "updated_at": "2025-10-08T03:07:11Z", "scope": "project", "priority": 2})
    note = decode_note(text, Scope.GLOBAL)
    assert note.scope is Scope.GLOBAL and note.extra == {"priority": 2}
    assert json.loads(note.encode())["priority"] == 2


def test_markdown_document_round_trip_and_front_matter() -> None:
    note = new_note("n", "---\nbody with a rule\n", ["a", "b c"], Scope.PROJECT)
    text = document.render(note)
    assert text.startswith("---\ntags: a, b c\n---\n")
    parsed = document.parse(text)
    assert parsed.content == note.content and parsed.tags == ("a", "b c")
    assert document.parse("just text").tags is None
    assert document.parse("---\ntags:\n---\nx").tags == ()
    assert document.parse("---\ntags: [x, 'y']\n---\nz") == document.NoteDocument("z", ("x", "y"))
    with pytest.raises(NoteInvalidError, match="only 'tags"):
        document.parse("---\nname: other\n---\nx")
