"""Pages and cursors: every list a front end returns in pieces (notes, memory entries) uses them.

A cursor is opaque to callers: the offset of the next page and a fingerprint of the question
(what was listed, with which filters), so a cursor handed to another question is refused
instead of silently paging through something else.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any


class CursorError(ValueError):
    """A cursor that is not one this question handed out."""


def fingerprint(*question: Any) -> str:
    raw = json.dumps(question, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def encode_cursor(offset: int, owner: str) -> str:
    raw = json.dumps({"o": offset, "f": owner}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, owner: str) -> int:
    """The offset CURSOR stands for (0 without one); CursorError when it is not OWNER's."""
    if not cursor:
        return 0
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded.encode()))
        offset, found = int(data["o"]), data["f"]
    except (ValueError, KeyError, TypeError):
        raise CursorError("invalid cursor: pass the next_cursor of the previous page, or none to start") from None
    if found != owner or offset < 0:
        raise CursorError("this cursor belongs to another listing or search: start again without a cursor")
    return offset


def next_cursor(offset: int, count: int, total: int, owner: str) -> str | None:
    """The cursor after a page of COUNT items starting at OFFSET, or None after the last."""
    end = offset + count
    return encode_cursor(end, owner) if count and end < total else None
