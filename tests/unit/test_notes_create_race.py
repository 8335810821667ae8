"""Two processes creating the same note name: the one that comes second gets "exists", also when
the first one's file appears between its lookup and its choice of a file (it used to write the
note a second time, under the longer file name)."""

from __future__ import annotations

import pytest

from memory_lens.core.notes import NoteExistsError
from memory_lens.core.notes.naming import candidate_filenames

from notes_fixtures import NotesSandbox, note_data, sandbox  # noqa: F401


def test_a_note_created_after_the_lookup_is_not_created_twice(sandbox: NotesSandbox,  # noqa: F811
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store = sandbox.store()
    name = "Race 8"
    first, longer = candidate_filenames(name)
    real_lookup = store._lookup

    def lookup_then_lose_the_race(loc, wanted):
        found = real_lookup(loc, wanted)
        # The other process writes its note right after this one looked.
        sandbox.write_note(sandbox.project_dir(), first, note_data(name, "written by the other process"))
        return found

    monkeypatch.setattr(store, "_lookup", lookup_then_lose_the_race)
    with pytest.raises(NoteExistsError, match="already exists"):
        store.create(name, "written by this one")
    assert sorted(p.name for p in sandbox.project_dir().iterdir()) == [first]
    assert not (sandbox.project_dir() / longer).exists()
