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


def test_search_pages_are_best_first_higher_scores_first_ties_in_listing_order(sandbox: NotesSandbox) -> None:  # noqa: F811
    """Every page of a search is a slice of one ranking: scores (-bm25) never rise, notes of one
    score come in listing order, and the hidden copy and the broken file are left out."""
    from memory_lens.core.notes import fulltext

    store = _ranked_notes(sandbox)
    for text in ["alpha", "beta OR omega", "al*", "alpha gamma", "\"alpha alpha\"", "alpha NOT beta"]:
        query = fulltext.parse_query(text)
        for scopes in ([Scope.PROJECT, Scope.GLOBAL], [Scope.PROJECT], [Scope.GLOBAL]):
            for tags in ([], ["odd"]):
                whole, total = store.index.search_ids(query, scopes, tags, 0, 1000)
                assert total == len(whole) > 0, text
                assert all(score > 0 for _, score in whole)
                for offset, limit in ((0, 5), (5, 5), (17, 3), (40, 20)):
                    assert store.index.search_ids(query, scopes, tags, offset, limit) == (
                        whole[offset:offset + limit], total)
                rows = {r.id: r for r in store.index.rows([i for i, _ in whole])}
                keys = [(-score, rows[i].scope is not Scope.PROJECT, name_key(rows[i].name), rows[i].name)
                        for i, score in whole]
                assert keys == sorted(keys), text
                assert all(rows[i].path.name != "zz-copy.json" for i, _ in whole)
    store.close()
