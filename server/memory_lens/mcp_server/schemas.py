"""The MCP tools' descriptions and argument types: what a model reads to decide which tool to call
and how. The SDK makes each tool's JSON Schema from the typed signature in `server.py`, built from
the types here, and validates the arguments against it. The six notes tools keep seed 002's names
and parameters (`memory_list` and `memory_search` add `cursor` and `limit`, for pages);
`save_memory` keeps Gemini CLI's (seeds 001 and 004).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from memory_lens.core.agents import AGENTS

MAX_PAGE = 100
MAX_FACT_CHARS = 4096  # save_memory: an entry is a line or a paragraph, not a file (docs/mcp.md)
# The agents whose loading rules `effective_memory` and `explain_context` follow: every agent the
# core knows (`core.agents.AGENTS`, what `memory-lens show --agent` accepts).

INSTRUCTIONS = """\
Memory Lens keeps two kinds of memory for this project and for the user.

Memory files (GEMINI.md and friends) are loaded into every session in full. Use save_memory for a
short fact the user wants remembered in every session; list_memory_entries and remove_memory_entry
to review or remove them; effective_memory to see exactly what is loaded for a path;
explain_context to see which agent loads which instruction file for a path, and why not.

Notes are named, tagged pieces of knowledge looked up only when needed (architecture decisions,
build fixes, snippets). Use memory_search or memory_list to find them, memory_read to get one in
full, memory_create / memory_edit / memory_delete to keep them. Project notes are shared with the
project; global notes are personal. Without a scope, a name means the project's note, else the
global one.
"""


def maybe(kind: Any, description: str, **schema: Any) -> Any:
    """An argument that may be left out (or sent as null): KIND, published as KIND alone (SCHEMA added)."""
    return Annotated[Union[kind, SkipJsonSchema[None]], Field(description=description, json_schema_extra=schema or None)]


def given(kind: Any, description: str) -> Any:
    """An argument of type KIND."""
    return Annotated[kind, Field(description=description)]


WriteScope = Literal["project", "global"]
PageSize = Annotated[int, Field(ge=1, le=MAX_PAGE, strict=True)]
NoteName = given(str, "The note's name")
NoteScope = maybe(WriteScope, "Storage scope: 'project' (shared with the project) or 'global' (personal). "
                              "Default: the project's note if there is one, else the global one.")
ListScope = maybe(Literal["project", "global", "both"], "Which notes to look at. Default: both (project notes first).")
Tags = maybe(list[str], "Optional tags for categorization")
Cursor = maybe(str, "The next_cursor of the previous page, to get the next one.")
NotesLimit = maybe(PageSize, "Notes per page (default 20).")
MemoryPath = maybe(str, "A file or directory (default: the project).")
AgentName = maybe(Literal[AGENTS], "Whose loading rules to follow (default: gemini).", enum=list(AGENTS))
AgentNames = maybe(list[Literal[AGENTS]], "Only these agents (default: every agent Memory Lens knows).")

DESCRIPTIONS: dict[str, str] = {
    "memory_create": (
        "Creates a new memory note with optional tags and scope. Use it for knowledge worth keeping "
        "beyond this session that is looked up when needed: an architecture decision, a build or "
        "debugging fix, a reusable snippet, a preference with context. Pick a short, descriptive, "
        "unique name. Fails if a note of that name already exists in that scope (use memory_edit)."
    ),
    "memory_read": (
        "Reads one memory note in full: its content, tags and timestamps. Without a scope it reads the "
        "project's note of that name, else the global one."
    ),
    "memory_list": (
        "Lists memory notes (name, scope, tags, a one-line snippet; not the full content), project notes "
        "first, by name, a page at a time. Filter by a search query and/or tags (a note must have every "
        "tag given). Use memory_read for a note's full content."
    ),
    "memory_edit": (
        "Replaces the content of an existing memory note (its tags and creation time are kept). Without a "
        "scope it edits the project's note of that name, else the global one."
    ),
    "memory_delete": (
        "Deletes a memory note. Without a scope it deletes the project's note of that name, else the "
        "global one."
    ),
    "memory_search": (
        'Full-text search of memory notes, best match first (BM25), a page at a time, with a snippet of '
        'each (score: higher is better). Query syntax: words (all must match), "an exact phrase", prefix*, '
        'AND, OR, a NOT b, parentheses ((deploy OR release) NOT staging). Matching ignores case and accents.'
    ),
    "save_memory": (
        "Saves a specific fact to long-term memory: a '- fact' entry under '## Gemini Added Memories' in "
        "the memory file (GEMINI.md) that is loaded into every future session.\n\n"
        "Use this tool:\n"
        "- when the user explicitly asks you to remember something (\"remember that I use pnpm\", "
        "\"please save this: the staging host is db-2\");\n"
        "- when the user states a clear, short fact about themselves, their preferences or their "
        "environment that will matter in future sessions.\n\n"
        "Do NOT use this tool:\n"
        "- for context that only matters in the current conversation;\n"
        "- for long, complex or rambling text: a fact is one short, self-contained statement (for longer "
        "knowledge, create a note with memory_create);\n"
        "- when you are not sure the fact is worth remembering for good: ask the user \"Should I remember "
        "that for you?\" first.\n\n"
        "The user may be shown the change and asked to approve or edit it; if they decline, nothing is "
        "written: do not retry."
    ),
    "list_memory_entries": (
        "Lists the entries (top-level list items) of the memory files loaded for a path, in load order, "
        "with the file and line of each, a page at a time."
    ),
    "remove_memory_entry": (
        "Removes the first memory entry (in list_memory_entries order) matching the text, ignoring case, "
        "spacing and a trailing full stop. Only when the user asks for it."
    ),
    "effective_memory": (
        "Shows the memory an agent loads for a path: the merged text of every memory file of its chain "
        "(global first, then the project's, in the order the agent loads them) and the files it comes from. "
        "A file outside the client's roots is listed with the reason, its content withheld."
    ),
    "explain_context": (
        "Explains, for a file or directory, which instruction files (GEMINI.md, CLAUDE.md, AGENTS.md, rules) "
        "each agent loads and why not: per file and agent a status, loaded (at start), on-read (when the agent "
        "reads the path; matchedBy: the glob or directory), requestable, or not-loaded with the reason."
    ),
}
