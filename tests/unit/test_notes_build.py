"""Building and syncing the notes index in bulk: files read the short way give exactly the answer
of the careful reader, and two processes sharing one index never trip over each other's rows
(benchmarks/notes_bench.py measures the speed; these check the answers)."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import disk
from memory_lens.core.notes.disk import read_note_file, read_note_files
from memory_lens.core.notes.model import NoteError

from notes_fixtures import NotesSandbox, note_data, sandbox  # noqa: F401


def _careful(directory, fname: str):
    """What `read_note_file` says of DIRECTORY/FNAME, in `read_note_files`'s shape."""
    try:
        stored = read_note_file(directory / fname, Scope.GLOBAL)
    except NoteError as err:
        return str(err) if "no such note file" not in str(err) else "vanished while being read"
    return stored.note, stored.revision


def test_files_read_in_bulk_get_the_careful_readers_answer(sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    d = sandbox.global_dir
    sandbox.write_note(d, "good.json", note_data("good", "plain text", ["a", "B"], "global"))
    sandbox.write_note(d, "unicode.json", note_data("日本語 note", "café naïve", ["メモ"], "global"))
    (d / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(note_data("bom", "x")).encode())
    sandbox.write_note(d, "bad-json.json", "{not json")
    sandbox.write_note(d, "wrong-type.json", json.dumps({**note_data("t"), "tags": "a,b"}))
    sandbox.write_note(d, "missing.json", json.dumps({"name": "m"}))
    sandbox.write_note(d, "empty.json", "")
    (d / "nul.json").write_bytes(json.dumps(note_data("nul", "a")).encode().replace(b"a", b"\0", 1))
    (d / "latin1.json").write_bytes(json.dumps(note_data("l", "x"), ensure_ascii=False).encode().replace(b"x", b"\xe9"))
    (d / "dir.json").mkdir()
    os.symlink(d / "nowhere.json", d / "dangling.json")
    os.symlink(d / "good.json", d / "link.json")
    os.mkfifo(d / "fifo.json")
    sandbox.write_note(d, "large.json", note_data("large", "y" * 5000, [], "global"))
    names = sorted(p.name for p in d.iterdir()) + ["gone.json"]

    read_in_bulk = dict(read_note_files(d, Scope.GLOBAL, names))
    assert read_in_bulk == {name: _careful(d, name) for name in names}
    assert read_in_bulk["good.json"][0].tags == ("a", "B") and isinstance(read_in_bulk["fifo.json"], str)
    assert isinstance(read_in_bulk["dangling.json"], str) and read_in_bulk["gone.json"] == "vanished while being read"

    # A note over the size limit is reported as the careful reader reports it.
    monkeypatch.setattr(disk, "MAX_FILE_BYTES", 1000)
    limited = dict(read_note_files(d, Scope.GLOBAL, ["large.json", "good.json"]))
    assert limited == {"large.json": _careful(d, "large.json"), "good.json": _careful(d, "good.json")}
    assert "too large" in limited["large.json"]


def test_a_full_build_keeps_one_note_per_name_and_reports_the_rest(sandbox: NotesSandbox) -> None:  # noqa: F811
    d = sandbox.project_dir()
    for i in range(300):
        sandbox.write_note(d, f"n{i:03d}.json", note_data(f"note {i}", f"word{i % 7} common", [f"t{i % 3}"]))
    sandbox.write_note(d, "zz-again.json", note_data("note 5", "common copy"))
    sandbox.write_note(d, "broken.json", "[1, 2]")
    store = sandbox.store()
    assert store.search("common", limit=200).total == 300
    assert store.list(tags=["T1"]).total == 100
    assert store.search("common", tags=["t1", "T1"]).total == 100
    assert {p.path.name for p in store.problems()} == {"zz-again.json", "broken.json"}
    assert store.read("note 5").note.content == "word5 common"
    (d / "n005.json").unlink()  # the copy is now the note of that name
    assert store.read("note 5").note.content == "common copy"
    assert store.search("copy").total == 1 and {p.path.name for p in store.problems()} == {"broken.json"}
    store.close()


def test_two_processes_sharing_the_index_sync_each_others_files(sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    """Each index remembers the file signatures it holds; a row another process wrote meanwhile
    must be seen (it would otherwise be inserted twice: a UNIQUE constraint error, after which
    the whole index would be rebuilt from the files)."""
    from memory_lens.core.notes.index import NotesIndex

    def no_rebuild(self) -> None:
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(NotesIndex, "_rebuild", no_rebuild)
    first, second = sandbox.store(), sandbox.store()
    d = sandbox.project_dir()
    first.create("one", "alpha")
    assert second.search("alpha").total == 1
    for i in range(5):
        sandbox.write_note(d, f"hand{i}.json", note_data(f"hand {i}", "alpha by hand"))
        (second if i % 2 else first).index.sync()  # one of them indexes the new file
        for store in (first, second):
            store.index.sync(force=True)
            assert store.search("alpha").total == i + 2
    second.edit("one", "beta")
    first.index.sync(force=True)
    assert first.search("beta").total == 1 and first.search("alpha").total == 5
    first.close()
    second.close()


def test_the_index_keeps_no_copy_of_the_content_in_the_files_rows(sandbox: NotesSandbox) -> None:  # noqa: F811
    """Searches join every match with its `files` row: the content lives in its own table."""
    store = sandbox.store()
    store.create("n", "some content")
    db = store.index.db_path
    assert db is not None
    store.close()
    con = sqlite3.connect(db)
    columns = [r[1] for r in con.execute("PRAGMA table_info(files)")]
    assert "content" not in columns
    assert con.execute("SELECT content FROM bodies").fetchall() == [("some content",)]
    con.close()


def test_tag_filters_match_whole_tags_whatever_their_case(sandbox: NotesSandbox) -> None:  # noqa: F811
    store = sandbox.store()
    store.create("a", "word", ["deploy"])
    store.create("b", "word", ["deploy-staging"])
    store.create("c", "word", ["Deploy", "x"])
    store.create("d", "word", ["stage deploy"])
    assert sorted(n.name for n in store.search("word", tags=["DEPLOY"]).notes) == ["a", "c"]
    assert [n.name for n in store.search("word", tags=["deploy", "x"]).notes] == ["c"]
    assert store.search("word", tags=["deploy-staging"]).total == 1
    assert store.list(search="word", tags=["stage deploy"]).total == 1
    store.close()


def test_the_background_listing_waits_while_a_request_is_under_way(sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    """The refresh's listing and a request compete for the interpreter: the listing pauses while
    the store answers (up to REFRESH_GIVE_WAY_MAX a round), then goes on."""
    import threading

    from memory_lens.core.notes import index as index_module

    monkeypatch.setattr(index_module, "REFRESH_GIVE_WAY_MAX", 600.0)
    sandbox.write_note(sandbox.project_dir(), "a.json", note_data("a", "text"))
    store = sandbox.store()
    store.index.sync()
    (sandbox.project_dir() / "a.json").write_text(json.dumps(note_data("a", "changed in place")))
    done = threading.Event()
    counted: list[int] = []
    with store.index.request():
        worker = threading.Thread(target=lambda: (counted.append(store.index.refresh()), done.set()))
        worker.start()
        assert not done.wait(0.3)  # held back while the request is under way
    assert done.wait(60)
    worker.join()
    assert counted == [1] and store.search("changed").total == 1
    store.close()


def test_the_index_of_an_older_schema_is_removed(sandbox: NotesSandbox) -> None:  # noqa: F811
    """An index schema change opens a database under a new name; the older one (60 MB for
    10,000 notes) is removed instead of staying in the cache directory for good."""
    import hashlib

    from memory_lens.core.notes import index as index_module

    store = sandbox.store()
    store.create("n", "text")
    locations = store.index.locations
    store.close()

    def name(version: str, engine: str) -> str:
        key = "\0".join([version, engine, *(f"{loc.scope.value}={loc.directory}" for loc in locations)])
        return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:24] + ".sqlite3"

    older = [sandbox.index_dir / name(str(v), e) for v in range(1, int(index_module.SCHEMA_VERSION))
             for e in ("fts", "scan")]
    assert older
    for path in older:
        path.write_bytes(b"an index of an older schema")
        path.with_name(path.name + "-wal").write_bytes(b"its log")
    again = sandbox.store()
    assert again.search("text").total == 1
    assert not any(p.exists() or p.with_name(p.name + "-wal").exists() for p in older)
    assert again.index.db_path is not None and again.index.db_path.exists()
    again.close()
    assert {p.name.split(".sqlite3")[0] for p in sandbox.index_dir.iterdir()} == {again.index.db_path.stem}


def test_creating_a_note_lists_no_notes_directory(sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    """A create reads the note's own file names and the index, never a listing of a notes
    directory: its cost does not grow with the number of notes. A note file written by hand
    under another file name since the last listing is found at the next one, as a duplicate."""
    store = sandbox.store()
    store.create("first", "x")
    sandbox.write_note(sandbox.project_dir(), "by-hand.json", note_data("second", "written by hand"))
    listed: list[str] = []
    real_scandir = os.scandir

    def scandir(path=".", *args):
        listed.append(os.fspath(path))
        return real_scandir(path, *args)

    monkeypatch.setattr(os, "scandir", scandir)
    store.create("second", "y")
    store.create("third", "z", scope="global")
    notes_dirs = {str(sandbox.project_dir()), str(sandbox.global_dir)}
    assert not [p for p in listed if p.rstrip("/") in notes_dirs]
    monkeypatch.setattr(os, "scandir", real_scandir)
    problems = store.list().problems
    assert [(p.path.name, "holds the same name 'second'" in p.reason) for p in problems] == [("by-hand.json", True)]
    store.close()


def test_a_killed_writers_temporary_file_is_removed_by_the_next_listing(sandbox: NotesSandbox) -> None:  # noqa: F811
    """Unless a writer holds that note's lock right then: its temporary file is in use."""
    from pathlib import Path

    from memory_lens.core.writer import lock_for

    store = sandbox.store()
    store.create("a", "x")
    store.create("c", "z")
    directory = sandbox.project_dir()
    dead = directory / ".a.json.ml4194303-abcd_123.tmp"
    in_use = directory / f".c.json.ml{os.getpid()}-abcd_123.tmp"
    for path in (dead, in_use):
        path.write_text("half a note")
    store.create("b", "y")
    assert dead.exists()  # a write does not list the directory for it
    with lock_for(Path(os.path.realpath(directory / "c.json"))):  # a writer at work on note c
        store.index.sync(force=True)
    assert not dead.exists() and in_use.exists()
    store.index.sync(force=True)
    assert not in_use.exists()
    assert sorted(n.name for n in store.list().notes) == ["a", "b", "c"]
    store.close()
