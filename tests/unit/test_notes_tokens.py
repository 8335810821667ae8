"""The search tokenizer's combining marks: the written table is what `unicodedata` says."""

from __future__ import annotations

import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from memory_lens.core.notes import fulltext, unicode_marks

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_of_this_pythons_unicode_is_what_unicodedata_says() -> None:
    version = unicodedata.unidata_version
    if version not in unicode_marks.TABLES:
        pytest.skip(f"no table for Unicode {version}: it is read from unicodedata")
    assert unicode_marks.versions()[version] == unicode_marks.read_ranges()
    assert unicode_marks.mark_ranges() == unicode_marks.read_ranges()


def test_every_version_is_sorted_disjoint_within_the_spans_and_written_as_its_changes() -> None:
    assert list(unicode_marks.TABLES) == sorted(unicode_marks.TABLES, key=lambda v: tuple(map(int, v.split("."))))
    before: list[tuple[int, int]] = []
    for version, ranges in unicode_marks.versions().items():
        assert ranges, version
        assert all(a <= b for a, b in ranges), version
        assert all(b + 1 < c for (_, b), (c, _) in zip(ranges, ranges[1:])), version
        assert all(any(lo <= a and b < hi for lo, hi in unicode_marks.SPANS) for a, b in ranges), version
        # No change is written that does nothing: each drop was there, each addition was not.
        assert " ".join(unicode_marks.TABLES[version].split()) == unicode_marks.encode(before, ranges), version
        before = ranges


def test_an_unknown_unicode_version_is_read_from_unicodedata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unicode_marks, "TABLES", {})
    assert unicode_marks.mark_ranges() == unicode_marks.read_ranges()


def test_changes_are_applied_in_order() -> None:
    tables = {"1.0.0": "300-302 305", "2.0.0": "-300-302 300-303 310", "3.0.0": "-305"}
    saved = unicode_marks.TABLES
    try:
        unicode_marks.TABLES = tables
        assert unicode_marks.versions() == {"1.0.0": [(0x300, 0x302), (0x305, 0x305)],
                                            "2.0.0": [(0x300, 0x303), (0x305, 0x305), (0x310, 0x310)],
                                            "3.0.0": [(0x300, 0x303), (0x310, 0x310)]}
    finally:
        unicode_marks.TABLES = saved
    assert unicode_marks.encode([(0x300, 0x302), (0x305, 0x305)], [(0x300, 0x303), (0x305, 0x305)]) == "-300-302 300-303"


def test_marks_stay_inside_words() -> None:
    # Devanagari vowel signs (Mc, Mn), a Hebrew point, an enclosing mark: all inside one token.
    assert fulltext.tokenize("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]
    assert fulltext.tokenize("שָׁלוֹם") == ["שָׁלוֹם"]
    assert fulltext.tokenize("ж\u0488ж ж") == ["ж\u0488ж", "ж"]
    assert fulltext.tokenize("Café naïve") == ["cafe", "naive"]


def test_the_script_writes_the_table_it_reads(tmp_path: Path) -> None:
    """scripts/unicode_marks.py writes this Python's version's table, and the module still imports."""
    module = ROOT / "server" / "memory_lens" / "core" / "notes" / "unicode_marks.py"
    copy = tmp_path / "repo"
    (copy / "scripts").mkdir(parents=True)
    (copy / "scripts" / "unicode_marks.py").write_text((ROOT / "scripts" / "unicode_marks.py").read_text())
    target = copy / "server" / "memory_lens" / "core" / "notes"
    target.mkdir(parents=True)
    for package in (copy / "server" / "memory_lens", copy / "server" / "memory_lens" / "core", target):
        (package / "__init__.py").write_text("")
    text = module.read_text(encoding="utf-8")
    start = text.index("TABLES: dict[str, str] = {")  # emptied: the script writes this version's back
    text = text[:start] + "TABLES: dict[str, str] = {\n}\n" + text[text.index("\n}\n", start) + 3:]
    (target / "unicode_marks.py").write_text(text, encoding="utf-8")
    done = subprocess.run([sys.executable, "scripts/unicode_marks.py"], cwd=copy, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    check = subprocess.run([sys.executable, "-c", "import unicodedata; from memory_lens.core.notes import "
                            "unicode_marks as m; print(sorted(m.TABLES) == [unicodedata.unidata_version], "
                            "m.mark_ranges() == m.read_ranges())"],
                           cwd=copy / "server", capture_output=True, text=True)
    assert check.stdout.split() == ["True", "True"], check.stderr


@pytest.mark.parametrize("text, expression", [
    ("deploy prod", '("deploy" AND "prod")'),
    ("deploy AND prod", '("deploy" AND "prod")'),
    ("a OR b c", '("a" OR ("b" AND "c"))'),  # AND binds tighter than OR
    ("a b NOT c", '("a" AND ("b" NOT "c"))'),  # NOT tighter than AND
    ("a AND NOT b NOT c", '(("a" NOT "b") NOT "c")'),
    ("(a OR b) NOT c", '(("a" OR "b") NOT "c")'),
    ('"api-key" dep* "release tr"*', '(("api key" AND "dep" *) AND "release tr" *)'),
    ("a and or", '(("a" AND "and") AND "or")'),  # lower case: words
    ("- a !!", '"a"'),  # words without a letter or digit are left out
])
def test_queries_become_one_fts5_expression(text: str, expression: str) -> None:
    assert fulltext.parse_query(text).fts == expression


def test_phrases_after_not_are_not_snippet_terms() -> None:
    assert [p.tokens for p in fulltext.parse_query("a NOT (b OR c) d").terms] == [("a",), ("d",)]
    assert fulltext.parse_query("!! AND").empty
