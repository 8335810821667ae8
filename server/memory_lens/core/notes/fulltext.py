"""Full-text search of notes: tokens, queries, BM25 ranking and snippets.

Tokens are made here, in Python, for both the SQLite FTS5 index and the plain scan used where
FTS5 is missing, so that both see the same words and rank them the same way:

- Unicode NFKC, case-folded, Latin diacritics removed (`café` matches `cafe`);
- a token is a run of letters, digits and combining marks (`_` and punctuation separate words);
- Chinese and Japanese characters are one token each, so a word written without spaces is found
  as a phrase of its characters.

FTS5 gets the tokens joined by spaces (its `unicode61` tokenizer then splits them back exactly).

Query syntax: words (all must match), `"a phrase"`, `prefix*` (also `"a phra"*`), and `OR`
between groups of words: `deploy staging OR "release train"`. A word with punctuation inside
(`api-key`) is the phrase of its parts.

BM25 is FTS5's own: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6,
per-column weights (name 4, tags 2, content 1); `bm25()` returns the negated sum, lower is
better. `bm25_score` reproduces it for the plain scan.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from memory_lens.core.notes.unicode_marks import mark_ranges

COLUMNS = ("name", "tags", "content")
WEIGHTS = (4.0, 2.0, 1.0)
K1, B = 1.2, 0.75
SNIPPET_CHARS = 160
PREFIX_INDEX_LENGTHS = (2, 3)  # prefix lengths FTS5 keeps an index of (its `prefix` option)

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")
_DIACRITICS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_CJK = ("\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
        "\U00020000-\U0003134f")
_HAS_CJK = re.compile(f"[{_CJK}]")
_CJK_SPLIT = re.compile(f"[{_CJK}]|[^{_CJK}]+")
_PRIVATE_USE = "\ue000-\uf8ff\U000f0000-\U000ffffd\U00100000-\U0010fffd"


@lru_cache(maxsize=1)
def _token_pattern() -> re.Pattern[str]:
    """Runs of letters, digits (Python's `[^\\W_]`), combining marks and private-use characters.
    Built on the first non-ASCII text, with the marks of this Python's Unicode (`unicode_marks`)."""
    marks = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in mark_ranges())
    return re.compile(f"(?:[^\\W_]|[{marks}{_PRIVATE_USE}])+")


def tokenize(text: str) -> list[str]:
    """The search tokens of TEXT (see the module docstring)."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    folded = unicodedata.normalize("NFKC", text).casefold()
    folded = unicodedata.normalize("NFC", _DIACRITICS.sub("", unicodedata.normalize("NFD", folded)))
    out: list[str] = []
    for token in _token_pattern().findall(folded):
        if _HAS_CJK.search(token):
            out.extend(_CJK_SPLIT.findall(token))
        else:
            out.append(token)
    return out


def index_text(text: str) -> str:
    """TEXT as FTS5 stores it: its tokens joined by spaces."""
    return " ".join(tokenize(text))


# Queries -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Phrase:
    """Consecutive tokens; with `prefix`, the last one only has to start the word."""

    tokens: tuple[str, ...]
    prefix: bool = False

    def fts(self) -> str:
        return '"' + " ".join(self.tokens) + '"' + (" *" if self.prefix else "")


@dataclass(frozen=True)
class Query:
    """Groups of phrases: a note matches when every phrase of at least one group occurs in it."""

    groups: tuple[tuple[Phrase, ...], ...]

    @property
    def empty(self) -> bool:
        return not self.groups

    @property
    def phrases(self) -> list[Phrase]:
        """Every phrase, in the order it appears in the query (FTS5's phrase numbering)."""
        return [p for group in self.groups for p in group]

    def fts(self) -> str:
        """The FTS5 MATCH expression."""
        return " OR ".join("(" + " AND ".join(p.fts() for p in group) + ")" for group in self.groups)


_QUERY_ITEM = re.compile(r'"([^"]*)"?(\*?)|(\S+)')


def parse_query(text: str) -> Query:
    """TEXT as a Query (see the module docstring). Words without any letter or digit are dropped."""
    groups: list[tuple[Phrase, ...]] = []
    current: list[Phrase] = []
    for match in _QUERY_ITEM.finditer(text):
        quoted, star, word = match.groups()
        if word == "OR":
            if current:
                groups.append(tuple(current))
            current = []
            continue
        if word is not None:
            star = "*" if word.endswith("*") else ""
            quoted = word.rstrip("*")
        tokens = tuple(tokenize(quoted or ""))
        if tokens:
            current.append(Phrase(tokens, bool(star)))
    if current:
        groups.append(tuple(current))
    return Query(tuple(groups))


# The plain scan's matching and ranking -----------------------------------------------------


def occurrences(phrase: Phrase, tokens: Sequence[str], text: str | None = None) -> int:
    """How many times PHRASE starts in TOKENS (TEXT: the same tokens joined by spaces, for a
    quick rejection of the many documents that lack its first word)."""
    n = len(phrase.tokens)
    if n == 0 or len(tokens) < n:
        return 0
    first = phrase.tokens[0]
    if text is not None:
        if " " + first not in " " + text:
            return 0
    *head, last = phrase.tokens
    count = 0
    for i in range(len(tokens) - n + 1):
        if head and list(tokens[i:i + n - 1]) != head:
            continue
        word = tokens[i + n - 1]
        if word == last or (phrase.prefix and word.startswith(last)):
            count += 1
    return count


def raw_counts(query: Query, columns: Sequence[Sequence[str]],
               texts: Sequence[str] | None = None) -> list[list[int]]:
    """Per phrase of QUERY, its occurrences in each column."""
    return [[occurrences(p, col, texts[i] if texts else None) for i, col in enumerate(columns)]
            for p in query.phrases]


def phrase_counts(query: Query, raw: list[list[int]]) -> list[list[int]] | None:
    """RAW counts as FTS5 reports instances: only the phrases of groups that match count; None
    when no group matches (the document is not a match)."""
    counts = [list(c) for c in raw]
    matched = False
    i = 0
    for group in query.groups:
        group_counts = counts[i:i + len(group)]
        if all(any(c) for c in group_counts):
            matched = True
        else:
            for c in group_counts:
                c[:] = [0] * len(c)
        i += len(group)
    return counts if matched else None


def idf(n_rows: int, n_hits: int) -> float:
    value = math.log((n_rows - n_hits + 0.5) / (n_hits + 0.5))
    return value if value > 0.0 else 1e-6


def bm25_score(counts: list[list[int]], idfs: Sequence[float], doc_tokens: int, avgdl: float) -> float:
    """FTS5's bm25() for one document, with the column weights of WEIGHTS."""
    score = 0.0
    for i, per_column in enumerate(counts):
        freq = 0.0
        for column, n in enumerate(per_column):
            for _ in range(n):
                freq += WEIGHTS[column]
        score += phrase_weight(freq, idfs[i], doc_tokens, avgdl)
    return -1.0 * score


def phrase_weight(freq: float, idf: float, doc_tokens: int, avgdl: float) -> float:
    """One phrase's part of bm25() for a document of DOC_TOKENS tokens where its hits weigh FREQ
    (the operations in the order of FTS5's fts5_aux.c, so the same double)."""
    return idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * doc_tokens / avgdl)))


# Snippets ----------------------------------------------------------------------------------


def snippet(content: str, query: Query | None = None, width: int = SNIPPET_CHARS) -> str:
    """A one-line excerpt of CONTENT: around the first word of QUERY found in it, else its start."""
    flat = " ".join(content.split())
    if len(flat) <= width:
        return flat
    start = 0
    if query is not None and not query.empty:
        lowered = flat.casefold()
        hits = [lowered.find(p.tokens[0]) for p in query.phrases]
        hits = [h for h in hits if h >= 0]
        if hits:
            start = max(0, min(hits) - width // 4)
            if start:
                space = flat.rfind(" ", 0, start)
                start = space + 1 if space >= 0 and start - space < 20 else start
    start = min(start, max(0, len(flat) - width))
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
