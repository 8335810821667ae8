"""The notes store: seed 002's operations and resolution, the files as the truth, malformed files
reported and never overwritten, pagination, both layouts (aicoder's index.json in step)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from notes_fixtures import NotesSandbox, note_data, sandbox  # noqa: F401

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import (
    NoProjectError,
    NoteConflictError,
    NoteExistsError,
    NoteFileError,
    NoteInvalidError,
    NoteNotFoundError,
)
from memory_lens.core.notes.model import MAX_FILE_BYTES


def names(page) -> list[tuple[str, str]]:
    return [(n.scope.value, n.name) for n in page.notes]


def test_create_read_edit_delete_in_the_default_layout(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    created = store.create("api_key_rotation", "Rotate keys every 90 days", ["security", "maintenance"])
    path = sandbox.project / ".memory-lens" / "notes" / "api_key_rotation.json"
    assert created.note.path == path and created.changed
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["name", "content", "tags", "created_at", "updated_at", "scope"]
    assert data["scope"] == "project" and data["tags"] == ["security", "maintenance"]
    assert data["created_at"] == data["updated_at"] and data["created_at"].endswith("Z")

    read = store.read("api_key_rotation")
    assert read.note.content == "Rotate keys every 90 days" and read.revision == created.note.revision

    edited = store.edit("api_key_rotation", "Rotate keys every 30 days")
    assert edited.changed and edited.note.note.tags == ("security", "maintenance")
    assert edited.note.note.created_at == data["created_at"]
    assert store.read("api_key_rotation").note.content == "Rotate keys every 30 days"
    assert not store.edit("api_key_rotation", "Rotate keys every 30 days").changed

    retagged = store.edit("api_key_rotation", tags=["ops"])
    assert retagged.note.note.tags == ("ops",) and retagged.note.note.content == "Rotate keys every 30 days"

    deleted = store.delete("api_key_rotation")
    assert deleted.note.path == path and not path.exists()
    with pytest.raises(NoteNotFoundError, match="no note named 'api_key_rotation'"):
        store.read("api_key_rotation")


def test_global_notes_live_in_the_user_config_dir_unless_moved(sandbox: NotesSandbox) -> None:
    from memory_lens.core.notes import notes_settings
    from memory_lens.core.settings import resolve_settings

    assert notes_settings(resolve_settings(environ={})).global_dir == sandbox.home / ".config" / "memory-lens" / "notes"
    moved = resolve_settings(environ={"MEMORY_LENS_NOTES_DIR": str(sandbox.root / "elsewhere")})
    assert notes_settings(moved).global_dir == sandbox.root / "elsewhere"
    flag = resolve_settings(notes_dir=sandbox.root / "flag", environ={"MEMORY_LENS_NOTES_DIR": "/x"})
    assert notes_settings(flag).global_dir == sandbox.root / "flag"
    aicoder = notes_settings(resolve_settings(notes_layout="aicoder", environ={}))
    assert aicoder.global_dir == sandbox.home / ".config" / "aicoder" / "memory"


def test_project_first_then_global_and_explicit_scope_wins(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    store.create("style", "global style", scope="global")
    assert store.read("style").scope is Scope.GLOBAL  # falls back to global
    store.create("style", "project style")  # same name in the project: allowed
    assert store.read("style").note.content == "project style"
    assert store.read("style", "global").note.content == "global style"
    page = store.list()
    assert names(page) == [("project", "style"), ("global", "style")]
    assert [n.shadowed for n in page.notes] == [False, True]
    store.edit("style", "edited")  # the project's, as read finds it
    assert store.read("style", "global").note.content == "global style"
    store.delete("style")
    assert store.read("style").note.content == "global style"
    with pytest.raises(NoteNotFoundError, match="in project notes"):
        store.read("style", "project")


def test_create_defaults_to_project_inside_a_project_else_global(sandbox: NotesSandbox) -> None:
    assert sandbox.store().create("a", "x").note.scope is Scope.PROJECT
    outside = sandbox.store(project=False)
    assert outside.create("b", "y").note.scope is Scope.GLOBAL
    with pytest.raises(NoProjectError, match="not inside a project"):
        outside.create("c", "z", scope="project")
    assert names(outside.list()) == [("global", "b")]


def test_creating_a_name_twice_is_refused_and_changes_nothing(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    first = store.create("Deploy", "one")
    before = first.note.path.read_bytes()
    with pytest.raises(NoteExistsError, match="a project note named 'Deploy' already exists"):
        store.create("Deploy", "two")
    assert first.note.path.read_bytes() == before
    assert store.create("deploy", "lower case is another name").note.path != first.note.path


def test_any_name_is_kept_exactly_and_stored_safely(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    odd = ["../../etc/passwd", "CON", "index", "日本語メモ", "a/b\\c", "x" * 128, "Ünïcödé Nämé", "...", "-rf"]
    for name in odd:
        result = store.create(name, f"content of {name}")
        assert result.note.path.parent == sandbox.project_dir()
        assert store.read(name).note.name == name
    files = sorted(p.name for p in sandbox.project_dir().iterdir())
    assert len(files) == len(odd) and "index.json" not in files
    assert {n.name for n in store.list(limit=50).notes} == set(odd)


def test_hand_edits_new_files_and_deletions_are_picked_up(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    store.create("one", "first text")
    directory = sandbox.project_dir()
    assert store.search("first").total == 1
    # edited by hand, in place, same size: mtime and content change
    path = directory / "one.json"
    data = json.loads(path.read_text())
    data["content"] = "fresh text"
    path.write_text(json.dumps(data))
    os.utime(path, ns=(1, 1))
    assert store.search("fresh").total == 1 and store.search("first").total == 0
    # a file pulled by git, under a name of its own
    sandbox.write_note(directory, "Pulled Note.json", note_data("pulled", "from a teammate"))
    assert names(store.search("teammate")) == [("project", "pulled")]
    assert store.read("pulled").path.name == "Pulled Note.json"
    store.edit("pulled", "edited here")  # written back where it is
    assert json.loads((directory / "Pulled Note.json").read_text())["content"] == "edited here"
    # deleted by hand
    path.unlink()
    assert store.search("fresh").total == 0
    assert names(store.list()) == [("project", "pulled")]


def test_a_long_running_store_notices_changes_without_listing_every_time(sandbox: NotesSandbox) -> None:
    store = sandbox.store(freshness=3600)
    store.create("one", "alpha")
    assert store.search("alpha").total == 1
    sandbox.write_note(sandbox.project_dir(), "two.json", note_data("two", "alpha beta"))  # the directory changes
    assert store.search("alpha").total == 2
    assert store.index.sync(force=True) == 0


@pytest.mark.parametrize("content, reason", [
    ("{broken", "not valid JSON"),
    (json.dumps({"name": "n", "content": 5, "created_at": "2025-10-08T03:07:11Z",
                 "updated_at": "2025-10-08T03:07:11Z"}), "content"),
    (json.dumps({"name": "n", "content": "c"}), "missing"),
    (b"\xff\xfe bad bytes", "UTF-8"),
])
def test_malformed_files_are_reported_by_name_skipped_and_never_overwritten(
        sandbox: NotesSandbox, content: str | bytes, reason: str) -> None:
    store = sandbox.store()
    store.create("good", "fine")
    directory = sandbox.project_dir()
    bad = directory / "n.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    before = bad.read_bytes()
    page = store.list()
    assert names(page) == [("project", "good")]
    assert [(p.path, reason in p.reason) for p in page.problems] == [(bad, True)]
    with pytest.raises(NoteFileError, match="n.json"):
        store.read("n")
    with pytest.raises(NoteFileError, match="n.json"):
        store.create("n", "new")
    with pytest.raises(NoteFileError):
        store.edit("n", "new")
    assert bad.read_bytes() == before
    assert store.search("fine").total == 1


def test_huge_files_are_reported_without_being_read(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    huge = sandbox.project_dir() / "huge.json"
    huge.parent.mkdir(parents=True)
    with open(huge, "wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    page = store.list()
    assert page.notes == [] and "too large" in page.problems[0].reason


def test_two_files_with_one_name_the_named_one_wins_the_other_is_reported(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    store.create("dup", "the real one")
    copy = sandbox.write_note(sandbox.project_dir(), "copy of dup.json", note_data("dup", "a copy"))
    page = store.list()
    assert names(page) == [("project", "dup")] and page.notes[0].snippet == "the real one"
    assert page.problems[0].path == copy and "same name 'dup' as dup.json" in page.problems[0].reason
    store.delete("dup")
    assert store.read("dup").path == copy  # the copy is the note now


def test_revisions_detect_concurrent_edits(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    seen = store.create("n", "v1").note.revision
    store.edit("n", "v2", expected_revision=seen)
    with pytest.raises(NoteConflictError, match="changed since it was read") as err:
        store.edit("n", "v3", expected_revision=seen)
    assert err.value.current_revision == store.read("n").revision
    with pytest.raises(NoteConflictError):
        store.delete("n", expected_revision=seen)
    assert store.read("n").note.content == "v2"


def test_list_filters_by_tags_scope_and_search_and_pages(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    for i in range(25):
        store.create(f"note {i:02d}", f"body {i} {'even' if i % 2 == 0 else 'odd'}",
                     ["Even"] if i % 2 == 0 else ["odd", "x"], scope="global" if i >= 20 else "project")
    first = store.list(limit=10)
    assert first.total == 25 and len(first.notes) == 10 and first.next_cursor
    second = store.list(limit=10, cursor=first.next_cursor)
    third = store.list(limit=10, cursor=second.next_cursor)
    assert third.next_cursor is None
    listed = [n.name for n in first.notes + second.notes + third.notes]
    assert listed == [f"note {i:02d}" for i in range(25)]
    assert first.notes[0].snippet == "body 0 even" and not hasattr(first.notes[0], "content")
    assert store.list(tags=["even"]).total == 13  # tags match whatever their case
    assert store.list(tags=["odd", "X"]).total == 12
    assert store.list(tags=["odd", "even"]).total == 0
    assert store.list(scope="global").total == 5
    assert names(store.list(search="even", scope="global")) == [("global", "note 20"), ("global", "note 22"),
                                                                 ("global", "note 24")]
    with pytest.raises(NoteInvalidError, match="another listing"):
        store.list(tags=["even"], cursor=first.next_cursor)
    with pytest.raises(NoteInvalidError, match="invalid cursor"):
        store.list(cursor="garbage!")
    with pytest.raises(NoteInvalidError, match="limit"):
        store.list(limit=0)


def test_search_ranks_phrases_prefixes_and_or(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    store.create("deploy", "Deploy to staging with make deploy", ["ops"])
    store.create("release train", "The release train leaves on Tuesdays", ["process"])
    store.create("café", "Crème brûlée recipe", scope="global")
    store.create("東京", "東京で会議があります")
    assert [n.name for n in store.search("deploy").notes] == ["deploy"]
    assert [n.name for n in store.search('"release train"').notes] == ["release train"]
    assert store.search('"train release"').total == 0
    assert [n.name for n in store.search("dep*").notes] == ["deploy"]
    assert {n.name for n in store.search("staging OR tuesdays").notes} == {"deploy", "release train"}
    assert [n.name for n in store.search("cafe creme").notes] == ["café"]
    assert [n.name for n in store.search("会議").notes] == ["東京"]
    assert [n.name for n in store.search("ops").notes] == ["deploy"]  # tags are searched too
    assert store.search("deploy", tags=["process"]).total == 0
    assert store.search("creme", scope="project").total == 0
    page = store.search("train")
    assert page.notes[0].score is not None and page.notes[0].score > 0
    with pytest.raises(NoteInvalidError):
        store.search("  ")
    with pytest.raises(NoteInvalidError, match="nothing to search for"):
        store.search("!!!")


def test_aicoder_layout_reads_and_writes_its_directories_and_keeps_index_json(sandbox: NotesSandbox) -> None:
    store = sandbox.store("aicoder", global_dir=sandbox.home / ".config" / "aicoder" / "memory")
    project_dir = sandbox.project / ".aicoder" / "memory"
    # a note AI Coder already has, and a stale index.json
    sandbox.write_note(project_dir, "architecture_decisions.json", note_data("architecture_decisions", "Use hexagonal"))
    (project_dir / "index.json").write_text('{"stale": true}')
    assert store.read("architecture_decisions").note.content == "Use hexagonal"
    store.create("build_issues", "npm ci fails on node 18", ["build"])
    assert (project_dir / "build_issues.json").is_file()
    index = json.loads((project_dir / "index.json").read_text())
    assert index["version"] == 1
    assert index["notes"] == {
        "architecture_decisions": {"file": "architecture_decisions.json", "tags": [], "created_at": "2025-10-08T03:07:11Z",
                                   "updated_at": "2025-10-08T03:07:11Z"},
        "build_issues": {"file": "build_issues.json", "tags": ["build"],
                         "created_at": index["notes"]["build_issues"]["created_at"],
                         "updated_at": index["notes"]["build_issues"]["updated_at"]},
    }
    store.create("personal", "tabs not spaces", scope="global")
    global_index = sandbox.home / ".config" / "aicoder" / "memory" / "index.json"
    assert list(json.loads(global_index.read_text())["notes"]) == ["personal"]
    (project_dir / "index.json").unlink()
    store.delete("build_issues")
    assert list(json.loads((project_dir / "index.json").read_text())["notes"]) == ["architecture_decisions"]
    assert [n.name for n in store.list().notes] == ["architecture_decisions", "personal"]
    assert all(p.path.name != "index.json" for p in store.problems())


def test_index_json_that_cannot_be_written_is_a_warning_not_a_failure(sandbox: NotesSandbox) -> None:
    store = sandbox.store("aicoder")
    project_dir = sandbox.project / ".aicoder" / "memory"
    project_dir.mkdir(parents=True)
    (project_dir / "index.json").mkdir()  # not a file
    result = store.create("n", "x")
    assert result.warnings and "index was not updated" in result.warnings[0]
    assert store.read("n").note.content == "x"


def test_a_corrupt_index_is_rebuilt_from_the_files(sandbox: NotesSandbox) -> None:
    store = sandbox.store()
    store.create("n", "indexed text")
    db = store.index.db_path
    store.close()
    assert db is not None
    db.write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    again = sandbox.store()
    assert again.search("indexed").total == 1


def test_an_unwritable_cache_directory_keeps_the_index_in_memory(sandbox: NotesSandbox) -> None:
    blocker = sandbox.root / "blocked"
    blocker.write_text("a file, not a directory")
    store = sandbox.store(index_dir=blocker / "index")
    store.create("n", "text")
    assert store.index.db_path is None or not str(store.index.db_path).startswith(str(blocker))
    assert store.search("text").total == 1


def test_changes_are_reported_whoever_made_them(sandbox: NotesSandbox) -> None:
    watcher = sandbox.store(freshness=3600)
    other = sandbox.store()  # another process would share the same database
    assert watcher.index.take_changes() == set()  # the baseline
    other.create("made elsewhere", "x")
    watcher.index.sync()
    assert watcher.index.take_changes() == {(Scope.PROJECT, "made elsewhere")}
    assert watcher.index.take_changes() == set()
    watcher.create("made here", "y", scope="global")
    assert watcher.index.take_changes() == {(Scope.GLOBAL, "made here")}
    (sandbox.project_dir() / "broken.json").write_text("{")
    watcher.index.sync()
    assert watcher.index.take_changes() == {(Scope.PROJECT, None)}
    other.delete("made elsewhere")
    watcher.index.sync()
    assert watcher.index.take_changes() == {(Scope.PROJECT, "made elsewhere")}
