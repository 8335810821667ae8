"""Full-text search of notes: tokens, the query language and snippets.

Tokens are made here, in Python, and FTS5 gets them joined by spaces (its `unicode61` tokenizer
then splits them back exactly):

- Unicode NFKC, case-folded, Latin diacritics removed (`café` matches `cafe`);
- a token is a run of letters, digits and combining marks (`_` and punctuation separate words);
- Chinese and Japanese characters are one token each, so a word written without spaces is found
  as a phrase of its characters.

Queries (`parse_query`, docs/notes.md#search): words, `"a phrase"`, `prefix*` (also
`"a phra"*`), `AND` (or nothing: words next to each other must all match), `OR`, `a NOT b`
(FTS5's binary NOT) and parentheses; `AND`, `OR` and `NOT` are operators only in capitals.
NOT binds tightest, then AND, then OR, as in FTS5. A word with punctuation inside (`api-key`) is
the phrase of its parts. What FTS5 cannot answer (a query that starts with NOT, an operator
without a word on each side, unbalanced parentheses) is refused with a one-line error.

Ranking is FTS5's `bm25()` with per-column weights (name 4, tags 2, content 1).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from memory_lens.core.notes.model import NoteInvalidError
from memory_lens.core.notes.unicode_marks import mark_ranges

WEIGHTS = (4.0, 2.0, 1.0)  # bm25() weights of the name, the tags and the content
SNIPPET_CHARS = 160

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
    """A parsed query: FTS5's MATCH expression, and the phrases a match holds (not those after
    a NOT), for its snippet. Empty: the text had no word to search for."""

    fts: str
    terms: tuple[Phrase, ...]

    @property
    def empty(self) -> bool:
        return not self.fts


_QUERY_ITEM = re.compile(r'\s*(?:([()])|"([^"]*)"?(\*?)|([^\s()"]+))')
_OPERATORS = ("AND", "OR", "NOT")
_EXAMPLES = {"AND": "deploy AND staging", "OR": "deploy OR release", "NOT": "deploy NOT staging"}


def parse_query(text: str) -> Query:
    """TEXT as a Query (module docstring); NoteInvalidError, one line, for what FTS5 cannot
    answer. Words without any letter or digit are left out."""
    items: list[str | Phrase] = []
    for match in _QUERY_ITEM.finditer(text):
        paren, quoted, star, word = match.groups()
        if paren or word in _OPERATORS:
            items.append(paren or word)
            continue
        if word is not None:
            star = "*" if word.endswith("*") else ""
            quoted = word.rstrip("*")
        tokens = tuple(tokenize(quoted or ""))
        if tokens:
            items.append(Phrase(tokens, bool(star)))
    if not any(isinstance(i, Phrase) for i in items):
        return Query("", ())
    parser = _Parser(items)
    expression = parser.any_of(False)
    if parser.peek() is not None:
        raise NoteInvalidError("the search has a ')' without its '(': balance the parentheses")
    return Query(expression, tuple(parser.terms))


class _Parser:
    """Recursive descent over the items of a query, writing FTS5's expression with every
    operation in parentheses (so FTS5 reads it exactly as parsed here)."""

    def __init__(self, items: list[str | Phrase]) -> None:
        self.items = items
        self.at = 0
        self.terms: list[Phrase] = []

    def peek(self) -> str | Phrase | None:
        return self.items[self.at] if self.at < len(self.items) else None

    def take(self) -> str | Phrase | None:
        item = self.peek()
        self.at += 1
        return item

    def any_of(self, negated: bool) -> str:
        """OR: the loosest."""
        out = self.all_of(negated)
        while self.peek() == "OR":
            self.take()
            out = f"({out} OR {self.all_of(negated, after='OR')})"
        return out

    def all_of(self, negated: bool, after: str | None = None) -> str:
        """AND, written or not; `a AND NOT b` is `a NOT b`."""
        out = self.but_not(negated, after)
        while self.peek() not in (None, "OR", ")"):
            item = self.take()
            if item == "NOT" or (item == "AND" and self.peek() == "NOT" and self.take()):
                out = f"({out} NOT {self.operand(True, 'NOT')})"
            elif item == "AND":
                out = f"({out} AND {self.but_not(negated, 'AND')})"
            else:
                self.at -= 1  # a word or '(' next to the previous one: AND
                out = f"({out} AND {self.but_not(negated)})"
        return out

    def but_not(self, negated: bool, after: str | None = None) -> str:
        """Binary NOT: the tightest."""
        out = self.operand(negated, after)
        while self.peek() == "NOT":
            self.take()
            out = f"({out} NOT {self.operand(True, 'NOT')})"
        return out

    def operand(self, negated: bool, after: str | None = None) -> str:
        item = self.take()
        if isinstance(item, Phrase):
            if not negated:
                self.terms.append(item)
            return item.fts()
        if item == "(":
            if self.peek() == ")":
                raise NoteInvalidError("the search has empty parentheses '()': put words inside or remove them")
            inner = self.any_of(negated)
            if self.take() != ")":
                raise NoteInvalidError("the search has a '(' without its ')': balance the parentheses")
            return inner
        if item == "NOT":
            raise NoteInvalidError("NOT needs a word before it, as in 'deploy NOT staging' (a search "
                                   "cannot ask for every note but some)")
        operator = item if item in _OPERATORS else after
        if operator is not None:
            raise NoteInvalidError(f"{operator} needs a word on each side, as in '{_EXAMPLES[operator]}'")
        if item is None:
            raise NoteInvalidError("the search has a '(' without its ')': balance the parentheses")
        raise NoteInvalidError("the search has a ')' without its '(': balance the parentheses")


# Snippets ----------------------------------------------------------------------------------


def snippet(content: str, query: Query | None = None, width: int = SNIPPET_CHARS) -> str:
    """A one-line excerpt of CONTENT: around the first word of QUERY found in it, else its start."""
    flat = " ".join(content.split())
    if len(flat) <= width:
        return flat
    start = 0
    if query is not None and not query.empty:
        lowered = flat.casefold()
        hits = [lowered.find(p.tokens[0]) for p in query.terms]
        hits = [h for h in hits if h >= 0]
        if hits:
            start = max(0, min(hits) - width // 4)
            if start:
                space = flat.rfind(" ", 0, start)
                start = space + 1 if space >= 0 and start - space < 20 else start
    start = min(start, max(0, len(flat) - width))
    piece = flat[start:start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")
