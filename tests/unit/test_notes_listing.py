"""Listing and counting in the notes index: pages walked scope by scope along the name order,
and totals taken from FTS5 alone only when no note is hidden (benchmarks/notes_bench.py measures
the speed; these check the answers stay exact)."""

from __future__ import annotations

from memory_lens.core.discovery import Scope
from memory_lens.core.notes.index import name_key

from notes_fixtures import NotesSandbox, note_data, sandbox  # noqa: F401


def _fill(sandbox: NotesSandbox) -> None:
    project, global_dir = sandbox.project_dir(), sandbox.global_dir
    for i in range(23):
        tags = ["even"] if i % 2 == 0 else ["odd"]
        if i % 3 == 0:
            tags.append("three")
        sandbox.write_note(project, f"p{i:02d}.json", note_data(f"Note {i:02d}", f"alpha beta {i}", tags))
        sandbox.write_note(global_dir, f"g{i:02d}.json", note_data(f"note {i:02d} g", f"alpha gamma {i}", tags, "global"))
    sandbox.write_note(global_dir, "broken.json", "{not json")
    # One name in two files of one directory: the second file is hidden (and reported).
    sandbox.write_note(project, "zz-copy.json", note_data("Note 05", "alpha copy", ["odd"]))
    sandbox.write_note(global_dir, "Zed.json", note_data("Zed", "alpha", ["odd"], "global"))
    sandbox.write_note(global_dir, "ab.json", note_data("ab", "alpha", ["even"], "global"))


def _expected(scopes: list[str], tag: str | None) -> list[tuple[str, str]]:
    rows = []
    for i in range(23):
        tags = {"even" if i % 2 == 0 else "odd"} | ({"three"} if i % 3 == 0 else set())
        if tag is None or tag in tags:
            rows += [("project", f"Note {i:02d}"), ("global", f"note {i:02d} g")]
    rows += [("global", "Zed")] if tag in (None, "odd") else []
    rows += [("global", "ab")] if tag in (None, "even") else []
    rows = [r for r in rows if r[0] in scopes]
    return sorted(rows, key=lambda r: (r[0] != "project", name_key(r[1]), r[1]))


def _all_pages(store, **options) -> tuple[list[tuple[str, str]], set[int]]:
    seen, totals, cursor = [], set(), None
    while True:
        page = store.list(limit=4, cursor=cursor, **options)
        seen += [(n.scope.value, n.name) for n in page.notes]
        totals.add(page.total)
        cursor = page.next_cursor
        if cursor is None:
            return seen, totals


def test_pages_follow_the_listing_order_across_both_scopes_with_and_without_tags(sandbox: NotesSandbox) -> None:  # noqa: F811
    _fill(sandbox)
    store = sandbox.store()
    for scope, scopes in (("both", ["project", "global"]), ("project", ["project"]), ("global", ["global"])):
        for tags in ([], ["odd"], ["even", "three"]):
            expected = _expected(scopes, None) if not tags else [
                r for r in _expected(scopes, tags[0]) if len(tags) == 1 or r in _expected(scopes, tags[1])]
            pages, totals = _all_pages(store, scope=scope, tags=tags)
            assert pages == expected, (scope, tags)
            assert totals == {len(expected)}, (scope, tags)
    problems = {p.path.name for p in store.problems()}
    assert problems == {"broken.json", "zz-copy.json"}


def test_search_totals_leave_hidden_notes_out(sandbox: NotesSandbox) -> None:  # noqa: F811
    _fill(sandbox)
    store = sandbox.store()
    # "copy" is only in the hidden second file of "Note 05": no visible note has it.
    assert store.search("copy").total == 0 and store.search("copy").notes == []
    assert store.list(search="copy").total == 0
    page = store.search("alpha", limit=5)
    assert page.total == 23 * 2 + 2 and len(page.notes) == 5
    assert store.list(search="alpha").total == 48
    # With nothing hidden, the count comes from FTS5 alone and agrees with the join.
    (sandbox.project_dir() / "zz-copy.json").unlink()
    assert store.search("copy").total == 0
    assert store.search("alpha").total == 48
    assert store.search("gamma", scope="global").total == 23
    assert store.search("alpha", tags=["three"]).total == 16
    assert {n.scope for n in store.search("gamma").notes} == {Scope.GLOBAL}


def test_a_search_in_one_scope_is_driven_by_the_full_text_matches(sandbox: NotesSandbox) -> None:
    """Every statement of a one-scope search or filtered list that reads the FTS table starts
    from its matches: never a walk over every file of the scope looking each up in the FTS table
    (SQLite plans these from the schema alone, without statistics, so the plan here is the plan
    over 10,000 notes)."""
    _fill(sandbox)
    store = sandbox.store()
    store.index.sync()
    statements: list[str] = []
    store.index._con.set_trace_callback(statements.append)
    try:
        assert store.search("gamma", scope="global").total == 23
        assert store.search("alpha", scope="project").total == 23
        assert store.list(search="alpha", scope="project", tags=["three"]).total == 8
    finally:
        store.index._con.set_trace_callback(None)
    reading_fts = [s for s in statements if " MATCH " in s and "JOIN files" in s]
    assert len(reading_fts) >= 3
    for sql in reading_fts:
        plan = [row[3] for row in store.index._con.execute("EXPLAIN QUERY PLAN " + sql)]
        assert plan[0].startswith("SCAN fts"), (sql, plan)
    store.close()


def _ranked_notes(sandbox: NotesSandbox):  # noqa: F811
    """90 notes of a few words in both scopes, many ties, a hidden copy and a broken file: a
    store over them, synced."""
    import random

    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "delta", "omega"]
    for i in range(90):
        scope = "project" if i % 3 else "global"
        directory = sandbox.project_dir() if scope == "project" else sandbox.global_dir
        content = " ".join(rng.choice(words) for _ in range(rng.choice([1, 2, 3, 5, 8, 13])))
        tags = ["odd"] if i % 2 else ["even"]
        sandbox.write_note(directory, f"n{i:02d}.json", note_data(f"N {i:02d}", content, tags, scope))
    sandbox.write_note(sandbox.project_dir(), "zz-copy.json", note_data("N 01", "alpha alpha", ["odd"]))  # hidden
    sandbox.write_note(sandbox.global_dir, "broken.json", "{not json")
    store = sandbox.store()
    store.index.sync()
    return store


_RANKED_QUERIES = ["alpha", "beta OR omega", "al*", "alpha gamma", "\"alpha alpha\""]
_PAGES = ((0, 5), (5, 5), (0, 20), (17, 3), (40, 20))


def test_broad_searches_ranked_from_the_fts_table_first_give_the_full_querys_pages(
        sandbox: NotesSandbox, monkeypatch) -> None:
    """`_best_first` (broad searches) returns exactly the pages and scores of the full ranked
    query: every scope, tag, page and query, with hidden and unusable files, and ties."""
    from memory_lens.core.notes import fulltext
    from memory_lens.core.notes import search as search_module

    store = _ranked_notes(sandbox)
    monkeypatch.setattr(search_module, "SPLIT_FROM", 10 ** 9)  # one thread: `_best_first` is what is tested
    results: list[object] = []
    real = search_module.IndexSearch._best_first

    def spy(self, *a):
        page = real(self, *a)
        results.append(page)
        return page

    monkeypatch.setattr(search_module.IndexSearch, "_best_first", spy)
    monkeypatch.setattr(search_module, "RANK_AHEAD_EXTRA", 0)  # cut close to the page: ties and filters matter
    monkeypatch.setattr(search_module, "RANK_AHEAD_FACTOR", 1)
    cases = 0
    for text in _RANKED_QUERIES:
        query = fulltext.parse_query(text)
        for scopes in ([Scope.PROJECT, Scope.GLOBAL], [Scope.PROJECT], [Scope.GLOBAL]):
            for tags in ([], ["odd"]):
                for offset, limit in _PAGES:
                    monkeypatch.setattr(search_module, "RANK_AHEAD_FROM", 10 ** 9)
                    full = store.index.search_ids(query, scopes, tags, offset, limit)
                    monkeypatch.setattr(search_module, "RANK_AHEAD_FROM", 0)
                    fast = store.index.search_ids(query, scopes, tags, offset, limit)
                    assert fast == full, (text, scopes, tags, offset, limit)
                    cases += 1
    assert cases == 150
    answered = [r for r in results if r is not None]
    # Only searches of both scopes without a tag take the fast path (25 of the 150): both it and
    # its fallback ran.
    assert len(results) == 25 and len(answered) > 5 and len(results) - len(answered) > 5
    store.close()


def _every_page(store, search_module, monkeypatch) -> list[object]:
    """`search_ids` for every query, scope set, tag filter and page of `_ranked_notes`, both with
    and without `_best_first`."""
    from memory_lens.core.notes import fulltext

    out = []
    for text in _RANKED_QUERIES:
        query = fulltext.parse_query(text)
        for scopes in ([Scope.PROJECT, Scope.GLOBAL], [Scope.PROJECT], [Scope.GLOBAL]):
            for tags in ([], ["odd"]):
                for offset, limit in _PAGES:
                    for ahead_from in (0, 10 ** 9):
                        monkeypatch.setattr(search_module, "RANK_AHEAD_FROM", ahead_from)
                        out.append(store.index.search_ids(query, scopes, tags, offset, limit))
    return out


def test_searches_ranked_in_two_halves_at_once_give_the_one_thread_pages(
        sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    """A broad search ranked in two rowid halves, the upper one by the second reader on its own
    thread, gives exactly the pages, scores and totals of one thread ranking every match: every
    scope, tag, page and query, with ties, a hidden note and a broken file."""
    import threading

    from memory_lens.core.notes import search as search_module

    store = _ranked_notes(sandbox)
    monkeypatch.setattr(search_module, "_cpus", lambda: 2)
    monkeypatch.setattr(search_module, "SPLIT_FROM", 10 ** 9)
    alone = _every_page(store, search_module, monkeypatch)
    assert store.index._search._second is None

    halves: list[object] = []
    threads: set[str] = set()
    real = search_module.IndexSearch._in_halves

    def spy(self, work):
        def traced(con, part, args):
            threads.add(threading.current_thread().name)
            return work(con, part, args)
        answer = real(self, traced)
        halves.append(answer)
        return answer

    monkeypatch.setattr(search_module.IndexSearch, "_in_halves", spy)
    monkeypatch.setattr(search_module, "SPLIT_FROM", 0)
    split = _every_page(store, search_module, monkeypatch)
    assert split == alone
    assert len(halves) == len(alone) == 300 and all(h is not None for h in halves)
    assert threading.current_thread().name in threads
    assert any(name.startswith("memory-lens-notes-rank") for name in threads)
    # A page ending past SPLIT_PAGE_MAX is ranked by one thread.
    monkeypatch.setattr(search_module, "SPLIT_PAGE_MAX", 10)
    halves.clear()
    from memory_lens.core.notes import fulltext
    store.index.search_ids(fulltext.parse_query("alpha"), [Scope.PROJECT, Scope.GLOBAL], [], 5, 10)
    assert halves == []
    store.close()
    assert store.index._search._second is None


def test_a_second_reader_on_another_database_or_a_change_meanwhile_leaves_the_search_to_one_thread(
        sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    """The halves are used only when both saw the same database: another process writing the
    index while they ran, or an index file replaced since this one was opened, and the search is
    answered by one thread, the same answer; a reader that cannot open the same database is not
    used again."""
    import sqlite3

    from memory_lens.core.notes import fulltext
    from memory_lens.core.notes import halves as halves_module
    from memory_lens.core.notes import index as index_module
    from memory_lens.core.notes import search as search_module

    store = _ranked_notes(sandbox)
    monkeypatch.setattr(search_module, "_cpus", lambda: 2)
    query, both = fulltext.parse_query("alpha"), [Scope.PROJECT, Scope.GLOBAL]
    monkeypatch.setattr(search_module, "SPLIT_FROM", 10 ** 9)
    expected = store.index.search_ids(query, both, ["odd"], 0, 7)
    monkeypatch.setattr(search_module, "SPLIT_FROM", 0)
    answers: list[object] = []
    real = search_module.IndexSearch._in_halves
    monkeypatch.setattr(search_module.IndexSearch, "_in_halves",
                        lambda self, work: answers.append(real(self, work)) or answers[-1])
    db = str(store.index.db_path)

    # Another connection commits while the reader ranks its half.
    real_submit = halves_module.SecondReader.submit

    def writing_meanwhile(self, work):
        def work_and_write(con):
            other = sqlite3.connect(db, isolation_level=None)
            other.execute("INSERT OR REPLACE INTO meta VALUES ('touched', hex(randomblob(4)))")
            other.close()
            return work(con)
        return real_submit(self, work_and_write)

    monkeypatch.setattr(halves_module.SecondReader, "submit", writing_meanwhile)
    assert store.index.search_ids(query, both, ["odd"], 0, 7) == expected
    assert answers == [None] and not store.index._search._second.failed
    monkeypatch.setattr(halves_module.SecondReader, "submit", real_submit)
    answers.clear()
    assert store.index.search_ids(query, both, ["odd"], 0, 7) == expected
    assert answers and answers[0] is not None

    # The index file was replaced (a rebuild by another process) since this index opened it: a
    # reader opened now reads another database, and refuses it.
    store.index._search._close_second()
    main = store.index._con
    real_build_id = index_module._build_id
    monkeypatch.setattr(index_module, "_build_id",
                        lambda con: real_build_id(con) if con is main else "a build of another index")
    answers.clear()
    assert store.index.search_ids(query, both, ["odd"], 0, 7) == expected
    assert answers == [None] and store.index._search._second.failed
    answers.clear()
    assert store.index.search_ids(query, both, ["odd"], 0, 7) == expected
    assert answers == [None]  # not tried again
    store.close()


def test_an_index_in_memory_or_one_cpu_ranks_on_one_thread(sandbox: NotesSandbox, monkeypatch) -> None:  # noqa: F811
    from memory_lens.core.notes import fulltext
    from memory_lens.core.notes import search as search_module

    store = _ranked_notes(sandbox)
    monkeypatch.setattr(search_module, "SPLIT_FROM", 0)
    query, both = fulltext.parse_query("alpha"), [Scope.PROJECT, Scope.GLOBAL]
    monkeypatch.setattr(search_module, "_cpus", lambda: 1)
    one_cpu = store.index.search_ids(query, both, [], 0, 9)
    assert store.index._search._second is None
    store.close()
    blocked = sandbox.root / "not-a-directory"
    blocked.write_text("")
    in_memory = sandbox.store(index_dir=blocked / "index")
    assert in_memory.index.db_path is None
    in_memory.index.sync()
    monkeypatch.setattr(search_module, "_cpus", lambda: 2)
    assert in_memory.index.search_ids(query, both, [], 0, 9) == one_cpu
    assert in_memory.index._search._second is None
    in_memory.close()
