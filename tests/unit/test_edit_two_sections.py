"""Removing the last entry of an otherwise empty `## Gemini Added Memories` section takes the
heading with it only when it is the file's one such heading (`add` writes a heading only into a
file without one): a second, empty one is the user's and stays."""

from memory_lens.core.edit import plan_add, plan_remove
from memory_lens.core.markdown import parse

HEADER = "## Gemini Added Memories"


def test_add_then_remove_keeps_an_empty_section_heading_when_there_are_two() -> None:
    content = f"{HEADER}\n{HEADER}\n- kept entry\n"
    plan = plan_add(content, "Use pnpm")
    assert plan.content == f"{HEADER}\n- Use pnpm\n{HEADER}\n- kept entry\n"
    entry = parse(plan.content).entry_at(plan.entry_line)
    assert plan_remove(plan.content, entry).content == content


def test_the_only_section_heading_still_goes_with_its_last_entry() -> None:
    content = f"# P\n\n{HEADER}\n- a\n"
    entry = parse(content).entry_at(3)
    assert plan_remove(content, entry).content == "# P\n"
