"""`memory-lens notes search` as a subprocess: the query language (AND, OR, NOT, parentheses,
phrases, prefixes) and its one-line errors, scores where higher is better, and a note rewritten
in place behind the index's back."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Workspace


@pytest.fixture
def proj(ws: Workspace) -> Path:
    project = ws.project("proj")
    for name, content in (("a", "deploy to prod"), ("b", "deploy to staging"), ("c", "prod database"),
                          ("d", "release notes")):
        ws.ok("notes", "create", name, content, cwd=project)
    return project


def names(ws: Workspace, proj: Path, query: str) -> list[str]:
    return sorted(n["name"] for n in ws.json("notes", "search", query, cwd=proj)["notes"])


def test_and_or_not_parentheses_phrases_and_prefixes(ws: Workspace, proj: Path) -> None:
    assert names(ws, proj, "deploy AND prod") == ["a"]
    assert names(ws, proj, "deploy prod") == ["a"]
    assert names(ws, proj, "deploy NOT prod") == ["b"]
    assert names(ws, proj, "deploy AND NOT prod") == ["b"]
    assert names(ws, proj, "prod OR release") == ["a", "c", "d"]
    assert names(ws, proj, "(staging OR database) AND prod") == ["c"]
    assert names(ws, proj, "(staging OR database) prod") == ["c"]
    assert names(ws, proj, "prod NOT (deploy OR release)") == ["c"]
    assert names(ws, proj, "release OR deploy NOT staging") == ["a", "d"]  # NOT binds tighter than OR
    assert names(ws, proj, '"to prod" OR "release notes"') == ["a", "d"]
    assert names(ws, proj, "dep* NOT stag*") == ["a"]
    assert names(ws, proj, "deploy and prod") == []  # lower-case: a word like any other
    assert ws.json("notes", "list", "--search", "deploy NOT prod", cwd=proj)["total"] == 1


@pytest.mark.parametrize("query, message", [
    ("NOT deploy", "NOT needs a word before it, as in 'deploy NOT staging'"),
    ("deploy AND", "AND needs a word on each side"),
    ("OR deploy", "OR needs a word on each side"),
    ("deploy OR OR prod", "OR needs a word on each side"),
    ("(deploy OR prod", "a '(' without its ')'"),
    ("deploy) prod", "a ')' without its '('"),
    ("deploy ()", "empty parentheses"),
])
def test_what_fts5_cannot_answer_is_a_one_line_error(ws: Workspace, proj: Path, query: str, message: str) -> None:
    result = ws.run("notes", "search", query, cwd=proj)
    lines = result.stderr.strip().splitlines()
    assert result.rc == 1 and len(lines) == 1 and "Traceback" not in result.stderr, str(result)
    assert message in lines[0]
    assert result.stdout == ""


def test_scores_are_positive_and_higher_is_better(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "deploy", "how we deploy", cwd=proj)  # the name weighs more than the content
    found = ws.json("notes", "search", "deploy", cwd=proj)["notes"]
    scores = [n["score"] for n in found]
    assert found[0]["name"] == "deploy" and len(found) == 3
    assert all(s > 0 for s in scores) and scores == sorted(scores, reverse=True) and scores[0] > scores[1]


def test_a_note_rewritten_in_place_with_its_mtime_restored_is_searched_anew(ws: Workspace, proj: Path) -> None:
    """Same size, same inode, mtime set back: only the ctime tells the file changed."""
    path = proj / ".memory-lens" / "notes" / "d.json"
    assert names(ws, proj, "release") == ["d"]  # indexed
    before = os.stat(path)
    text = path.read_text(encoding="utf-8").replace("release", "rollout")
    assert len(text.encode()) == before.st_size and json.loads(text)["content"] == "rollout notes"
    with open(path, "r+", encoding="utf-8") as f:
        f.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert names(ws, proj, "rollout") == ["d"]
    assert names(ws, proj, "release") == []
    assert ws.json("notes", "search", "rollout", cwd=proj)["notes"][0]["snippet"] == "rollout notes"
