"""Queries over the notes index: pages of notes in listing order, or best first by BM25.

`NotesIndex` keeps the index in step with the files and calls these on its connection, under its
lock:

- `list_ids` without a query walks one scope after the other along the `(scope, name_key, name)`
  index, so a page costs what it holds; with a query, its matches in listing order;
- `search_ids` ranks with FTS5's `bm25()` (weights in `fulltext.WEIGHTS`), `ORDER BY bm25(...)
  LIMIT`, ties in listing order. The score given back is `-bm25()`: higher is better.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Sequence

from memory_lens.core.discovery import Scope
from memory_lens.core.notes import fulltext
from memory_lens.core.notes.model import tag_key

_ORDER = "CASE f.scope WHEN 'project' THEN 0 ELSE 1 END, f.name_key, f.name"
_MATCHES = "FROM fts JOIN files f ON f.id = fts.rowid WHERE fts MATCH ?"
# FTS5's ranking function with the column weights. Written out rather than through the table's
# `rank` column: `ORDER BY fts.rank` in this join measured 8.0 ms p50 against 1.8 ms over the
# benchmark's searches of 10,000 notes (the same pages).
_BM25 = f"bm25(fts, {', '.join(map(str, fulltext.WEIGHTS))})"


def _filters(scopes: Sequence[Scope], tags: Sequence[str]) -> tuple[str, list[Any]]:
    """The WHERE conditions (on `files f`) of SCOPES and TAGS, for a join driven by the FTS
    matches: a plain `f.scope=?` lets SQLite walk every file of the scope through an index and
    look each one up in the FTS table instead (65 ms for 10,000 notes in one scope, against
    0.4 ms), so the scope test is written `+f.scope`, which no index serves."""
    sql = " AND f.error IS NULL AND f.shadow=0"
    args: list[Any] = []
    if len(scopes) == 1:
        sql += " AND +f.scope=?"
        args.append(scopes[0].value)
    for tag in tags:  # read from the row the join fetches anyway, not looked up in `tags` per match
        sql += " AND instr(f.tag_keys, ?)"
        args.append(f"\n{tag_key(tag)}\n")
    return sql, args


def _count(con: sqlite3.Connection, text: str, where: str, args: list[Any]) -> int:
    return con.execute(f"SELECT count(*) {_MATCHES}{where}", [text, *args]).fetchone()[0]


def list_ids(con: sqlite3.Connection, scopes: Sequence[Scope], tags: Sequence[str], offset: int, limit: int,
             query: fulltext.Query | None = None) -> tuple[list[int], int]:
    """A page of note ids in listing order (project first, then by name), and the total; with
    QUERY, only the notes it matches."""
    if query is None:
        return _list_in_order(con, scopes, tags, offset, limit)
    where, args = _filters(scopes, tags)
    ids = [r[0] for r in con.execute(f"SELECT f.id {_MATCHES}{where} ORDER BY {_ORDER} LIMIT ? OFFSET ?",
                                     [query.fts, *args, limit, offset])]
    return ids, _count(con, query.fts, where, args)


def search_ids(con: sqlite3.Connection, query: fulltext.Query, scopes: Sequence[Scope], tags: Sequence[str],
               offset: int, limit: int) -> tuple[list[tuple[int, float]], int]:
    """A page of (note id, score) best first, and the total number of matches. The score is
    `-bm25()`: higher is better."""
    where, args = _filters(scopes, tags)
    rows = con.execute(f"SELECT f.id, -{_BM25} {_MATCHES}{where} ORDER BY {_BM25}, {_ORDER} LIMIT ? OFFSET ?",
                       [query.fts, *args, limit, offset]).fetchall()
    return [(r[0], r[1]) for r in rows], _count(con, query.fts, where, args)


def _list_in_order(con: sqlite3.Connection, scopes: Sequence[Scope], tags: Sequence[str], offset: int,
                   limit: int) -> tuple[list[int], int]:
    """A page of every visible note of SCOPES having TAGS, in listing order: one scope after the
    other, each walked along its (scope, name_key, name) index, so a page costs what it holds,
    not a sort of every note."""
    ordered = sorted(scopes, key=lambda s: 0 if s is Scope.PROJECT else 1)
    has_tag = " AND f.id IN (SELECT id FROM tags WHERE tag=?)"
    tag_sql = has_tag * len(tags)
    tag_args = [tag_key(t) for t in tags]
    if tags:  # driven by the first tag's rows, not by every note of the scope
        counted = con.execute(
            "SELECT f.scope, count(*) FROM tags t CROSS JOIN files f ON f.id = t.id WHERE t.tag=? "
            f"AND f.error IS NULL AND f.shadow=0{has_tag * (len(tags) - 1)} GROUP BY f.scope",
            tag_args).fetchall()
    else:
        counted = con.execute("SELECT scope, count(*) FROM files WHERE error IS NULL AND shadow=0 "
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
        ids += [r[0] for r in con.execute(
            f"SELECT f.id FROM files f WHERE f.scope=? AND f.error IS NULL AND f.shadow=0{tag_sql} "
            "ORDER BY f.name_key, f.name LIMIT ? OFFSET ?", [scope.value, *tag_args, want, skip])]
        skip = 0
    return ids, sum(counts.get(s.value, 0) for s in ordered)
