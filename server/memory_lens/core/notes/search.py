"""Queries over the notes index: pages of notes in listing order or best first, and the ways a
broad search is ranked fast with exactly the full ranking's answer.

`NotesIndex` keeps the index in step with the files; `IndexSearch` answers from it, on the
index's connection and under its lock:

- a listing (no query, or a query in listing order): one scope after the other along the
  `(scope, name_key, name)` index, so a page costs what it holds;
- a search, best first by BM25 (`bm25()`, then the listing order): from a broad term's shortlist
  when it can tell the page (`shortlists`); else, for a broad query, its matches ranked in two
  rowid halves at once (this thread and a second reader's, `halves`), and the page picked from the
  FTS table's best matches before joining them with their files (`_best_first`); else the full
  ranked query. Every path gives the same notes, order, scores and total;
- without FTS5, a scan of the same tokens with FTS5's formula and statistics (`_scan`).
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, TypeVar

from memory_lens.core.cpus import usable_cpus
from memory_lens.core.discovery import Scope
from memory_lens.core.notes import fulltext, shortlists
from memory_lens.core.notes.halves import SecondReader
from memory_lens.core.notes.locations import Location
from memory_lens.core.notes.model import tag_key
from memory_lens.core.sqlite_setup import sqlite3

T = TypeVar("T")
ENV_SPLIT = "MEMORY_LENS_NOTES_SPLIT"  # "0": broad searches ranked on one thread (`_in_halves`)
ENV_SHORTLISTS = "MEMORY_LENS_NOTES_SHORTLISTS"  # "0": no shortlists used or built (`shortlists`)

# A search of every note (both scopes, no tag filter) with at least RANK_AHEAD_FROM matches, for
# a page ending by RANK_AHEAD_MAX, ranks from the FTS table alone first (`_best_first`). With a
# filter the full query is cheaper: SQLite applies it before computing `bm25()`.
RANK_AHEAD_FROM = 500
RANK_AHEAD_MAX = 1000
RANK_AHEAD_FACTOR, RANK_AHEAD_EXTRA = 2, 32  # it takes FACTOR × the page's end + EXTRA matches
# A search whose query matches at least SPLIT_FROM notes (whatever its filters), for a page ending
# by SPLIT_PAGE_MAX, is ranked in two rowid halves at once: this thread's and a second reader's
# (`halves`). Below it, handing half the work to another thread costs more than it saves.
SPLIT_FROM = 2000
SPLIT_PAGE_MAX = 1000
_ORDER = "CASE f.scope WHEN 'project' THEN 0 ELSE 1 END, f.name_key, f.name"
_WEIGHTS = ", ".join(str(w) for w in fulltext.WEIGHTS)
# The best matches of an FTS5 query by score alone, (rowid, score); {part}: a condition on the rowid.
_BEST_SQL_PART = f"SELECT rowid, bm25(fts, {_WEIGHTS}) AS score FROM fts WHERE fts MATCH ?{{part}} ORDER BY score LIMIT ?"
_BEST_SQL = _BEST_SQL_PART.format(part="")
# The first matches of an FTS5 query in the order of a search's pages: score, then the listing
# order; (id, score, and the three keys of `_ORDER`, to merge two halves in the same order).
_RANKED_SQL = (f"SELECT f.id, bm25(fts, {_WEIGHTS}) AS score, CASE f.scope WHEN 'project' THEN 0 ELSE 1 END, "
               f"f.name_key, f.name FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?{{part}}{{where}} "
               f"ORDER BY score, {_ORDER} LIMIT ? OFFSET ?")


class SearchedIndex(Protocol):
    """What `IndexSearch` and `ShortlistBuilder` use of the index (`NotesIndex`)."""

    fts: bool
    locations: list[Location]
    db_path: Path | None

    @property
    def connection(self) -> sqlite3.Connection: ...

    @property
    def lock(self) -> threading.RLock: ...

    @property
    def closed(self) -> bool: ...

    @property
    def stopping(self) -> threading.Event: ...

    def guard(self, action: Callable[[], T]) -> T: ...

    def second_reader(self) -> SecondReader: ...

    def open_reader(self) -> sqlite3.Connection: ...

    def is_current(self, con: sqlite3.Connection) -> bool: ...

    def generation(self, con: sqlite3.Connection) -> str | None: ...


class IndexSearch:
    """The queries of one `NotesIndex` (see the module docstring). Its callers hold the index's
    lock, as the index's own methods do."""

    def __init__(self, index: SearchedIndex) -> None:
        self._index = index
        self._scan_cache: tuple[int, dict[int, tuple[list[str], list[list[str]]]]] | None = None
        self._second: SecondReader | None = None  # see `_in_halves`
        self.wanted: set[fulltext.Phrase] = set()  # broad terms searched without a shortlist
        self.shortlisted = 0  # searches answered from a shortlist (for tests and benchmarks)

    @property
    def _con(self) -> sqlite3.Connection:
        return self._index.connection

    @property
    def _lock(self) -> threading.RLock:
        return self._index.lock

    @property
    def fts(self) -> bool:
        return self._index.fts

    @property
    def locations(self) -> list[Location]:
        return self._index.locations

    def _guard(self, action: Callable[[], T]) -> T:
        return self._index.guard(action)

    def reset(self) -> None:
        """Forget what was kept of the database (it is being replaced)."""
        self._close_second()
        self._scan_cache = None
        self.wanted.clear()

    def changed(self) -> None:
        """The index's connection changed rows (`data_version` only counts other connections')."""
        self._scan_cache = None

    close = reset

    def _filters(self, scopes: Sequence[Scope], tags: Sequence[str], fts_first: bool = True) -> tuple[str, list[Any]]:
        """The WHERE conditions (on `files f`) of SCOPES and TAGS. FTS_FIRST: in a join with the
        FTS table, whose matches must drive it: a plain `f.scope=?` lets SQLite walk every file
        of the scope through an index and look each one up in the FTS table instead (65 ms for a
        search of 10,000 notes in one scope, against 0.4 ms), so the scope test is written `+f.scope`,
        which no index serves."""
        sql = " AND f.error IS NULL AND f.shadow=0"
        args: list[Any] = []
        if len(scopes) == 1:
            sql += " AND +f.scope=?" if fts_first else " AND f.scope=?"
            args.append(scopes[0].value)
        for tag in tags:  # read from the row the join fetches anyway, not looked up in `tags` per match
            sql += " AND instr(f.tag_keys, ?)"
            args.append(f"\n{tag_key(tag)}\n")
        return sql, args

    def list_ids(self, scopes: Sequence[Scope], tags: Sequence[str], offset: int, limit: int,
                 query: fulltext.Query | None = None) -> tuple[list[int], int]:
        """A page of note ids in listing order (project first, then by name), and the total;
        with QUERY, only the notes it matches."""
        with self._lock:
            if query is not None and not query.empty and not self.fts:
                scored = self._scan(query, scopes, tags)
                ordered = [i for i, _ in sorted(scored, key=lambda s: s[1][1:])]
                return ordered[offset:offset + limit], len(ordered)
            if query is None or query.empty:
                return self._guard(lambda: self._list_in_order(scopes, tags, offset, limit))
            where, args = self._filters(scopes, tags)

            def run() -> tuple[list[int], int]:
                text = query.fts()
                if self._everywhere(scopes, tags) and self._nothing_hidden():
                    total = self._fts_count(text)
                else:
                    total = self._count_matches(text, where, args)
                ids = [r[0] for r in self._con.execute(
                    f"SELECT f.id FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?{where} "
                    f"ORDER BY {_ORDER} LIMIT ? OFFSET ?", [text, *args, limit, offset])]
                return ids, total
            return self._guard(run)

    def _count_matches(self, text: str, where: str, args: list[Any], con: sqlite3.Connection | None = None,
                       part: tuple[str, list[Any]] = ("", [])) -> int:
        """How many visible notes pass WHERE (with ARGS: `_filters`) among the matches of TEXT (an
        FTS5 query), of the rowids PART (a condition on `fts.rowid` and its arguments) only."""
        return (con or self._con).execute(
            f"SELECT count(*) FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?{part[0]}{where}",
            [text, *part[1], *args]).fetchone()[0]

    def _fts_count(self, text: str) -> int:
        """How many rows of the FTS table match TEXT (an FTS5 query), visible notes or not."""
        return shortlists.match_count(self._con, text)

    def _everywhere(self, scopes: Sequence[Scope], tags: Sequence[str]) -> bool:
        """SCOPES and TAGS filter nothing out: every scope of this index, no tag."""
        return not tags and set(scopes) == {loc.scope for loc in self.locations}

    def _nothing_hidden(self) -> bool:
        """No note is hidden by another file of its name: then every FTS row is a visible note
        (files that are not notes have none), and FTS5 counts the matches of both scopes alone."""
        # `shadow=1`, with the condition of the partial index `files_problems` so that SQLite uses it.
        return self._con.execute(
            "SELECT 1 FROM files WHERE (error IS NOT NULL OR shadow=1) AND shadow=1 LIMIT 1").fetchone() is None

    def _list_in_order(self, scopes: Sequence[Scope], tags: Sequence[str], offset: int,
                       limit: int) -> tuple[list[int], int]:
        """A page of every visible note of SCOPES having TAGS, in listing order: one scope after
        the other, each walked along its (scope, name_key, name) index, so a page costs what it
        holds, not a sort of every note."""
        ordered = sorted(scopes, key=lambda s: 0 if s is Scope.PROJECT else 1)
        has_tag = " AND f.id IN (SELECT id FROM tags WHERE tag=?)"
        tag_sql = has_tag * len(tags)
        tag_args = [tag_key(t) for t in tags]
        if tags:  # driven by the first tag's rows, not by every note of the scope
            counted = self._con.execute(
                "SELECT f.scope, count(*) FROM tags t CROSS JOIN files f ON f.id = t.id WHERE t.tag=? "
                f"AND f.error IS NULL AND f.shadow=0{has_tag * (len(tags) - 1)} GROUP BY f.scope",
                tag_args).fetchall()
        else:
            counted = self._con.execute("SELECT scope, count(*) FROM files WHERE error IS NULL AND shadow=0 "
                                        "GROUP BY scope").fetchall()
        counts = dict(counted)
        ids: list[int] = []
        skip = offset
        for scope in ordered:
            here = counts.get(scope.value, 0)
            if skip >= here:
                skip -= here
                continue
            want = limit - len(ids)
            if want <= 0:
                break
            ids += [r[0] for r in self._con.execute(
                f"SELECT f.id FROM files f WHERE f.scope=? AND f.error IS NULL AND f.shadow=0{tag_sql} "
                "ORDER BY f.name_key, f.name LIMIT ? OFFSET ?", [scope.value, *tag_args, want, skip])]
            skip = 0
        return ids, sum(counts.get(s.value, 0) for s in ordered)

    def search_ids(self, query: fulltext.Query, scopes: Sequence[Scope], tags: Sequence[str],
                   offset: int, limit: int) -> tuple[list[tuple[int, float]], int]:
        """A page of (note id, bm25 score) best first, and the total number of matches."""
        with self._lock:
            if query.empty:
                return [], 0
            if not self.fts:
                scored = sorted(self._scan(query, scopes, tags), key=lambda s: s[1])
                return [(i, key[0]) for i, key in scored[offset:offset + limit]], len(scored)
            where, args = self._filters(scopes, tags)
            text = query.fts()
            everywhere = self._everywhere(scopes, tags)

            def run() -> tuple[list[tuple[int, float]], int]:
                matches = self._fts_count(text)
                total = matches if everywhere and self._nothing_hidden() else None
                if matches >= shortlists.BROAD:
                    page = self._shortlisted(query, matches, where, args, offset, limit)
                    if page is not None:
                        return page, total if total is not None else self._count_matches(text, where, args)
                if matches >= SPLIT_FROM and offset + limit <= SPLIT_PAGE_MAX:
                    answer = self._search_in_halves(text, where, args, offset, limit, total, everywhere)
                    if answer is not None:
                        return answer
                if total is None:
                    total = self._count_matches(text, where, args)
                if everywhere and total >= RANK_AHEAD_FROM and offset + limit <= RANK_AHEAD_MAX:
                    best = self._con.execute(_BEST_SQL, [text, _ahead(offset + limit) + 1]).fetchall()
                    page = self._best_first(best, where, args, offset, limit)
                    if page is not None:
                        return page, total
                rows = self._con.execute(_RANKED_SQL.format(part="", where=where),
                                         [text, *args, limit, offset]).fetchall()
                return [(r[0], r[1]) for r in rows], total
            return self._guard(run)

    def _shortlisted(self, query: fulltext.Query, matches: int, where: str, args: list[Any],
                     offset: int, limit: int) -> list[tuple[int, float]] | None:
        """The page of a broad search of one term from its shortlist (`shortlists`); None when it
        cannot be had that way. A broad term without a shortlist is built one next time
        `ShortlistBuilder.prepare` runs (the servers' background thread)."""
        term = shortlists.term_of(query)
        if term is None or not shortlists_on(self._index):
            return None
        page = shortlists.page(self._con, term, matches, where, args, _ORDER, offset, limit)
        if page is not None:
            self.shortlisted += 1
        elif not shortlists.has(self._con, term):
            self.wanted.add(term)
        return page

    def _search_in_halves(self, text: str, where: str, args: list[Any], offset: int, limit: int,
                          total: int | None, everywhere: bool) -> tuple[list[tuple[int, float]], int] | None:
        """`search_ids`'s answer with the matches counted and ranked in two halves at once
        (`_in_halves`), each half's best merged; None when it cannot be had that way. TOTAL: the
        count, when already known. EVERYWHERE: both scopes without tags (`_best_first` may serve)."""
        need = offset + limit
        ahead = _ahead(need) if everywhere and need <= RANK_AHEAD_MAX else None

        def half(con: sqlite3.Connection, part: str, part_args: list[Any]) -> tuple[int | None, list[Any]]:
            count = self._count_matches(text, where, args, con, (part, part_args)) if total is None else None
            if ahead is not None:
                return count, con.execute(_BEST_SQL_PART.format(part=part), [text, *part_args, ahead + 1]).fetchall()
            return count, con.execute(_RANKED_SQL.format(part=part, where=where),
                                      [text, *part_args, *args, need, 0]).fetchall()

        halves = self._in_halves(half)
        if halves is None:
            return None
        (low_count, low), (high_count, high) = halves
        if total is None:
            assert low_count is not None and high_count is not None
            total = low_count + high_count
        if ahead is not None:
            best = sorted(low + high, key=lambda r: r[1])[:ahead + 1]
            page = self._best_first(best, where, args, offset, limit)
            if page is not None:
                return page, total
            rows = self._con.execute(_RANKED_SQL.format(part="", where=where), [text, *args, need, 0]).fetchall()
        else:
            # In the full query's order: score, then the listing order (`_ORDER`'s three keys).
            rows = sorted(low + high, key=lambda r: r[1:])
        return [(r[0], r[1]) for r in rows[offset:need]], total

    def _in_halves(self, work: Callable[[sqlite3.Connection, str, list[Any]], T]) -> tuple[T, T] | None:
        """WORK(connection, a condition on `fts.rowid`, its arguments) for the lower half of the
        rowids on this thread and for the upper half on the second reader's thread (`halves`),
        both at once: the two answers; None when there is no second reader to be had (an index in
        memory, one CPU, a reader that failed, `$MEMORY_LENS_NOTES_SPLIT` set to `0`) or another
        process changed the index meanwhile (the halves could have seen two versions of it)."""
        if self._index.db_path is None or _cpus() < 2 or os.environ.get(ENV_SPLIT) == "0":
            return None
        if self._second is None:
            self._second = self._index.second_reader()
        # Two subqueries: each is one step of the rowid b-tree; `min(id), max(id)` in one scans it.
        low, high = self._con.execute("SELECT (SELECT min(id) FROM files), (SELECT max(id) FROM files)").fetchone()
        if low is None or low == high:
            return None
        middle = (low + high) // 2
        version = self._con.execute("PRAGMA data_version").fetchone()[0]
        second = self._second
        future = second.submit(lambda con: work(con, " AND fts.rowid > ?", [middle]))
        if future is None:
            return None
        theirs: T | None = None
        try:
            mine = work(self._con, " AND fts.rowid <= ?", [middle])
        finally:  # the reader's half is waited for even when this one failed
            try:
                theirs = future.result()
            except sqlite3.Error as err:
                second.fail(err)
        if second.failed or self._con.execute("PRAGMA data_version").fetchone()[0] != version:
            return None
        return mine, theirs  # type: ignore[return-value]

    def _close_second(self) -> None:
        second, self._second = self._second, None
        if second is not None:
            second.close()

    def _best_first(self, best: list[Any], where: str, args: list[Any],
                    offset: int, limit: int) -> list[tuple[int, float]] | None:
        """The page of a broad search, exactly as the full query orders it, without joining every
        match with its file row (2 of 10 ms with 10,000 matches): BEST, the FTS table's best
        `_ahead(offset + limit) + 1` matches by score, (rowid, score), best first (fewer: every
        match); those scoring strictly better than the first one left out are every match of
        those scores, so when enough of them are visible notes, the page is among them, in the
        same order (score, then the listing order). None when it cannot tell."""
        need = offset + limit
        ahead = _ahead(need)
        every = len(best) <= ahead
        if not every:
            cut = best[ahead][1]
            best = [r for r in best[:ahead] if r[1] < cut]
            if len(best) < need:
                return None
        if not best:
            return []
        values = ",".join("(?, ?)" for _ in best)
        visible = self._con.execute(
            f"WITH c(id, score) AS (VALUES {values}) SELECT f.id, c.score FROM c JOIN files f ON f.id = c.id "
            f"WHERE 1=1{where} ORDER BY c.score, {_ORDER}", [x for r in best for x in r] + args).fetchall()
        if len(visible) < need and not every:
            return None  # notes left out by the filters left too few: the full query decides
        return [(r[0], r[1]) for r in visible[offset:need]]

    # The plain scan (no FTS5) ----------------------------------------------------------------------

    def _scan(self, query: fulltext.Query, scopes: Sequence[Scope],
              tags: Sequence[str]) -> list[tuple[int, tuple[float, int, str, str]]]:
        """(id, (score, scope order, name key, name)) of every visible match, by a scan of the
        tokens with FTS5's bm25 formula and statistics (every indexed note counts)."""
        generation = self._con.execute("PRAGMA data_version").fetchone()[0]
        if self._scan_cache is None or self._scan_cache[0] != generation:
            docs = {}
            for r in self._con.execute("SELECT rowid, name, tags, content FROM fts"):
                texts = [r[1], r[2], r[3]]
                docs[r[0]] = (texts, [t.split() for t in texts])
            self._scan_cache = (generation, docs)
        docs = self._scan_cache[1]
        n_rows = len(docs)
        if not n_rows:
            return []
        total_tokens = sum(sum(len(c) for c in cols) for _, cols in docs.values())
        avgdl = total_tokens / n_rows
        hits = [0] * len(query.phrases)
        matches: list[tuple[int, list[list[int]], int]] = []
        for doc_id, (texts, columns) in docs.items():
            raw = fulltext.raw_counts(query, columns, texts)
            for i, per_column in enumerate(raw):
                if any(per_column):
                    hits[i] += 1
            counts = fulltext.phrase_counts(query, raw)
            if counts is not None:
                matches.append((doc_id, counts, sum(len(c) for c in columns)))
        idfs = [fulltext.idf(n_rows, h) for h in hits]
        where, args = self._filters(scopes, tags, fts_first=False)
        visible = {r[0]: (r[1], r[2], r[3]) for r in self._con.execute(
            f"SELECT f.id, f.scope, f.name_key, f.name FROM files f WHERE 1=1{where}", args)}
        out = []
        for doc_id, counts, size in matches:
            meta = visible.get(doc_id)
            if meta is None:
                continue
            score = fulltext.bm25_score(counts, idfs, size, avgdl)
            out.append((doc_id, (score, 0 if meta[0] == "project" else 1, meta[1], meta[2])))
        return out


def _ahead(need: int) -> int:
    """How many of the FTS table's best matches `_best_first` takes for a page ending at NEED."""
    return RANK_AHEAD_FACTOR * need + RANK_AHEAD_EXTRA


@lru_cache(maxsize=1)
def _cpus() -> int:
    return usable_cpus()


def shortlists_on(index: SearchedIndex) -> bool:
    """Whether INDEX uses and builds shortlists: with FTS5, unless `$MEMORY_LENS_NOTES_SHORTLISTS` is `0`."""
    return index.fts and os.environ.get(ENV_SHORTLISTS) != "0"
