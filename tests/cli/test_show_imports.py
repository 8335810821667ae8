"""`@path` imports through `memory-lens show`: the expanded text in every format, the import
tree in `--format json`, and the trace in `--debug`."""

from __future__ import annotations

from sandbox import Workspace


def _tree(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "@AGENTS.md\n")  # the usual one-line file
    ws.write("p/AGENTS.md", "# Agents\n- Use pnpm\n@./docs/more.md and `@./docs/more.md`\n")
    ws.write("p/docs/more.md", "More.\n@../../outside.md\n")
    ws.write("outside.md", "outside the project\n")


EXPANDED = ("<!-- Imported from: AGENTS.md -->\n# Agents\n- Use pnpm\n"
            "<!-- Imported from: ./docs/more.md -->\nMore.\n"
            "<!-- Import failed: ../../outside.md - Path traversal attempt -->\n\n"
            "<!-- End of import from: ./docs/more.md --> and `@./docs/more.md`\n\n"
            "<!-- End of import from: AGENTS.md -->")


def test_show_prints_the_expanded_text(ws: Workspace) -> None:
    _tree(ws)
    assert ws.ok("show", cwd=ws.path("p")).stdout == EXPANDED + "\n"
    annotated = ws.ok("show", "--format", "annotated", cwd=ws.path("p")).stdout
    path = ws.path("p/GEMINI.md")
    assert annotated == f"--- Context from: {path} ---\n{EXPANDED}\n--- End of Context from: {path} ---\n"


def test_json_gives_the_import_tree(ws: Workspace) -> None:
    _tree(ws)
    shown = ws.json("show", cwd=ws.path("p"))
    assert shown["text"] == EXPANDED
    (source,) = shown["sources"]
    (agents,) = source["imports"]
    assert agents == {
        "file": str(ws.path("p/GEMINI.md")), "line": 1, "target": "AGENTS.md", "status": "imported",
        "path": str(ws.path("p/AGENTS.md")), "message": "", "children": [{
            "file": str(ws.path("p/AGENTS.md")), "line": 3, "target": "./docs/more.md", "status": "imported",
            "path": str(ws.path("p/docs/more.md")), "message": "", "children": [{
                "file": str(ws.path("p/docs/more.md")), "line": 2, "target": "../../outside.md",
                "status": "outside-root", "path": str(ws.path("outside.md")),
                "message": "Path traversal attempt", "children": []}]}]}
    assert source["tokens"] == -(-len(EXPANDED) // 4)  # the tokens of what the agent gets


def test_debug_traces_each_import(ws: Workspace) -> None:
    _tree(ws)
    result = ws.ok("show", "--debug", cwd=ws.path("p"))
    assert f"memory-lens: debug:   import @AGENTS.md (line 1): imported: {ws.path('p/AGENTS.md')}" in result.stderr
    assert ("memory-lens: debug:       import @../../outside.md (line 2): outside-root: Path traversal attempt"
            in result.stderr)


def test_a_file_without_imports_is_unchanged(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "- mail me@example.com\n- `@decorator` in code\n")
    shown = ws.json("show", cwd=ws.path("p"))
    assert shown["text"] == "- mail me@example.com\n- `@decorator` in code"
    assert shown["sources"][0]["imports"] == []
