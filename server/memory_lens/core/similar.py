"""Near-copies, with rapidfuzz: entries that say nearly the same thing as an entry of a more
general file (`redundant`, with the score), and two agents' files in one directory that are
mostly the same text (`drift`).

Bounded: only entries of at least `MIN_CHARS` characters are compared (below that, "use pnpm"
and "use npm" score 93), and each only with the entries of the other file that start or end
with the same `ANCHOR` characters (found in a dict made once per file), which rapidfuzz's
`process.extractOne` scores in C with the score cutoff. So a near copy edited at both ends
("Always run the tests before pushing" and "Run the tests before pushing, always") is not
found: comparing every pair cost the large benchmark tree's check twice its time
(docs/performance.md).
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Container, Dict, Iterable, List, Sequence, Tuple

DRIFT = "drift"
CUTOFF = 90  # rapidfuzz's fuzz.ratio (0-100) from which two entries say the same thing
MIN_CHARS = 24
ANCHOR = 10  # entries compared: those that start, or end, with the same 10 characters
# The agents' own file names that can be near-copies of one another in a directory (CLAUDE.local.md
# is one person's, not a copy to bridge).
AGENT_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
# GitHub Copilot's repository file, under `.github/` of the directory whose AGENTS.md it copies.
COPILOT_DIR, COPILOT_FILE = ".github", "copilot-instructions.md"
# Which of those can import another file in its place, and how (Claude Code and Gemini CLI: `@path`).
IMPORTING = ("CLAUDE.md", "GEMINI.md")
DRIFT_SHARE = 0.5  # drift when the shared lines are at least half of all distinct lines ...
DRIFT_MIN_LINES = 3  # ... and at least this many


NearIndex = Tuple[Dict[str, List[str]], Dict[str, List[str]]]


def near_index(keys: Iterable[str]) -> NearIndex:
    """KEYS of at least `MIN_CHARS` characters by their first and by their last `ANCHOR`
    characters: what `near_matches` compares with (made once per file: `FileEntries.near_index`)."""
    starts: dict[str, list[str]] = defaultdict(list)
    ends: dict[str, list[str]] = defaultdict(list)
    for k in keys:
        if len(k) >= MIN_CHARS:
            starts[k[:ANCHOR]].append(k)
            ends[k[-ANCHOR:]].append(k)
    return starts, ends


def near_matches(own: Iterable[str], others: Sequence[NearIndex], skip: Container[str]) -> dict[str, tuple[int, str, int]]:
    """Each entry of OWN (normalised entries), but those in SKIP, nearly the same as an entry of one
    of OTHERS but not equal to it: (the index in OTHERS of the first such, its best match there at
    or above `CUTOFF`, the score). Only entries that start or end alike (`ANCHOR` characters) are
    compared: an entry goes to rapidfuzz once with those of every other file, and again file by
    file only when one of them is near (one in ~200 on the large benchmark tree). OWN needs no
    index of its own: each entry looks its anchors up in the others' (most checked files are
    never anyone's more general file)."""
    # Imported here, not with the module: ~24 ms that the language server's start (the
    # `initialize` answer an editor waits for) would pay before any check needs it.
    from rapidfuzz.fuzz import ratio
    from rapidfuzz.process import extractOne as extract_one

    found = {}
    for key in own:
        if len(key) < MIN_CHARS or key in skip:
            continue
        start, end = key[:ANCHOR], key[-ANCHOR:]
        near: list[str] = []
        for starts, ends in others:
            near += starts.get(start, ())
            near += ends.get(end, ())
        if not near or extract_one(key, near, scorer=ratio, score_cutoff=CUTOFF) is None:
            continue
        for i, (starts, ends) in enumerate(others):
            best = extract_one(key, starts.get(start, []) + ends.get(end, []), scorer=ratio, score_cutoff=CUTOFF)
            if best is not None and best[0] != key:
                found[key] = (i, best[0], int(round(best[1])))
                break
    return found


def distinct_lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def is_copilot_file(path: Path) -> bool:
    return path.name == COPILOT_FILE and path.parent.name == COPILOT_DIR


def shown_name(path: Path) -> str:
    """How a drift message names an agent's file: `.github/copilot-instructions.md`, else its name."""
    return f"{COPILOT_DIR}/{COPILOT_FILE}" if is_copilot_file(path) else path.name


def sibling_agent_files(path: Path, names: Iterable[str] = AGENT_FILES) -> list[Path]:
    """The other agents' files beside memory file PATH (see `AGENT_FILES`), with the
    `.github/copilot-instructions.md` of its directory (for that file: the files of the directory
    holding `.github`)."""
    if is_copilot_file(path):
        here, copilot = path.parent.parent, []
    elif path.name in AGENT_FILES:
        here, copilot = path.parent, [path.parent / COPILOT_DIR / COPILOT_FILE]
    else:
        return []
    return [p for p in [*(here / n for n in names if n != path.name), *copilot] if os.path.isfile(p)]


def bridge_text(copy_text: str, source: Path, source_text: str) -> str:
    """What a copy becomes once SOURCE (with SOURCE_TEXT) is its source: the import of SOURCE,
    then the lines of COPY_TEXT that SOURCE does not have (in their order), so nothing is lost."""
    own = own_lines(copy_text, source_text)
    return f"@{source.name}\n" + ("\n" + own if own else "")


def own_lines(copy_text: str, source_text: str) -> str:
    """The non-blank lines of COPY_TEXT that SOURCE_TEXT does not have, in their order ("" if none)."""
    theirs = distinct_lines(source_text)
    own = [line for line in copy_text.splitlines() if line.strip() and line.strip() not in theirs]
    return "\n".join(own) + "\n" if own else ""
