"""Shortlists (`core/notes/shortlists.py`): a broad search of one term ranked from a few notes
gives exactly the page the full ranking gives (the same notes, order, scores and total),
before and after the notes change, whoever changes them; and a term whose scores cannot be
reproduced is ranked in full."""

from __future__ import annotations

import random
import time
from contextlib import contextmanager
from typing import Any, Iterator

import pytest

from memory_lens.core.notes import fulltext, shortlists
from memory_lens.core.notes import index as index_module
from memory_lens.core.notes.index import NotesIndex
from memory_lens.core.notes.search import ENV_SHORTLISTS
from memory_lens.core.notes.store import NotesStore

from notes_fixtures import NotesSandbox, Scope, note_data, sandbox  # noqa: F401

WORDS = ["alpha", "alder", "alto", "beta", "bend", "gamma", "gale", "delta", "dune", "echo", "ember",
         "fox", "fern", "golf", "glow", "hotel", "kilo", "lima", "mike", "nova", "oscar", "papa"]
RARE = ["quartz", "rune", "sable", "tundra", "umber", "vortex", "wisp", "xenon", "yarrow", "zephyr"]
OTHER = ["café", "日本語", "Straße", "naïve", "числа"]
TAGS = ["ops", "deploy", "infra", "docs", "idea"]
BOTH = [Scope.PROJECT, Scope.GLOBAL]


@pytest.fixture(autouse=True)
def small_shortlists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Shortlists for terms in 40 notes, 3 notes kept per F: fronts everywhere, so both what a
    shortlist answers and what it must leave to the full ranking are exercised."""
    monkeypatch.setattr(shortlists, "BROAD", 40)
    monkeypatch.setattr(shortlists, "KEEP", 3)
    monkeypatch.delenv(ENV_SHORTLISTS, raising=False)


def content(rng: random.Random) -> str:
    words = rng.choices(WORDS, weights=[1 / (i + 1) for i in range(len(WORDS))], k=rng.randint(3, 60))
    if rng.random() < 0.3:
        words.insert(rng.randrange(len(words)), rng.choice(RARE))
    if rng.random() < 0.1:
        words.insert(rng.randrange(len(words)), rng.choice(OTHER))
    return " ".join(words)


def write_notes(sandbox: NotesSandbox, rng: random.Random, count: int, start: int = 0) -> None:
    for i in range(start, start + count):
        scope = "project" if i % 2 else "global"
        directory = sandbox.project_dir() if scope == "project" else sandbox.global_dir
        name = f"{rng.choice(WORDS)} note {i}" if i % 3 else f"note-{i}"
        tags = sorted(set(rng.choices(TAGS, k=rng.randint(0, 3))))
        sandbox.write_note(directory, f"n{i}.json", note_data(name, content(rng), tags, scope))


def searches(rng: random.Random) -> list[tuple[fulltext.Query, list[Scope], list[str], int, int]]:
    """Words and prefixes of every length, alone, with tags and scopes, on several pages."""
    terms = WORDS[:10] + ["a*", "al*", "alp*", "g*", "ga*", "d*", "de*", "note", "no*", "ops", "caf*", "日"]
    out = []
    for term in terms:
        query = fulltext.parse_query(term)
        for scopes, tags in ((BOTH, []), ([Scope.PROJECT], []), ([Scope.GLOBAL], []), (BOTH, ["ops"]),
                             (BOTH, ["deploy", "docs"]), ([Scope.PROJECT], ["infra"])):
            for offset, limit in ((0, 20), (0, 1), (5, 5), (20, 20), (0, 50), (rng.randrange(60), 7)):
                out.append((query, scopes, tags, offset, limit))
    return out


def ranked(index: NotesIndex, search: tuple, shortlisted: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    if shortlisted:
        monkeypatch.delenv(ENV_SHORTLISTS, raising=False)
    else:
        monkeypatch.setenv(ENV_SHORTLISTS, "0")
    try:
        return index.search_ids(*search)
    finally:
        monkeypatch.delenv(ENV_SHORTLISTS, raising=False)


def assert_same_pages(index: NotesIndex, monkeypatch: pytest.MonkeyPatch, seed: int) -> int:
    """Every search of `searches` gives the same answer with shortlists and without, exactly;
    the number answered from a shortlist."""
    before = index.shortlisted
    for search in searches(random.Random(seed)):
        with_lists = ranked(index, search, True, monkeypatch)
        assert with_lists == ranked(index, search, False, monkeypatch), search
    return index.shortlisted - before


@contextmanager
def notes_store(sandbox: NotesSandbox, seed: int, count: int = 200,
                **options: Any) -> Iterator[tuple[NotesStore, random.Random]]:
    """COUNT generated notes (from SEED) and a store over them, in step; its random source."""
    rng = random.Random(seed)
    write_notes(sandbox, rng, count)
    store = sandbox.store(**options)
    try:
        store.index.sync(force=True)
        yield store, rng
    finally:
        store.close()


def test_pages_from_shortlists_are_exactly_the_full_rankings(sandbox: NotesSandbox, monkeypatch) -> None:
    with notes_store(sandbox, 1, 240) as (store, _):
        assert store.index.prepare_shortlists() > 10
        terms = {r[0] for r in store.index._con.execute("SELECT term FROM short_terms WHERE size > 0")}
        assert {'"alpha"', '"al" *', '"ga" *'} <= terms
        answered = assert_same_pages(store.index, monkeypatch, 7)
        assert answered > 60  # many broad searches come from a shortlist…
        # …and the others (deep pages, selective filters) from the full ranking, still equal.
        assert answered < len(searches(random.Random(7)))


def test_shortlists_stay_exact_while_notes_change(sandbox: NotesSandbox, monkeypatch) -> None:
    with notes_store(sandbox, 2) as (store, rng):
        store.index.prepare_shortlists()
        # Edited by hand, added, deleted, a second file of one name (the note hidden behind it),
        # a broken file: then brought in step, and compared before any shortlist is built again.
        write_notes(sandbox, rng, 40, start=0)
        write_notes(sandbox, rng, 50, start=200)
        for i in range(60, 90):
            (sandbox.global_dir / f"n{i}.json" if i % 2 == 0 else sandbox.project_dir() / f"n{i}.json").unlink()
        sandbox.write_note(sandbox.project_dir(), "copy.json", note_data("alpha note 1", "alpha " * 40))
        sandbox.write_note(sandbox.project_dir(), "broken.json", "{not json")
        assert store.index.sync(force=True) > 60
        assert assert_same_pages(store.index, monkeypatch, 8) > 60
        # Worn shortlists are built again, and still agree.
        assert store.index.prepare_shortlists(discover=False) > 0
        assert assert_same_pages(store.index, monkeypatch, 9) > 60


def test_changes_made_by_another_process_keep_the_shortlists_exact(sandbox: NotesSandbox, monkeypatch) -> None:
    with notes_store(sandbox, 3) as (server, rng):
        server.index.prepare_shortlists()
        other = sandbox.store()  # another store on the same index database (as a CLI process)
        try:
            for i in range(30):
                other.create(f"alpha added {i}", "alpha " * rng.randint(1, 30) + content(rng), scope="project")
            other.delete("note-0")
        finally:
            other.close()
        server.index.sync(force=True)
        assert assert_same_pages(server.index, monkeypatch, 10) > 60


def test_a_term_whose_scores_cannot_be_reproduced_is_ranked_in_full(sandbox: NotesSandbox, monkeypatch) -> None:
    with notes_store(sandbox, 4) as (store, _):
        con = store.index._con
        # One note's recorded length off by one: worked back from it, its score no longer matches.
        row = con.execute("SELECT rowid FROM fts WHERE fts MATCH '\"alpha\"' LIMIT 1").fetchone()
        con.execute("UPDATE files SET tokens = tokens + 1 WHERE id=?", (row[0],))
        store.index.prepare_shortlists()
        assert con.execute("SELECT size FROM short_terms WHERE term='\"alpha\"'").fetchone()[0] == shortlists.UNRANKABLE
        before = store.index.shortlisted
        query = fulltext.parse_query("alpha")
        monkeypatch.setenv(ENV_SHORTLISTS, "0")
        full = store.index.search_ids(query, BOTH, [], 0, 20)
        monkeypatch.delenv(ENV_SHORTLISTS)
        assert store.index.search_ids(query, BOTH, [], 0, 20) == full
        assert store.index.shortlisted == before


def test_a_broad_term_searched_gets_a_shortlist_in_the_background(sandbox: NotesSandbox, monkeypatch) -> None:
    monkeypatch.setattr(index_module, "SHORTLIST_DISCOVERY_SECONDS", 3600.0)
    with notes_store(sandbox, 5, freshness=0.05) as (store, _):
        store.index.start_refresh()
        query = fulltext.parse_query("alph*")  # a 4-character prefix: never looked for unsearched
        deadline = time.monotonic() + 20
        while store.index.shortlisted == 0 and time.monotonic() < deadline:
            store.index.search_ids(query, BOTH, [], 0, 10)
            time.sleep(0.05)
        assert store.index.shortlisted > 0


def test_an_index_kept_in_memory_builds_and_uses_shortlists_too(sandbox: NotesSandbox, monkeypatch) -> None:
    blocker = sandbox.root / "blocked"
    blocker.write_text("a file where the cache directory should be")
    with notes_store(sandbox, 11, index_dir=blocker / "index") as (store, _):
        assert store.index.db_path is None
        assert store.index.prepare_shortlists() > 10
        assert assert_same_pages(store.index, monkeypatch, 12) > 60


def test_a_rebuilt_index_gets_its_shortlists_again(sandbox: NotesSandbox, monkeypatch) -> None:
    with notes_store(sandbox, 12) as (store, _):
        assert store.index.prepare_shortlists() > 10  # its reading connection is open now
        with store.index.lock:
            store.index._rebuild()  # a new database file, as after a damaged one
        con = store.index.connection
        assert con.execute("SELECT count(*) FROM short_terms").fetchone()[0] == 0
        assert store.index.prepare_shortlists() > 10  # read from the new file, not the old one
        assert assert_same_pages(store.index, monkeypatch, 13) > 60


def test_shortlists_can_be_turned_off(sandbox: NotesSandbox, monkeypatch) -> None:
    monkeypatch.setenv(ENV_SHORTLISTS, "0")
    with notes_store(sandbox, 6, 120) as (store, _):
        assert store.index.prepare_shortlists() == 0
        store.search("alpha")
        assert store.index.shortlisted == 0


def test_fts_totals_are_fts5_own_counts(sandbox: NotesSandbox) -> None:
    with notes_store(sandbox, 7, 150) as (store, _):
        con = store.index._con
        rows, tokens = shortlists.fts_totals(con)
        assert rows == con.execute("SELECT count(*) FROM fts").fetchone()[0] == 150
        assert tokens == con.execute("SELECT sum(tokens) FROM files WHERE error IS NULL").fetchone()[0]


def test_varints_read_every_length() -> None:
    def encode(value: int) -> bytes:  # SQLite's varint (sqlite3PutVarint)
        if value > 0x00FFFFFFFFFFFFFF:
            out = [value & 0xFF]
            value >>= 8
            for _ in range(8):
                out.append((value & 0x7F) | 0x80)
                value >>= 7
            return bytes(reversed(out))
        groups = [value & 0x7F]
        value >>= 7
        while value:
            groups.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(reversed(groups))

    values = [0, 1, 127, 128, 300, 16383, 16384, 2**32, 2**56 - 1, 2**56, 2**63 - 1]
    assert shortlists._varints(b"".join(encode(v) for v in values)) == values


def test_the_column_weights_are_whole_numbers() -> None:
    """A note's F is a sum of weights, kept as a whole number and worked back by rounding."""
    assert all(w == int(w) for w in fulltext.WEIGHTS)


def test_hits_counted_from_tokens_are_those_worked_back_from_bm25(sandbox: NotesSandbox) -> None:
    """Notes added later get F from Memory Lens's tokens (`Terms.hits`); a build works F back
    from FTS5's scores. For every shortlisted note of every term, both agree."""
    with notes_store(sandbox, 14, 240) as (store, _):
        store.index.prepare_shortlists()
        con = store.index.connection
        terms = shortlists.Terms(con)
        stored = con.execute("SELECT term, id, f FROM short_rows").fetchall()
        assert len(stored) > 500 and len(terms.prefixes) > 3 and len(terms.exact) > 3
        columns = {r[0]: [c.split() for c in r[1:]] for r in con.execute("SELECT rowid, name, tags, content FROM fts")}
        for term_id, note, f in stored:
            assert terms.hits(columns[note]).get(term_id) == f, (term_id, note)
