"""Cursor's rules as its documentation gives them (core/agents/cursor.py; docs/agents.md#cursor):
each mode of a project rule, nested rules and AGENTS.md, the legacy .cursorrules, its glob dialect,
and bad input (one reason each, the rest still shown)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_lens.core.agents import agent_view, cursor
from memory_lens.core.settings import Settings


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    return tmp_path / "proj"


def statuses(view) -> dict[str, tuple]:
    return {s.path.name: (s.loaded, s.when, s.matched_by, s.reason) for s in view.sources}


def rule(root: Path, name: str, head: str, body: str = "- body", folder: str = "") -> Path:
    base = root / folder if folder else root
    return write(base / ".cursor" / "rules" / name, f"---\n{head}\n---\n{body} {name}\n")


def test_the_four_modes_of_a_project_rule(root: Path) -> None:
    rule(root, "always.mdc", "alwaysApply: true")
    rule(root, "ts.mdc", "globs: src/**/*.ts\nalwaysApply: false")
    rule(root, "asked.mdc", "description: Database migrations\nalwaysApply: false")
    rule(root, "manual.mdc", "alwaysApply: false")
    write(root / "src" / "a.ts", "x")
    view = agent_view("cursor", root, Settings(), file=root / "src" / "a.ts")
    got = statuses(view)
    assert got["always.mdc"] == (True, "start", "", "")
    assert got["ts.mdc"] == (True, "on-read", "src/**/*.ts", "")
    assert got["asked.mdc"] == (False, "requestable", "", "the agent may request it: Database migrations")
    assert got["manual.mdc"] == (False, "", "", "manual: only when @-mentioned")
    assert view.text == "- body always.mdc\n\n- body ts.mdc"  # requestable and manual rules are not in it
    other = statuses(agent_view("cursor", root, Settings(), file=write(root / "b.py", "x")))
    assert other["ts.mdc"] == (False, "", "", "globs `src/**/*.ts` do not match b.py")
    alone = statuses(agent_view("cursor", root, Settings()))  # no file asked about
    assert alone["ts.mdc"] == (False, "", "", "globs `src/**/*.ts`: attached when Cursor reads a matching file")


def test_globs_and_a_description_not_matching_leave_the_rule_requestable(root: Path) -> None:
    rule(root, "both.mdc", "description: Styles\nglobs: '**/*.css'")
    got = statuses(agent_view("cursor", root, Settings(), file=write(root / "a.py", "x")))
    assert got["both.mdc"][:2] == (False, "requestable")


def test_md_files_and_subfolders_of_cursor_rules_count_in_path_order(root: Path) -> None:
    rule(root, "b.md", "alwaysApply: true")
    rule(root, "a/z.mdc", "alwaysApply: true")
    write(root / ".cursor" / "rules" / "notes.txt", "not a rule")
    view = agent_view("cursor", root, Settings())
    assert [s.path.relative_to(root).as_posix() for s in view.sources] == [".cursor/rules/a/z.mdc",
                                                                          ".cursor/rules/b.md"]


def test_nested_rules_and_agents_md_apply_to_files_in_their_directory(root: Path) -> None:
    write(root / "AGENTS.md", "- root agents\n")
    write(root / ".cursorrules", "- legacy\n")
    rule(root, "web.mdc", "alwaysApply: true", folder="web")
    rule(root, "api.mdc", "globs: '*.py'", folder="api")  # relative to api/
    write(root / "api" / "AGENTS.md", "- api agents\n")
    file = write(root / "api" / "h.py", "x")
    got = statuses(agent_view("cursor", root, Settings(), file=file))
    assert got[".cursorrules"] == (True, "start", "", "") and got["AGENTS.md"][:2] == (True, "on-read")
    assert got["api.mdc"] == (True, "on-read", "*.py", "")
    assert "web.mdc" not in got  # web/ is not on the way to the file
    view = agent_view("cursor", root, Settings(), file=file)
    assert [s.path.relative_to(root).as_posix() for s in view.sources] == [
        ".cursorrules", "AGENTS.md", "api/.cursor/rules/api.mdc", "api/AGENTS.md"]
    assert view.sources[1].when == "start" and view.sources[3].matched_by == "api/"
    web = statuses(agent_view("cursor", root, Settings(), file=write(root / "web" / "i.ts", "x")))
    assert web["web.mdc"] == (True, "on-read", "web/", "")


@pytest.mark.parametrize(("head", "file", "loaded"), [
    ("globs: src/*.ts, lib/*.ts", "lib/a.ts", True),  # a comma-separated string
    ('globs: ["src/*.ts", "lib/*.ts"]', "lib/a.ts", True),  # a list
    ("globs:\n  - src/*.ts\n  - lib/*.ts", "lib/a.ts", True),  # a block list
    ("globs: src/*.{ts,tsx}, lib/*.js", "src/a.tsx", True),  # the comma inside braces is the glob's
    ("globs: src/*.{ts,tsx}, lib/*.js", "lib/a.js", True),
    ("globs: **/*.ts", "deep/er/a.ts", True),  # not valid YAML (an alias), read all the same
    ("globs: *.ts", "deep/a.ts", False),  # `*` stays within one name
    ("globs: /src/*.ts", "src/a.ts", False),  # a leading / is not a relative glob: it matches nothing
    ('alwaysApply: "true"', "a.ts", False),  # the string "true" is not the boolean
    ("alwaysApply: true", "a.ts", True),
])
def test_cursor_glob_dialect(root: Path, head: str, file: str, loaded: bool) -> None:
    rule(root, "r.mdc", head)
    got = statuses(agent_view("cursor", root, Settings(), file=write(root / file, "x")))
    assert got["r.mdc"][0] is loaded


def test_bad_rules_files_each_get_a_reason_and_the_rest_still_shows(root: Path) -> None:
    rule(root, "good.mdc", "alwaysApply: true")
    rule(root, "quote.mdc", 'description: "open')
    write(root / ".cursor" / "rules" / "bin.mdc", b"\x00\x01\x02")
    write(root / ".cursor" / "rules" / "huge.mdc", b"x" * (cursor.READ_LIMIT + 1))
    view = agent_view("cursor", root, Settings())
    got = statuses(view)
    assert got["good.mdc"][0] and view.text == "- body good.mdc"
    assert got["quote.mdc"][3].startswith("front matter cannot be read (the string \"open is not closed)")
    assert got["bin.mdc"][3] == "a binary file (NUL bytes), not text"
    assert got["huge.mdc"][3].startswith("too large (16777217 bytes)")
    assert len(view.warnings) == 3


def test_exploding_globs_never_expand(root: Path) -> None:
    rule(root, "boom.mdc", "globs: " + "{a,b}" * 20)
    got = statuses(agent_view("cursor", root, Settings(), file=write(root / "a.ts", "x")))
    assert got["boom.mdc"] == (False, "", "", "globs `" + "{a,b}" * 20 + "`: none is a glob Cursor can use")


def test_explain_gives_cursor_statuses_by_the_shared_contract(root: Path) -> None:
    from memory_lens.core.explain import explain

    rule(root, "always.mdc", "alwaysApply: true")
    rule(root, "ts.mdc", "globs: src/**/*.ts")
    rule(root, "asked.mdc", "description: Migrations")
    rule(root, "manual.mdc", "alwaysApply: false")
    file = write(root / "src" / "a.ts", "x")
    got = {f.path.name: f.statuses["cursor"].to_json() for f in explain(file, Settings(), agents=["cursor"]).files}
    assert got["always.mdc"] == {"status": "loaded"}
    assert got["ts.mdc"] == {"status": "on-read", "matchedBy": "src/**/*.ts"}
    assert got["asked.mdc"] == {"status": "requestable", "reason": "the agent may request it: Migrations"}
    assert got["manual.mdc"] == {"status": "not-loaded", "reason": "Cursor: manual: only when @-mentioned"}
