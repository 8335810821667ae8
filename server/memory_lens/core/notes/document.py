"""A note as a Markdown document to edit: its tags in a front matter block, then its content.

    ---
    tags: security, maintenance
    ---
    Remember to rotate API keys every 90 days.

`render` makes the document; `parse` reads an edited one back: the content is everything after
the closing `---` line, exactly; `tags:` is a comma-separated list (empty: no tags). A document
whose front matter was removed keeps the note's tags. The note's JSON file stays the truth on
disk: an editor saves the document back through `NotesStore.edit`.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory_lens.core.notes.model import Note, NoteInvalidError, validate_tags

FENCE = "---"


@dataclass(frozen=True)
class NoteDocument:
    """What an edited document says: the content, and the tags (None: keep the note's)."""

    content: str
    tags: tuple[str, ...] | None


def render(note: Note) -> str:
    return f"{FENCE}\ntags: {', '.join(note.tags)}\n{FENCE}\n{note.content}"


def parse(text: str) -> NoteDocument:
    """The content and tags of an edited document; NoteInvalidError for an unreadable front
    matter (an unknown key, a bad tag)."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != FENCE:
        return NoteDocument(text, None)
    try:
        end = next(i for i in range(1, min(len(lines), 50)) if lines[i].rstrip("\r") == FENCE)
    except StopIteration:
        return NoteDocument(text, None)
    tags: tuple[str, ...] | None = None
    for number, raw in enumerate(lines[1:end], 2):
        line = raw.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or key.strip() != "tags":
            raise NoteInvalidError(f"line {number} of the front matter: only 'tags: a, b' can be set there; "
                                   f"the note's name and scope are fixed")
        value = value.strip()
        if value.startswith("[") and value.endswith("]"):
            value = value[1:-1]
        tags = validate_tags(t.strip().strip("'\"") for t in value.split(",") if t.strip())
    return NoteDocument("\n".join(lines[end + 1:]), tags)
