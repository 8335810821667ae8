"""core/imports.py and core/node_paths.py: Gemini CLI's @path imports, unit by unit (the
differential suite in tests/fidelity compares the whole against the agent itself)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core import imports
from memory_lens.core.imports import (
    CYCLE, DEPTH, IMPORTED, LIMIT, MAX_IMPORT_MENTIONS, NOT_FOUND, OUTSIDE_ROOT, UNREADABLE, URL, code_regions,
    expand_imports, find_mentions, import_problems,
)
from memory_lens.core.node_paths import decode_uri_component, js_resolve, js_trim


def test_js_trim_uses_javascripts_whitespace_not_pythons() -> None:
    assert js_trim("\ufeff\u00a0 x \u3000\u2028\u2029\v\f") == "x"
    assert js_trim("\x1c\x1d\x1e\x1f x \x85") == "\x1c\x1d\x1e\x1f x \x85"
    assert "\ufeffx".strip() != "x"  # what Python would have kept


def test_which_mentions_count() -> None:
    text = "a@b.md @./x.md\t@y.md,\n@/abs @1.md @_u.md @~/h.md @ \u00a0@n.md @@z.md\r@Z"
    assert [t for _s, _e, t in find_mentions(text)] == ["./x.md", "y.md,", "/abs", "Z"]
    assert find_mentions("\ufeff@a.md") == []  # after a BOM, '@' is not at a word boundary


def test_code_regions_are_backtick_runs_of_equal_length() -> None:
    text = "a `x` b ``y ` z`` c ```\nfence\n``` d `open"
    assert [text[s:e] for s, e in code_regions(text)] == ["`x`", "``y ` z``", "```\nfence\n```"]


def test_js_resolve_and_decode_uri_component() -> None:
    assert js_resolve("/a/b", "../c/./d/") == "/a/c/d"
    assert js_resolve("/a", "//x//y") == "/x/y"
    assert decode_uri_component("my%20notes%E2%82%AC.md") == "my notes\u20ac.md"
    for bad in ("%ZZ", "%E2%82", "%"):
        with pytest.raises(ValueError):
            decode_uri_component(bad)


def _tree(nodes) -> list:
    return [(n.line, n.target, n.status, [_tree(n.children)] if n.children else []) for n in nodes]


def test_expansion_markers_and_tree(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (root / "a.md").write_text("A\n@./b.md\n")
    (root / "b.md").write_text("B @./a.md")
    (root / "dir").mkdir()
    (tmp_path / "out.md").write_text("outside")
    text = "top\n@./a.md `@./a.md`\n@missing.md\n@../out.md @https://x.org/a\n@./dir\n"
    expansion = expand_imports(text, root / "GEMINI.md")
    assert expansion.text == (
        "top\n<!-- Imported from: ./a.md -->\nA\n<!-- Imported from: ./b.md -->\n"
        "B <!-- File already processed: ./a.md -->\n<!-- End of import from: ./b.md -->\n"
        "\n<!-- End of import from: ./a.md --> `@./a.md`\n"
        f"<!-- Import failed: missing.md - ENOENT: no such file or directory, access '{root / 'missing.md'}' -->\n"
        "<!-- Import failed: ../out.md - Path traversal attempt --> "
        "<!-- Import failed: https://x.org/a - Path traversal attempt -->\n"
        "<!-- Import failed: ./dir - EISDIR: illegal operation on a directory, read -->\n")
    assert _tree(expansion.imports) == [
        (2, "./a.md", IMPORTED, [[(2, "./b.md", IMPORTED, [[(1, "./a.md", CYCLE, [])]])]]),
        (3, "missing.md", NOT_FOUND, []),
        (4, "../out.md", OUTSIDE_ROOT, []),
        (4, "https://x.org/a", URL, []),
        (5, "./dir", UNREADABLE, []),
    ]
    a = expansion.imports[0]
    assert (a.file, a.path, a.children[0].file) == (root / "GEMINI.md", root / "a.md", root / "a.md")
    assert expansion.imports[2].path == tmp_path / "out.md" and expansion.imports[3].path is None


def test_depth_five_is_inserted_raw_and_its_mentions_marked(tmp_path: Path) -> None:
    for i in range(1, 7):
        (tmp_path / f"l{i}.md").write_text(f"L{i} @./l{i + 1}.md")
    expansion = expand_imports("L0 @./l1.md", tmp_path / "GEMINI.md")
    assert expansion.text.count("<!-- Imported from:") == 5 and "L5 @./l6.md" in expansion.text
    node = expansion.imports[0]
    for _ in range(4):
        (node,) = node.children
    assert node.target == "./l5.md" and node.status == IMPORTED
    assert [(c.target, c.status) for c in node.children] == [("./l6.md", DEPTH)]


def test_an_import_of_a_fifo_is_refused_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    expansion = expand_imports("@./pipe.md", tmp_path / "GEMINI.md")  # would block if it were opened for reading
    assert expansion.imports[0].status == UNREADABLE
    assert expansion.text == f"<!-- Import failed: ./pipe.md - {tmp_path / 'pipe.md'} is not a regular file (a FIFO, socket or device) -->"


def test_symlinks_followed_for_containment(tmp_path: Path) -> None:
    root = tmp_path / "p"
    (root / ".git").mkdir(parents=True)
    (tmp_path / "secret.md").write_text("secret")
    (root / "real.md").write_text("real")
    (root / "leak.md").symlink_to("../secret.md")
    (root / "ok.md").symlink_to("real.md")
    (root / "loop.md").symlink_to("loop.md")
    expansion = expand_imports("@./leak.md @./ok.md @./loop.md", root / "GEMINI.md")
    assert [(n.target, n.status) for n in expansion.imports] == [
        ("./leak.md", OUTSIDE_ROOT), ("./ok.md", IMPORTED), ("./loop.md", OUTSIDE_ROOT)]
    assert "secret" not in expansion.text and "real" in expansion.text


def test_imported_files_are_decoded_like_the_agent(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"\xef\xbb\xbfcaf\xe9\x00\n")
    expansion = expand_imports("@bad.md", tmp_path / "GEMINI.md")
    assert expansion.text == "<!-- Imported from: bad.md -->\n\ufeffcaf\ufffd\x00\n\n<!-- End of import from: bad.md -->"


def test_text_without_mentions_is_returned_as_is(tmp_path: Path) -> None:
    text = "no imports here, not even me@example.com"
    expansion = expand_imports(text, tmp_path / "GEMINI.md")
    assert expansion.text is text and expansion.imports == ()


def _walk(nodes):
    for n in nodes:
        yield n
        yield from _walk(n.children)


def test_imports_that_multiply_stop_at_a_bound(tmp_path: Path) -> None:
    """A hostile tree: every level mentions the next one 100 times (10^8 imports for the agent).
    Memory Lens follows at most MAX_IMPORT_MENTIONS mentions for one memory file, then marks the rest."""
    for name, nxt in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")):
        (tmp_path / f"{name}.md").write_text(f"@./{nxt}.md\n" * 100)
    (tmp_path / "e.md").write_text("end")
    expansion = expand_imports("@./a.md", tmp_path / "GEMINI.md")
    statuses = [n.status for n in _walk(expansion.imports)]
    assert statuses.count(IMPORTED) == MAX_IMPORT_MENTIONS and statuses.count(LIMIT) == 1
    assert expansion.text.count(f"Memory Lens follows at most {MAX_IMPORT_MENTIONS} mentions") == 1
    (problem,) = [p for p in import_problems(expansion.imports) if p.culprit.status == LIMIT]
    assert problem.code == "import-depth" and "is not expanded" in problem.message


def test_every_mention_counts_against_the_bound_cycles_included(tmp_path: Path) -> None:
    """Issue 23 item 1: GEMINI.md -> a.md -> a.md ..., a thousand `@a.md` in each. A mention of a
    file already imported along the chain reads nothing, yet it counted for nothing before: 10^6
    cycle comments (40 MB) for one file. Now: MAX_IMPORT_MENTIONS mentions, one marker, the rest of
    the text as written."""
    (tmp_path / "a.md").write_text("@a.md\n" * 1000)
    top = "@a.md\n" * 1000
    expansion = expand_imports(top, tmp_path / "GEMINI.md")
    nodes = list(_walk(expansion.imports))
    assert len(nodes) == MAX_IMPORT_MENTIONS + 1 and [n.status for n in nodes].count(LIMIT) == 1
    assert expansion.text.count("<!-- Import failed: a.md - not imported, nor any mention after it") == 1
    assert len(expansion.text) < 20 * len(top) + 60 * MAX_IMPORT_MENTIONS
    assert expansion.text.endswith("@a.md\n" * 990)  # the top file's last mentions, as written


def test_mentions_in_code_count_too(tmp_path: Path) -> None:
    """A mention in code is left as it is, but it is still looked at: a file of a million of
    them imported again and again cost seconds. They count against the bound like the others."""
    (tmp_path / "b.md").write_text("B")
    text = "```\n" + "@b.md\n" * MAX_IMPORT_MENTIONS + "```\n@b.md\n"
    expansion = expand_imports(text, tmp_path / "GEMINI.md")
    assert [n.status for n in expansion.imports] == [LIMIT]
    assert "Imported from" not in expansion.text and expansion.text.endswith(f"{imports.limit_message()} -->\n")


def test_a_budget_bounds_a_whole_view(tmp_path: Path) -> None:
    """One budget passed to the expansions of several files: the second file's imports stop where
    the first left it, and get a marker of their own."""
    (tmp_path / "a.md").write_text("A")
    budget = imports.ImportBudget(mentions=3)
    first = expand_imports("@a.md @a.md", tmp_path / "GEMINI.md", budget=budget)
    second = expand_imports("@a.md @a.md @a.md", tmp_path / "sub" / "GEMINI.md", budget=budget)
    assert [n.status for n in first.imports] == [IMPORTED, IMPORTED]
    assert [n.status for n in second.imports] == [NOT_FOUND, LIMIT]
    assert second.text.endswith(" - " + imports.limit_message() + " --> @a.md")


def test_mentions_past_the_bound_in_flat_format_are_marked_once(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("@a.md @b.md\n" * 3000)
    (tmp_path / "b.md").write_text("B")
    expansion = expand_imports("@a.md", tmp_path / "GEMINI.md", import_format="flat")
    statuses = [n.status for n in _walk(expansion.imports)]
    assert statuses == [IMPORTED, LIMIT, IMPORTED]
    assert expansion.text.count("--- File:") == 3


def test_a_long_chain_in_flat_format_stops_at_its_depth_bound(tmp_path: Path) -> None:
    """Gemini's flat format has no depth limit: a chain of 1,500 files (12 KB) would nest the
    import tree past Python's recursion limit."""
    for i in range(1500):
        (tmp_path / f"f{i}.md").write_text(f"@f{i + 1}.md")
    expansion = expand_imports("@f0.md", tmp_path / "GEMINI.md", import_format="flat")
    nodes = list(_walk(expansion.imports))
    assert len(nodes) == imports.MAX_FLAT_DEPTH + 1 and nodes[-1].status == LIMIT
    assert expansion.text.count("--- File:") == imports.MAX_FLAT_DEPTH + 1


def test_an_import_over_the_byte_bound_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "MAX_IMPORTED_BYTES", 10)
    (tmp_path / "big.md").write_text("x" * 11)
    (tmp_path / "small.md").write_text("y" * 10)
    expansion = expand_imports("@./small.md @./big.md @./small.md", tmp_path / "GEMINI.md")
    assert [n.status for n in expansion.imports] == [IMPORTED, LIMIT]
    assert "and 10 bytes of imported text" in expansion.imports[1].message
    assert expansion.text.endswith(" --> @./small.md")
