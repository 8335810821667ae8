"""memory_lens.core.markdown: lines, normalisation, TEXT cleaning and the outline parser."""

from __future__ import annotations

import pytest

from memory_lens.core.markdown import (
    clean_entry_text,
    detect_eol,
    normalize,
    parse,
    split_lines,
    split_newlines,
    stretches,
    strip_eol,
)


def test_split_lines_keeps_endings() -> None:
    assert split_lines("a\nb\r\nc\rd") == ["a\n", "b\r\n", "c\r", "d"]
    assert split_lines("") == []
    assert split_lines("\n\n") == ["\n", "\n"]
    assert "".join(split_lines("x\r\n\ny")) == "x\r\n\ny"


def test_strip_eol() -> None:
    assert [strip_eol(s) for s in ("a\n", "b\r\n", "c\r", "d")] == ["a", "b", "c", "d"]


@pytest.mark.parametrize("text, eol", [("a\nb\r\n", "\n"), ("a\r\nb\n", "\r\n"), ("a\rb", "\r"),
                                       ("no ending", "\n"), ("", "\n")])
def test_detect_eol_uses_the_first_ending(text: str, eol: str) -> None:
    assert detect_eol(text) == eol


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Use pnpm", "use pnpm"),
        ("- Use pnpm", "use pnpm"),
        ("*\tUse pnpm", "use pnpm"),
        ("+ Use pnpm", "use pnpm"),
        ("  Use \t  pnpm\n  now  ", "use pnpm now"),
        ("Use pnpm.", "use pnpm"),
        ("Use pnpm!!!", "use pnpm"),
        ("Use pnpm;:,.", "use pnpm"),
        ("Use pnpm 。", "use pnpm"),
        ("Use pnpm！", "use pnpm"),
        ("Use pnpm；", "use pnpm"),
        ("Use pnpm：", "use pnpm"),
        ("Use pnpm，", "use pnpm"),
        ("Use pnpm?", "use pnpm?"),  # only .!;:, and their full-width forms
        ("ｕｓｅ　ｐｎｐｍ", "use pnpm"),  # NFKC
        ("ﬁle", "file"),  # NFKC ligature
        ("Straße", "strasse"),  # case folding, not just lowering
        ("ΣΊΣΥΦΟΣ", "σίσυφοσ"),
        ("e\u0301", "é"),  # NFKC composes
        ("-x", "-x"),  # not a marker without whitespace
        ("- - nested", "- nested"),  # only one marker is dropped
        ("", ""),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert normalize(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("plain", "plain"),
        ("  padded \n", "padded"),
        ("# Use pnpm", "Use pnpm"),
        ("#Use pnpm", "Use pnpm"),
        ("### Use pnpm", "Use pnpm"),
        ("- Use pnpm", "Use pnpm"),
        ("* Use pnpm", "Use pnpm"),
        ("+ Use pnpm", "Use pnpm"),
        ("-- Use pnpm", "Use pnpm"),
        ("*+- Use pnpm", "Use pnpm"),
        ("# - * + Use pnpm", "Use pnpm"),
        ("- # - ## Use pnpm", "Use pnpm"),
        ("-\tUse pnpm", "Use pnpm"),
        ("-\nUse pnpm", "Use pnpm"),
        ("-x", "-x"),
        ("--x", "--x"),
        ("*bold*", "*bold*"),
        ("a # b", "a # b"),
        ("first\r\nsecond", "first\nsecond"),  # line endings become \n
        ("first\rsecond", "first\nsecond"),
        ("first\n  indented", "first\n  indented"),
        # Empty once cleaned: a marker run ending the text is an empty list item.
        ("", ""), ("   ", ""), ("#", ""), ("# ", ""), ("- ", ""), ("-", ""), ("--", ""),
        ("---", ""), ("***", ""), ("+", ""), ("- -", ""), ("# - * +", ""), ("- #", ""),
    ],
)
def test_clean_entry_text(text: str, expected: str) -> None:
    assert clean_entry_text(text) == expected


# parse -----------------------------------------------------------------------------------------------


def entries(text: str) -> list[tuple[str, int, int, str]]:
    return [(e.text, e.line, e.end_line, e.marker) for e in parse(text).entries]


def test_entries_are_top_level_list_items() -> None:
    text = "- dash\n* star\n+ plus\n-\ttab\n-nospace\n  - indented\n 1. number\n1. ordered\n"
    assert entries(text) == [("dash", 0, 0, "-"), ("star", 1, 1, "*"), ("plus", 2, 2, "+"),
                             ("tab", 3, 3, "-")]


def test_entry_column_is_where_the_text_starts() -> None:
    parsed_entries = parse("-   wide\n*\tx\n").entries
    assert [(e.column, e.text) for e in parsed_entries] == [(4, "wide"), (2, "x")]


def test_continuation_lines_are_dedented_and_joined() -> None:
    text = "- first\n  second\n\n  third\n    deeper\n\nparagraph\n- next\n"
    assert entries(text) == [("first\nsecond\n\nthird\n  deeper", 0, 4, "-"), ("next", 7, 7, "-")]


def test_trailing_blank_lines_are_not_part_of_an_entry() -> None:
    assert entries("- a\n\n\n") == [("a", 0, 0, "-")]
    assert entries("- a\n\n\n## H\n") == [("a", 0, 0, "-")]


def test_unindented_line_ends_an_entry() -> None:
    assert entries("- a\nlazy\n- b\n") == [("a", 0, 0, "-"), ("b", 2, 2, "-")]


def test_trailing_whitespace_of_entry_lines_is_dropped() -> None:
    assert entries("- a  \t\n  b  \n") == [("a\nb", 0, 1, "-")]


def test_crlf_and_cr_lines() -> None:
    assert entries("- a\r\n  b\r\n- c\r") == [("a\nb", 0, 1, "-"), ("c", 2, 2, "-")]


@pytest.mark.parametrize(
    "text",
    [
        "```\n- fenced\n```\n",
        "~~~\n- fenced\n~~~\n",
        "```python\n- fenced\n```\n",
        "````\n- fenced\n```\n- still fenced\n````\n",
        "   ```\n- fenced\n   ```\n",
        "```\n- fenced, never closed\n",
        "~~~\n- fenced\n```\n- still\n~~~\n",
    ],
)
def test_fenced_items_are_not_entries(text: str) -> None:
    assert entries(text) == []


def test_inline_backticks_do_not_open_a_fence() -> None:
    assert entries("```not a fence```\n- entry\n") == [("entry", 1, 1, "-")]


def test_fence_inside_an_entry_belongs_to_it() -> None:
    text = "- example:\n  ```\n  - not an entry\n\n  ```\n- next\n"
    assert entries(text) == [("example:\n```\n- not an entry\n\n```", 0, 4, "-"), ("next", 5, 5, "-")]


@pytest.mark.parametrize("line", ["---", "***", "___", "* * *", "- - -", "-  -  -", "_____"])
def test_thematic_breaks_are_not_entries(line: str) -> None:
    outline = parse(f"- a\n{line}\n- b\n")
    assert [e.text for e in outline.entries] == ["a", "b"]
    assert outline.breaks == [1]


def test_indented_break_after_an_entry_is_a_continuation() -> None:
    assert entries("- a\n   ---\n") == [("a\n---", 0, 1, "-")]
    assert parse("text\n\n   ---\n").breaks == [2]


def test_headings() -> None:
    text = ("# One\n## Two ##\n### Three\n#NoSpace\n####### seven\n   ## Indented\n"
            "Setext\n===\n```\n## fenced\n```\nPara\n---\n")
    outline = parse(text)
    assert [(h.level, h.title, h.line) for h in outline.headings] == [
        (1, "One", 0), (2, "Two", 1), (3, "Three", 2), (2, "Indented", 5), (1, "Setext", 6)]
    assert outline.breaks == [12]  # `---` under a paragraph is taken as a break


def test_section_end() -> None:
    outline = parse("## A\n- a\n### sub\n- s\n## B\n- b\n---\n- c\n")
    assert outline.section_end(0) == 4
    assert outline.section_end(4) == 6
    assert outline.section_end(2, max_level=3) == 4
    assert parse("## A\n- a\n").section_end(0) == 2


def test_entries_between_and_entry_at() -> None:
    outline = parse("## A\n- a\n  more\n## B\n- b\n")
    assert [e.text for e in outline.entries_between(0, 3)] == ["a\nmore"]
    assert outline.entry_at(2).text == "a\nmore"
    assert outline.entry_at(0) is None
    assert outline.entry_at(4).text == "b"


def test_entry_normalized() -> None:
    (entry,) = parse("-  Use\n   PNPM.\n").entries
    assert entry.normalized == "use pnpm"


def test_stretches_cover_a_text_in_whole_lines_and_split_newlines_is_str_split(monkeypatch: pytest.MonkeyPatch) -> None:
    import random

    from memory_lens.core import markdown

    monkeypatch.setattr(markdown, "STRETCH", 8)
    rng = random.Random(5)
    for _ in range(3000):
        text = "".join(rng.choice(["a", "\n", "bb", "\n\n", "c" * 20]) for _ in range(rng.randint(0, 30)))
        cuts = list(stretches(text))
        assert "".join(text[a:b] for a, b in cuts) == text
        assert all(text[b - 1] == "\n" for _, b in cuts[:-1])
        assert split_newlines(text) == (text.split("\n") if text else [])


def test_a_large_text_is_searched_for_stale_claims_and_secrets_a_stretch_at_a_time(tmp_path, monkeypatch) -> None:
    """One search or split of a whole 10 MB buffer held the interpreter lock for up to a second
    on the language server's worker thread, and no request was answered meanwhile
    (docs/reliability.md): each search goes over one stretch of lines at most, and the findings
    are those of the whole text."""
    from memory_lens.core import secrets, stale
    from memory_lens.core.markdown import STRETCH

    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    line = "- the same entry, written again and again\n"
    text = line * (3 * STRETCH // len(line)) + "- see `docs/gone.md` first\n" + line * 10
    spans: list[int] = []

    class Recording:
        def __init__(self, pattern):
            self.pattern = pattern

        def search(self, text, pos=0, endpos=None):
            spans.append((len(text) if endpos is None else endpos) - pos)
            return self.pattern.search(text, pos, len(text) if endpos is None else endpos)

    monkeypatch.setattr(stale, "_LOOK", Recording(stale._LOOK))
    found = stale.stale_findings(tmp_path / "GEMINI.md", text)
    assert [(n, message[:12]) for n, _, message in found] == [(text.count("\n", 0, text.index("`docs")) + 1, "stale: `docs")]
    assert spans and max(spans) <= STRETCH + len(line)
    key = "AKIA" + "Z7QWERTYUIOPASDF"
    assert [s.line for s in secrets.find_secrets(text + f"- aws key {key}\n")] == [text.count("\n") + 1]
