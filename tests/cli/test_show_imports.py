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


def test_check_reports_imports_the_agent_cannot_follow(ws: Workspace) -> None:
    ws.project("p")
    ws.write("outside.md", "x")
    ws.write("p/GEMINI.md", (
        "# Rules\n@./missing.md\nsee @../outside.md\n@https://example.com/x.md\n"
        "@./a.md\n@./l1.md\n`@./missing.md` in code, me@example.com\n@./ok.md\n"))
    ws.write("p/a.md", "@./b.md")
    ws.write("p/b.md", "@./a.md @./gone.md")
    for i in range(1, 6):
        ws.write(f"p/l{i}.md", f"@./l{i + 1}.md")
    ws.write("p/ok.md", "fine")
    result = ws.run("check", "--format", "json", str(ws.path("p/GEMINI.md")))
    assert result.rc == 0, result  # warnings
    findings = [(f["line"], f["code"], f["severity"], f["message"]) for f in result.json()]
    assert [f["column"] for f in result.json()] == [1, 5, 1, 1, 1, 1]
    missing = ws.path("p/missing.md")
    assert findings == [
        (2, "import-not-found", "warning",
         f"@./missing.md cannot be imported: ENOENT: no such file or directory, access '{missing}'"),
        (3, "import-outside-root", "warning",
         "@../outside.md is outside the project root (Gemini CLI refuses it: Path traversal attempt)"),
        (4, "import-outside-root", "warning",
         "@https://example.com/x.md is a URL (Gemini CLI imports files only)"),
        (5, "import-cycle", "warning",
         f"@./a.md: {ws.path('p/b.md')}:1 imports @./a.md, which is already imported along this chain "
         "(a cycle): Gemini CLI stops there"),
        (5, "import-not-found", "warning",
         f"@./a.md: {ws.path('p/b.md')}:1 imports @./gone.md, which cannot be imported: ENOENT: no such file "
         f"or directory, access '{ws.path('p/gone.md')}'"),
        (6, "import-depth", "warning",
         f"@./l1.md: {ws.path('p/l5.md')}:1 imports @./l6.md, which is more than 5 imports deep: "
         "Gemini CLI leaves it as text"),
    ]
    assert ws.run("check", "--strict", str(ws.path("p/GEMINI.md"))).rc == 1


def test_budget_counts_what_imports_pull_in(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/GEMINI.md", "@./big.md\n")
    ws.write("p/big.md", "- " + "x" * 200 + "\n")
    shown = ws.ok("show", cwd=ws.path("p")).stdout
    assert len(shown.encode()) > 200
    result = ws.run("check", "--format", "json", "--budget", "150", str(ws.path("p/GEMINI.md")))
    assert [f["code"] for f in result.json()] == ["over-budget"], result
    assert str(len(shown.encode()) - 1) in result.json()[0]["message"]  # the size `show` prints
