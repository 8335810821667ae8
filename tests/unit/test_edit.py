"""memory_lens.core.edit: where `add` puts an entry, what it refuses, and what `remove` leaves."""

from __future__ import annotations

import pytest

from memory_lens.core.edit import EmptyEntryError, find_entry, format_entry, plan_add, plan_remove
from memory_lens.core.markdown import parse

H = "## Gemini Added Memories"

PLACEMENT = [
    pytest.param("", f"{H}\n- NEW\n", 1, id="empty-file"),
    pytest.param("# Rules\nUse tabs.\n", f"# Rules\nUse tabs.\n\n{H}\n- NEW\n", 4, id="no-header"),
    pytest.param("# Rules\nUse tabs.", f"# Rules\nUse tabs.\n\n{H}\n- NEW\n", 4, id="no-final-newline"),
    pytest.param("# Rules\n\n", f"# Rules\n\n{H}\n- NEW\n", 3, id="ends-with-blank-line"),
    pytest.param("\n", f"\n{H}\n- NEW\n", 2, id="only-a-newline"),
    pytest.param("x\n  ", f"x\n  \n{H}\n- NEW\n", 3, id="last-line-blank-without-newline"),
    pytest.param(f"{H}\n", f"{H}\n- NEW\n", 1, id="header-only"),
    pytest.param(f"{H}", f"{H}\n- NEW\n", 1, id="header-without-newline"),
    pytest.param(f"{H}\n- a\n- b\n", f"{H}\n- a\n- b\n- NEW\n", 3, id="after-last-entry"),
    pytest.param(f"{H}\n- a", f"{H}\n- a\n- NEW\n", 2, id="last-entry-without-newline"),
    pytest.param(f"{H}\n- a\n  b", f"{H}\n- a\n  b\n- NEW\n", 3, id="continuation-without-newline"),
    pytest.param(f"# T\n{H}\n- a\n\n## Other\n- o\n", f"# T\n{H}\n- a\n- NEW\n\n## Other\n- o\n", 3,
                 id="ends-at-level-2"),
    pytest.param(f"{H}\n- a\n# Top\n- t\n", f"{H}\n- a\n- NEW\n# Top\n- t\n", 2, id="ends-at-level-1"),
    pytest.param(f"{H}\n- a\nTitle\n===\n- t\n", f"{H}\n- a\n- NEW\nTitle\n===\n- t\n", 2,
                 id="ends-at-setext-heading"),
    pytest.param(f"{H}\n- a\n### Sub\n- s\n\n## Other\n", f"{H}\n- a\n### Sub\n- s\n- NEW\n\n## Other\n", 4,
                 id="level-3-stays-inside"),
    pytest.param(f"{H}\n- a\n---\n- z\n", f"{H}\n- a\n- NEW\n---\n- z\n", 2, id="ends-at-break"),
    pytest.param(f"{H}\n- a\n* * *\n- z\n", f"{H}\n- a\n- NEW\n* * *\n- z\n", 2, id="ends-at-spaced-break"),
    pytest.param(f"{H}\n- a\n___\n- z\n", f"{H}\n- a\n- NEW\n___\n- z\n", 2, id="ends-at-underscores"),
    pytest.param(f"{H}\n- a\n  more\n\n  still a\n\nPara.\n", f"{H}\n- a\n  more\n\n  still a\n- NEW\n\nPara.\n",
                 5, id="after-continuation-lines"),
    pytest.param(f"{H}\nIntro.\n\n## Other\n", f"{H}\n- NEW\nIntro.\n\n## Other\n", 1, id="right-under-header"),
    pytest.param(f"{H}\n\n## Other\n- o\n", f"{H}\n- NEW\n\n## Other\n- o\n", 1, id="empty-section"),
    pytest.param(f"{H}\n---\n- z\n", f"{H}\n- NEW\n---\n- z\n", 1, id="break-right-after-header"),
    pytest.param(f"- top\n\n{H}\n- a\n\n{H}\n- b\n", f"- top\n\n{H}\n- a\n- NEW\n\n{H}\n- b\n", 4,
                 id="first-header-wins"),
    pytest.param(f"```\n{H}\n- f\n```\n", f"```\n{H}\n- f\n```\n\n{H}\n- NEW\n", 6, id="header-in-fence"),
    pytest.param(f"~~~md\n{H}\n~~~\n{H}\n- a\n", f"~~~md\n{H}\n~~~\n{H}\n- a\n- NEW\n", 5, id="tilde-fence"),
    pytest.param(f"{H}\n- a\n```\n- f\n```\n", f"{H}\n- a\n- NEW\n```\n- f\n```\n", 2, id="fenced-item"),
    pytest.param(f"{H} ##\n- a\n", f"{H} ##\n- a\n- NEW\n", 2, id="closed-atx-header"),
    pytest.param(f"### Gemini Added Memories\n- a\n", f"### Gemini Added Memories\n- a\n\n{H}\n- NEW\n", 4,
                 id="level-3-is-not-the-header"),
    pytest.param(f"{H}\n- a\n* b\n+ c\n", f"{H}\n- a\n* b\n+ c\n- NEW\n", 4, id="any-marker"),
]


@pytest.mark.parametrize("before, after, line", PLACEMENT)
def test_placement(before: str, after: str, line: int) -> None:
    plan = plan_add(before, "NEW")
    assert plan.content == after
    assert plan.entry_line == line
    assert not plan.already_present
    ins = plan.insertion
    assert ins is not None
    assert before[:ins.offset] + ins.text + before[ins.offset:] == after
    new_entry = parse(after).entry_at(line)
    assert new_entry is not None and new_entry.text == "NEW"


@pytest.mark.parametrize("before, after, line", PLACEMENT)
def test_placement_with_crlf(before: str, after: str, line: int) -> None:
    crlf = before.replace("\n", "\r\n")
    plan = plan_add(crlf, "NEW")
    if "\n" in before:
        assert plan.content == after.replace("\n", "\r\n")
    else:  # a file without any line ending: new lines use \n
        assert plan.content == after
    assert plan.entry_line == line


def test_insertion_position_is_line_and_column() -> None:
    plan = plan_add("# T\nlast", "x")
    assert plan.insertion is not None
    assert (plan.insertion.line, plan.insertion.column, plan.insertion.offset) == (1, 4, 8)
    plan = plan_add(f"{H}\n- a\n\n## B\n", "x")
    assert (plan.insertion.line, plan.insertion.column) == (2, 0)


def test_multi_line_text_is_one_entry() -> None:
    plan = plan_add(f"{H}\n- a\n", "first\nsecond\n\n  indented\nlast")
    assert plan.content == f"{H}\n- a\n- first\n  second\n\n    indented\n  last\n"
    assert [e.text for e in parse(plan.content).entries] == ["a", "first\nsecond\n\n  indented\nlast"]


def test_cr_only_file() -> None:
    assert plan_add("# T\r", "x").content == f"# T\r\r{H}\r- x\r"


def test_mixed_endings_use_the_first_one() -> None:
    assert plan_add("# T\r\nmore\n", "x").content == f"# T\r\nmore\n\r\n{H}\r\n- x\r\n"


def test_text_is_cleaned_before_saving() -> None:
    plan = plan_add("", "  ## - Use pnpm  ")
    assert plan.text == "Use pnpm" and plan.content == f"{H}\n- Use pnpm\n"


@pytest.mark.parametrize("text", ["", "  ", "#", "- ", "--", "# - * +"])
def test_empty_text_raises(text: str) -> None:
    with pytest.raises(EmptyEntryError, match="empty"):
        plan_add("# T\n", text)


@pytest.mark.parametrize(
    "existing, text",
    [
        ("- Use pnpm.", "Use pnpm"),
        ("- Use pnpm", "use   PNPM!"),
        ("* Use pnpm", "# Use pnpm;"),
        ("+ Use pnpm:", "- use pnpm,"),
        ("- Use\n  pnpm", "Use pnpm"),
        ("- ｕｓｅ　ｐｎｐｍ", "use pnpm"),
        ("- Straße", "STRASSE"),
        ("- 日本語を使う。", "日本語を使う"),
        ("- 日本語を使う", "日本語を使う！"),
        ("- a；", "a：，"),
    ],
)
def test_duplicate_leaves_content_alone(existing: str, text: str) -> None:
    content = f"# Rules\n\n{H}\n{existing}\n"
    plan = plan_add(content, text)
    assert plan.already_present
    assert plan.content == content and plan.insertion is None
    assert plan.entry_line == 3 and plan.existing is not None


def test_duplicate_outside_the_section_counts() -> None:
    plan = plan_add("- Use pnpm\n\n# Notes\n", "use pnpm")
    assert plan.already_present and plan.entry_line == 0


@pytest.mark.parametrize("existing", ["```\n- Use pnpm\n```", "  - Use pnpm", "Use pnpm"])
def test_non_entries_are_not_duplicates(existing: str) -> None:
    assert not plan_add(existing + "\n", "Use pnpm").already_present


def test_format_entry() -> None:
    assert format_entry("a", "\n") == "- a\n"
    assert format_entry("a\nb\n\nc", "\r\n") == "- a\r\n  b\r\n\r\n  c\r\n"


def test_find_entry_cleans_and_normalises() -> None:
    outline = parse("- Alpha\n- Beta.\n- beta\n")
    entry = find_entry(outline, "## - BETA")
    assert entry is not None and entry.line == 1
    assert find_entry(outline, "Gamma") is None


@pytest.mark.parametrize(
    "content, text, after",
    [
        ("- a\n- b\n- c\n", "b", "- a\n- c\n"),
        ("- a\n- b\n", "b", "- a\n"),
        ("- a\n  more\n\n  still\n- b\n", "a more still", "- b\n"),
        ("# T\r\n- a\r\n- b\r\n", "a", "# T\r\n- b\r\n"),
        ("- a\n- b", "b", "- a\n"),
        ("## H\n- only\n\n## Next\n", "only", "## H\n\n## Next\n"),
        ("# P\n\n- a\n\n## X\n", "a", "# P\n\n## X\n"),
        ("# P\n\n- a\n", "a", "# P\n"),
        ("# P\n\n- a", "a", "# P\n"),
        ("- a\n\n# T\n", "a", "# T\n"),
        ("# P\r\n\r\n- a\r\n\r\n## X\r\n", "a", "# P\r\n\r\n## X\r\n"),
    ],
)
def test_plan_remove(content: str, text: str, after: str) -> None:
    entry = find_entry(parse(content), text)
    assert entry is not None
    plan = plan_remove(content, entry)
    assert plan.content == after
    assert content[:plan.start] + content[plan.end:] == after


@pytest.mark.parametrize(("text", "saved"), [
    ("a\n```", "a\n```"),
    ("a\n~~~~\ncode", "a\n~~~~\ncode"),
    ("a\n  ```python\n  x = 1", "a\n```python\nx = 1"),  # continuation lines read back de-indented
])
def test_text_with_an_unclosed_fence_stays_one_entry(text: str, saved: str) -> None:
    """The fence ends with the entry (a line at column 0 ends both): nothing after it is swallowed."""
    content = "# Rules\n\n## Gemini Added Memories\n- one\n\n## Later\n- two\n"
    plan = plan_add(content, text)
    outline = parse(plan.content)
    assert [e.text for e in outline.entries] == ["one", saved, "two"]
    assert [h.title for h in outline.headings] == ["Rules", "Gemini Added Memories", "Later"]
    assert [e.text for e in parse(plan_add(plan.content, "three").content).entries][-2:] == ["three", "two"]


def test_unclosed_fence_in_an_entry_ends_with_it() -> None:
    outline = parse("- a\n  ```\n  code\n\n- b\n## H\n* c\n  ~~~\n")
    assert [(e.text, e.line, e.end_line) for e in outline.entries] == [("a\n```\ncode", 0, 2), ("b", 4, 4), ("c\n~~~", 6, 7)]
    assert [h.title for h in outline.headings] == ["H"]


def test_a_closing_fence_is_indented_three_spaces_at_most() -> None:
    outline = parse("```\n    ```\n- inside\n```\n- outside\n")
    assert [e.text for e in outline.entries] == ["outside"]


def test_text_with_a_closed_fence_stays_one_entry() -> None:
    plan = plan_add("## Gemini Added Memories\n- one\n", "run:\n```\nmake check\n```")
    assert plan.content == "## Gemini Added Memories\n- one\n- run:\n  ```\n  make check\n  ```\n"
    entries = parse(plan.content).entries
    assert [e.text for e in entries] == ["one", "run:\n```\nmake check\n```"]
    assert plan_add(plan.content, "two").content.endswith("  ```\n- two\n")


@pytest.mark.parametrize(("content", "text", "after"), [
    ("# Shop\nA Django shop.\n\n## Gemini Added Memories\n- Use pnpm\n", "Use pnpm", "# Shop\nA Django shop.\n"),
    ("## Gemini Added Memories\n- only\n", "only", ""),
    ("## Gemini Added Memories\n- only\n\n# Next\n", "only", "# Next\n"),
    ("# P\n\n## Gemini Added Memories\n\n- a\n\n## X\n", "a", "# P\n\n## X\n"),
    ("# P\r\n\r\n## Gemini Added Memories\r\n- a\r\n", "a", "# P\r\n"),
    ("# P\n\n## Gemini Added Memories\n- a\n---\n- b\n", "a", "# P\n\n---\n- b\n"),
    # Something else under the heading keeps it.
    ("## Gemini Added Memories\n- a\n- b\n", "a", "## Gemini Added Memories\n- b\n"),
    ("## Gemini Added Memories\ntext\n- a\n", "a", "## Gemini Added Memories\ntext\n"),
    ("## Gemini Added Memories\n- a\n### Sub\n", "a", "## Gemini Added Memories\n### Sub\n"),
    # Not Memory Lens's heading, or not the section holding the entry.
    ("## Gemini added memories\n- a\n", "a", "## Gemini added memories\n"),
    ("## Gemini Added Memories\n# Title\n- a\n", "a", "## Gemini Added Memories\n# Title\n"),
    ("- a\n\n## Gemini Added Memories\n- b\n", "a", "## Gemini Added Memories\n- b\n"),
])
def test_removing_the_last_entry_of_the_section_removes_its_heading(content: str, text: str, after: str) -> None:
    entry = find_entry(parse(content), text)
    assert entry is not None
    plan = plan_remove(content, entry)
    assert plan.content == after
    assert content[:plan.start] + content[plan.end:] == after  # one span: the language server's edit
