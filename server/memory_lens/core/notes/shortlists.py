"""Shortlists: a search for one word found in most notes ranks a few hundred of them, not all.

FTS5's `bm25()` scores every match of a query, about 0.8 µs each: a word in all of 10,000 notes
costs 8 ms of ranking however small the page. For a query of one word (or one prefix, `ve*`),
a note's score depends on two numbers only: F, its weighted count of hits (each hit in the name
counts 4, in the tags 2, in the content 1: `fulltext.WEIGHTS`), and D, its length in tokens:

    score = -idf × F × (k1 + 1) / (F + k1 × (1 - b + b × D / avgdl))

At equal F a shorter note scores strictly better, whatever idf and avgdl are. So for each broad
term the index keeps a shortlist: for every value of F, the notes with the K smallest lengths
(and those tying with the K-th), and the front: the smallest length among the notes of that F
left out. A note left out scores at best what its F's front scores.

A search of such a term computes the shortlist's scores in SQL, with the same operations in the
same order as `bm25()` (so the same numbers, bit for bit), and the best score a note left out
could have (the best front). When the last note of the page scores strictly better than that,
the page is exact: the same notes, order and scores as the full ranking. Otherwise (a filter
left too few shortlisted notes, a page too deep) the full ranking runs.

Building a shortlist takes one full ranking: the F of each match is worked back from its
`bm25()` score and its length, and every match's score is computed again from them and compared
with `bm25()`; a term where one differs gets no shortlist. The servers build them on their
background thread (`NotesIndex.prepare_shortlists`): the words in at least `BROAD` notes, the
prefixes of 2 and 3 characters as well, and any other broad term once it is searched.

Every change of the index keeps the shortlists true (`forget`, `note_added`): a note removed
leaves its shortlists; a note added joins the shortlist of every term it holds, unless it is no
shorter than the front of its F. No front moves, so every note left out still scores at best
its front. A shortlist changed by half its size is built again.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from memory_lens.core.notes import fulltext
from memory_lens.core.sqlite_setup import sqlite3

log = logging.getLogger("memory_lens.notes")

BROAD = 2000  # a term in this many notes gets a shortlist (below it, ranking all costs < 2 ms)
KEEP = 16  # notes kept per value of F (and those tying with the last one)
PREFIX_LENGTHS = fulltext.PREFIX_INDEX_LENGTHS  # prefixes given a shortlist unsearched
PAGE_MAX = 200  # a page ending deeper than this is ranked in full
REBUILD_AT = 0.5  # a shortlist whose rows changed by this share of its size is built again
_WEIGHTS = tuple(int(w) for w in fulltext.WEIGHTS)  # whole numbers, so F (a sum of them) is one
UNRANKABLE = -1  # `short_terms.size` of a term whose scores could not be reproduced

# One score, as FTS5's bm25() computes it for a query of one phrase (fts5_aux.c): the same
# operations in the same order, so the same double (`score` and `fulltext.phrase_weight` in Python).
_SCORE = "-1.0 * (0.0 + :idf * ((%(f)s * (:k1 + 1.0)) / (%(f)s + :k1 * (1 - :b + :b * %(d)s / :avgdl))))"
# Every match of :term with its score and length, F worked back from both, grouped by (F, length):
# how many notes, which, and how many of their scores the formula does not give back exactly.
# (Each step materialized: bm25() cannot be used in a grouping, and F is computed once a row.)
_BUILD_SQL = f"""
WITH m AS MATERIALIZED (
    SELECT fts.rowid AS id, bm25(fts, {", ".join(map(str, fulltext.WEIGHTS))}) AS s, f.tokens AS d
    FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH :term),
g AS MATERIALIZED (
    SELECT id, s, d, CAST(round(r * (:k1 * (1 - :b + :b * d / :avgdl)) / (:k1 + 1.0 - r)) AS INTEGER) AS f
    FROM (SELECT id, s, d, -s / :idf AS r FROM m))
SELECT f, d, group_concat(id), sum(d IS NULL OR f < 1 OR {_SCORE % {"f": "f", "d": "d"}} IS NOT s)
FROM g GROUP BY f, d ORDER BY f, d"""
_PAGE_SQL = (f"SELECT f.id, {_SCORE % {'f': 's.f', 'd': 'f.tokens'}} AS score FROM short_rows s "
             "JOIN files f ON f.id = s.id WHERE s.term = :term{where} ORDER BY score, {order} LIMIT :need")


def create_schema(con: sqlite3.Connection) -> None:
    """The shortlists' tables (`files.tokens`, each note's length, is the index's)."""
    # size: the shortlist's rows when built (UNRANKABLE: none); changes: rows added or removed since.
    # term: FTS5's text of it (`"ve" *`), token and prefix: what it is made of.
    con.execute("CREATE TABLE IF NOT EXISTS short_terms(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE, "
                "token TEXT NOT NULL, prefix INTEGER NOT NULL, size INTEGER NOT NULL, "
                "changes INTEGER NOT NULL DEFAULT 0)")
    con.execute("CREATE TABLE IF NOT EXISTS short_rows(term INTEGER NOT NULL, id INTEGER NOT NULL, "
                "f INTEGER NOT NULL, PRIMARY KEY(term, id)) WITHOUT ROWID")
    con.execute("CREATE INDEX IF NOT EXISTS short_rows_id ON short_rows(id)")
    con.execute("CREATE TABLE IF NOT EXISTS short_fronts(term INTEGER NOT NULL, f INTEGER NOT NULL, "
                "d INTEGER NOT NULL, PRIMARY KEY(term, f)) WITHOUT ROWID")


def match_count(con: sqlite3.Connection, text: str) -> int:
    """How many rows of the FTS table match TEXT (an FTS5 query), visible notes or not."""
    return con.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (text,)).fetchone()[0]


def term_of(query: fulltext.Query) -> fulltext.Phrase | None:
    """The term of QUERY when it is one word or one prefix, else None."""
    if len(query.groups) != 1 or len(query.groups[0]) != 1 or len(query.groups[0][0].tokens) != 1:
        return None
    return query.groups[0][0]


def _term(token: str, prefix: bool) -> fulltext.Phrase:
    return fulltext.Phrase((token,), prefix)


def fts_totals(con: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens of every column) of the FTS table, from FTS5's own record of them (the
    "averages" record, rowid 1 of `fts_data`: varints, the row count then each column's tokens):
    what `bm25()` takes its average length from."""
    row = con.execute("SELECT block FROM fts_data WHERE id=1").fetchone()
    values = _varints(row[0]) if row is not None and row[0] else []
    return (values[0], sum(values[1:])) if values else (0, 0)


def _varints(blob: bytes) -> list[int]:
    """SQLite's variable-length integers (big-endian, 7 bits a byte, the 9th byte 8 bits)."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def score(f: int, d: int, idf: float, avgdl: float) -> float:
    """`bm25()` of a note with weighted hits F and length D, for a query of one term (as `_SCORE`)."""
    return -1.0 * (0.0 + fulltext.phrase_weight(f, idf, d, avgdl))


def _statistics(con: sqlite3.Connection, matches: int) -> dict[str, Any] | None:
    rows, tokens = fts_totals(con)
    if rows <= 0:
        return None
    return {"idf": fulltext.idf(rows, matches), "avgdl": tokens / rows, "k1": fulltext.K1, "b": fulltext.B}


def page(con: sqlite3.Connection, term: fulltext.Phrase, matches: int, where: str, args: Sequence[Any], order: str,
         offset: int, limit: int) -> list[tuple[int, float]] | None:
    """The page [OFFSET, OFFSET + LIMIT) of a search of TERM (MATCHES notes match it) among the
    notes passing WHERE (conditions on `files f`, with ARGS), (id, score) in the order of the
    full ranking (score, then ORDER); None when the shortlist cannot tell it."""
    need = offset + limit
    if need > PAGE_MAX:
        return None
    found = con.execute("SELECT id, size FROM short_terms WHERE term=?", (term.fts(),)).fetchone()
    if found is None or found[1] == UNRANKABLE:
        return None
    stats = _statistics(con, matches)
    if stats is None:
        return None
    named = {f"a{i}": a for i, a in enumerate(args)}
    rows = con.execute(_PAGE_SQL.format(where=_named(where, len(args)), order=order),
                       {**stats, **named, "term": found[0], "need": need}).fetchall()
    fronts = con.execute("SELECT f, d FROM short_fronts WHERE term=?", (found[0],)).fetchall()
    if fronts:
        best_left_out = min(score(f, d, stats["idf"], stats["avgdl"]) for f, d in fronts)
        if len(rows) < need or not rows[-1][1] < best_left_out:
            return None
    return [(r[0], r[1]) for r in rows[offset:need]]


def has(con: sqlite3.Connection, term: fulltext.Phrase) -> bool:
    """Whether TERM has a shortlist (or was found unrankable)."""
    return con.execute("SELECT 1 FROM short_terms WHERE term=?", (term.fts(),)).fetchone() is not None


def _named(where: str, count: int) -> str:
    """WHERE with its COUNT `?` placeholders named :a0, :a1, … (the page query names its own)."""
    parts = where.split("?")
    if len(parts) != count + 1:
        raise ValueError("the filter's placeholders do not match its arguments")
    return "".join(part + (f":a{i}" if i < count else "") for i, part in enumerate(parts))


@dataclass
class Built:
    """A term's shortlist as measured on a snapshot of the index (`measure`)."""

    term: fulltext.Phrase
    generation: str | None
    rows: list[tuple[int, int]]  # (note id, F)
    fronts: list[tuple[int, int]]  # (F, smallest length left out)
    exact: bool  # every match's score came back exactly: else the term gets no shortlist


def measure(con: sqlite3.Connection, term: fulltext.Phrase, generation: Any) -> Built | None:
    """TERM's shortlist, read in one snapshot of the index on CON (GENERATION(con): the
    snapshot's generation, which `store` checks is still current); None when no note matches."""
    con.execute("BEGIN")
    try:
        matches = match_count(con, term.fts())
        stats = _statistics(con, matches)
        if not matches or stats is None:
            return None
        groups = con.execute(_BUILD_SQL, {**stats, "term": term.fts()}).fetchall()
        current = generation(con)
    finally:
        con.execute("COMMIT")
    if not groups:
        return None
    if any(bad for *_, bad in groups):
        return Built(term, current, [], [], False)
    kept: list[tuple[int, int]] = []
    fronts: list[tuple[int, int]] = []
    taken: Counter[int] = Counter()
    for f, d, notes, _ in groups:  # by F, then length
        if taken[f] < KEEP:  # a length's notes all go in, or none: they tie
            ids = notes.split(",")
            kept += [(int(n), f) for n in ids]
            taken[f] += len(ids)
        elif not fronts or fronts[-1][0] != f:
            fronts.append((f, d))
    return Built(term, current, kept, fronts, True)


def store(con: sqlite3.Connection, built: Built) -> None:
    """Write BUILT in place of the term's shortlist (CON in a write transaction)."""
    text = built.term.fts()
    con.execute("INSERT INTO short_terms(term, token, prefix, size) VALUES (?, ?, ?, 0) ON CONFLICT(term) DO NOTHING",
                (text, built.term.tokens[0], int(built.term.prefix)))
    term_id = con.execute("SELECT id FROM short_terms WHERE term=?", (text,)).fetchone()[0]
    con.execute("DELETE FROM short_rows WHERE term=?", (term_id,))
    con.execute("DELETE FROM short_fronts WHERE term=?", (term_id,))
    con.executemany("INSERT INTO short_rows(term, id, f) VALUES (?, ?, ?)", [(term_id, n, f) for n, f in built.rows])
    con.executemany("INSERT INTO short_fronts(term, f, d) VALUES (?, ?, ?)", [(term_id, f, d) for f, d in built.fronts])
    size = len(built.rows) if built.exact else UNRANKABLE
    con.execute("UPDATE short_terms SET size=?, changes=0 WHERE id=?", (size, term_id))
    if not built.exact:
        log.info("notes: the scores of %s could not be reproduced; its searches rank every match", text)


def forget(con: sqlite3.Connection, notes: Sequence[int]) -> None:
    """Take NOTES (FTS rowids removed) out of every shortlist."""
    changes: Counter[int] = Counter()
    for note in notes:
        changes.update(r[0] for r in con.execute("SELECT term FROM short_rows WHERE id=?", (note,)))
    if changes:
        con.executemany("DELETE FROM short_rows WHERE id=?", [(n,) for n in notes])
        con.executemany("UPDATE short_terms SET changes = changes + ? WHERE id=?", [(n, t) for t, n in changes.items()])


class Terms:
    """The terms with a shortlist and their fronts, for adding notes: read once per batch."""

    def __init__(self, con: sqlite3.Connection) -> None:
        self.exact: dict[str, int] = {}
        self.prefixes: dict[str, int] = {}
        for term_id, token, prefix in con.execute(
                f"SELECT id, token, prefix FROM short_terms WHERE size <> {UNRANKABLE}"):
            (self.prefixes if prefix else self.exact)[token] = term_id
        self.lengths = sorted({len(p) for p in self.prefixes})
        self.fronts: dict[tuple[int, int], int] = {}
        if not self.empty:
            self.fronts = {(t, f): d for t, f, d in con.execute("SELECT term, f, d FROM short_fronts")}

    @property
    def empty(self) -> bool:
        return not self.exact and not self.prefixes

    def hits(self, columns: Sequence[Sequence[str]]) -> dict[int, int]:
        """{term id: F} of a note whose columns (name, tags, content) hold the tokens COLUMNS."""
        out: dict[int, int] = {}
        for weight, tokens in zip(_WEIGHTS, columns):
            for token, n in Counter(tokens).items():
                term_id = self.exact.get(token)
                if term_id is not None:
                    out[term_id] = out.get(term_id, 0) + weight * n
                for length in self.lengths:
                    if len(token) < length:
                        break
                    term_id = self.prefixes.get(token[:length])
                    if term_id is not None:
                        out[term_id] = out.get(term_id, 0) + weight * n
        return out


def note_added(con: sqlite3.Connection, terms: Terms, notes: Iterable[tuple[int, Sequence[Sequence[str]]]]) -> None:
    """Add NOTES, (FTS rowid, tokens of its columns), to the shortlist of every term they hold,
    unless they are no shorter than the front of their F (then they may stay out)."""
    if terms.empty:
        return
    rows: list[tuple[int, int, int]] = []
    changes: Counter[int] = Counter()
    for note, columns in notes:
        length = sum(map(len, columns))
        for term_id, f in terms.hits(columns).items():
            front = terms.fronts.get((term_id, f))
            if front is None or length < front:
                rows.append((term_id, note, f))
                changes[term_id] += 1
    con.executemany("INSERT OR REPLACE INTO short_rows(term, id, f) VALUES (?, ?, ?)", rows)
    con.executemany("UPDATE short_terms SET changes = changes + ? WHERE id=?", [(n, t) for t, n in changes.items()])


def worn(con: sqlite3.Connection) -> list[fulltext.Phrase]:
    """The terms whose shortlists changed by REBUILD_AT of their size: to build again."""
    return [_term(r[0], bool(r[1])) for r in con.execute(
        "SELECT token, prefix FROM short_terms WHERE size >= 0 AND changes > ? * max(size, 1)", (REBUILD_AT,))]


def broad_terms(con: sqlite3.Connection) -> list[fulltext.Phrase]:
    """The words in at least BROAD notes, and the prefixes of PREFIX_LENGTHS characters that
    are, without a shortlist yet."""
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_words USING fts5vocab(main, fts, row)")
    words = con.execute("SELECT term, doc FROM temp.fts_words").fetchall()
    have = {r[0] for r in con.execute("SELECT term FROM short_terms")}
    out = [_term(w, False) for w, docs in words if docs >= BROAD]
    bounds: Counter[str] = Counter()  # each prefix's notes, at most: the sum over its words
    for word, docs in words:
        for length in PREFIX_LENGTHS:
            if len(word) >= length:
                bounds[word[:length]] += docs
    for prefix, bound in bounds.items():
        if bound >= BROAD:
            term = _term(prefix, True)
            if term.fts() not in have and match_count(con, term.fts()) >= BROAD:
                out.append(term)
    return [t for t in out if t.fts() not in have]
