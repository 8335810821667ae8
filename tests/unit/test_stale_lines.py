"""`stale` looks only at the lines `_LOOK` matches in; it finds them with plain string searches in
ASCII text (core/stale.py: `_look_lines`). They must be exactly the lines a search of each line finds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_lens.core import stale
from memory_lens.core.markdown import STRETCH

PIECES = ["npm", "pnpm", "Yarn", "BUN", "tox", "Nox", "bundle", "_tox", "xnpm", "`", "```", "~~~", "/", "~",
          " ", "\n", "-", "a", "n", "p", "y", "b", "t", "é", "İ", "\u212a", "ſ"]


def by_each_line(text: str) -> list[tuple[int, int]]:
    found, start = [], 0
    for line in text.split("\n"):
        end = start + len(line)
        if stale._LOOK.search(text, start, end) is not None:
            found.append((start, end))
        start = end + 1
    return found


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=80))
def test_the_lines_looked_at_are_those_the_pattern_matches_in(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert list(stale._look_lines(text)) == by_each_line(text)


def test_over_several_stretches_ascii_or_not() -> None:
    line = "- the same entry, written again and again\n"
    text = (line * (STRETCH // len(line)) + "- run `npm run x` or Yarn\n" + line * (STRETCH // len(line))
            + "- é, then pnpm and ~/x\n" + line * 3 + "tox")
    assert list(stale._look_lines(text)) == by_each_line(text)
    assert len(by_each_line(text)) == 3
