"""Property tests of the core's parse, add and remove (hypothesis; part of the default run).

Memory files are built from the lines that matter to the outline (entries, continuation and
indented lines, headings, the section header, fences, breaks, blank lines) with either line
ending, and entry texts from characters that matter to cleaning and parsing. The properties:
parsing never raises and `entry_keys` agrees with `parse`; an added entry reads back as exactly
one entry that `find_entry` finds; nothing outside the inserted text changes and every entry
already there stays the same; add then remove gives back the original bytes when the section
was already there with an entry in it.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memory_lens.core.edit import (
    SECTION_HEADER,
    EntryTextError,
    find_entry,
    find_section_header,
    plan_add,
    plan_remove,
)
from memory_lens.core.markdown import clean_entry_text, entry_keys, normalize, parse

EXAMPLES = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LINES = [
    "- use pnpm", "- Use PNPM.", "* star entry", "+ plus entry", "-no space", "- ", "-", "  continued",
    "    indented code", "\tтаб", "", "   ", "# Title", "## Other", "### Deep", SECTION_HEADER,
    "   " + SECTION_HEADER, "```", "```sh", "~~~", "  ```", "- ```", "---", "***", "- - -", "text",
    "Setext", "===", "café ☃", "a\u2028b", "x\x0by", "tab\there",
]

files = st.builds(
    lambda lines, eol, last: eol.join(lines) + (eol if last and lines else ""),
    st.lists(st.sampled_from(LINES), max_size=14),
    st.sampled_from(["\n", "\n", "\r\n"]),
    st.booleans(),
)
# A section that is there with an entry of its own: removing the last entry of a section that
# holds nothing else takes its header too (what `add` wrote with it).
with_section = st.builds(
    lambda before, after, eol: eol.join([*before, SECTION_HEADER, "- kept entry", *after]) + eol,
    st.lists(st.sampled_from(LINES), max_size=6),
    st.lists(st.sampled_from(LINES), max_size=6),
    st.sampled_from(["\n", "\r\n"]),
)
entry_texts = st.text(alphabet="ab -#*+`~\n\t.\u2028\x0c\u00e9", min_size=1, max_size=24)


def planned(content: str, text: str):
    """plan_add, or None when the text is refused (empty, an unclosed fence of its own, a NUL)
    or the file has no place where it stays one entry (both say so in one line)."""
    try:
        return plan_add(content, text)
    except EntryTextError as err:
        assert "\n" not in str(err)
        return None


@EXAMPLES
@given(st.text(max_size=200))
def test_parse_never_raises_on_any_text(text: str) -> None:
    outline = parse(text)
    assert "".join(outline.lines) == text
    keys, lines, ends = entry_keys(text)
    assert keys == [normalize(e.text) for e in outline.entries]
    assert lines == [e.line for e in outline.entries] and ends == [e.end_line for e in outline.entries]


@EXAMPLES
@given(files)
def test_parse_keeps_every_byte_and_finds_entries_in_order(content: str) -> None:
    outline = parse(content)
    assert "".join(outline.lines) == content
    starts = [e.line for e in outline.entries]
    assert starts == sorted(starts)
    assert all(e.line <= e.end_line < len(outline.lines) for e in outline.entries)


@EXAMPLES
@given(files, entry_texts)
def test_add_then_list_contains_the_entry_and_nothing_else_changes(content: str, text: str) -> None:
    plan = planned(content, text)
    assume(plan is not None)
    new = parse(plan.content)
    found = find_entry(new, text)
    assert found is not None and normalize(found.text) == normalize(clean_entry_text(text))
    if plan.already_present:
        assert plan.content == content
        return
    entry = new.entry_at(plan.entry_line)
    assert entry is not None and entry.line == plan.entry_line
    assert entry.end_line - entry.line == plan.text.count("\n") and normalize(entry.text) == normalize(plan.text)
    assert find_section_header(new) is not None
    # Only the inserted text is new: the bytes before and after it are the original ones.
    ins = plan.insertion
    assert plan.content == content[:ins.offset] + ins.text + content[ins.offset:]
    # Every entry that was there is still there, the same.
    before = [e.text for e in parse(content).entries]
    after = [e.text for e in new.entries if e.line != plan.entry_line]
    assert after == before


@EXAMPLES
@given(with_section, entry_texts)
def test_add_then_remove_restores_the_original_bytes(content: str, text: str) -> None:
    # The section is there (not hidden in an unclosed fence) with an entry: removing the last
    # entry of an empty section takes its heading too, by design (`edit._section_left_bare`).
    outline = parse(content)
    header = find_section_header(outline)
    assume(header is not None and outline.entries_between(header, outline.section_end(header)))
    plan = planned(content, text)
    assume(plan is not None and not plan.already_present)
    entry = parse(plan.content).entry_at(plan.entry_line)
    assert entry is not None
    assert plan_remove(plan.content, entry).content == content


# What `show` streams for a file over the size limit ------------------------------------------------

edge_texts = st.text(alphabet=" \t\n\r\u3000\u2028\u00a0\ufeffab\u00e9\u2603\U0001f600\x85", max_size=40)


edge_bytes = st.one_of(edge_texts.map(lambda t: t.encode("utf-8")),
                       st.lists(st.sampled_from([b" ", b"\n", b"\xe3\x80\x80", b"\xff", b"\xc3", b"a", b"\xef\xbb\xbf",
                                                 b"\xe2\x80\xa8", b"\x80"]), max_size=12).map(b"".join))


@EXAMPLES
@given(edge_bytes, st.integers(min_value=1, max_value=7), st.integers(min_value=1, max_value=9))
def test_streamed_content_is_the_merge_content(tmp_path_factory, data: bytes, edge: int, chunk: int) -> None:
    """`show` streams a file over the limit exactly as the merge would have trimmed it (decoded as
    the agent decodes: a bad byte reads as U+FFFD), whatever the sizes of the pieces it reads
    (characters split between reads included)."""
    text = data.decode("utf-8", "replace")
    import io

    from memory_lens.core import large_files
    from memory_lens.core.merge import concatenate

    path = tmp_path_factory.mktemp("big") / "GEMINI.md"
    path.write_bytes(data)
    saved = large_files.EDGE, large_files.CHUNK
    large_files.EDGE, large_files.CHUNK = edge, chunk
    try:
        opened = large_files._open_span(path)
        out = io.StringIO()
        if opened is not None:
            fd, start, end = opened
            try:
                large_files._copy(fd, start, end, out)
            finally:
                import os

                os.close(fd)
    finally:
        large_files.EDGE, large_files.CHUNK = saved
    assert out.getvalue() == concatenate([text])
