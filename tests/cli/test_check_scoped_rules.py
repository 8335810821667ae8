"""`memory-lens check` on scoped rules (`.claude/rules` with `paths:`, `.cursor/rules` with `globs`):
rule-matches-nothing, invalid-glob, frontmatter; and bad input, one line each, the rest still shown."""

from __future__ import annotations

from sandbox import Workspace

EXPLODING = "{a,b}" * 20


def _tree(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/src/app.ts", "x\n")
    ws.write("p/.claude/rules/src.md", "---\npaths: src/**/*.ts\n---\n- typed\n")  # matches app.ts
    ws.write("p/.claude/rules/docs.md", "---\npaths:\n  - docs/**/*.md\n---\n- docs\n")  # matches nothing
    ws.write("p/.claude/rules/broken.md", "---\npaths: [src/**\n---\n- x\n")
    ws.write("p/.cursor/rules/ts.mdc", f"---\nglobs: src/**/*.ts, {EXPLODING}, /abs/*.ts\n---\n- strict\n")
    ws.write("p/.cursor/rules/py.mdc", '---\nglobs: ["**/*.py"]\nalwaysApply: "true"\n---\n- python\n')
    ws.write("p/.cursor/rules/quote.mdc", '---\ndescription: "never closed\n---\n- q\n')
    ws.write("p/.cursor/rules/binary.mdc", b"\x00\x01\x02 not text")
    ws.write("p/.cursor/rules/huge.mdc", b"---\nglobs: src/**\n---\n" + b"- x\n" * (5 * 1024 * 1024 + 1))


def test_check_reports_each_scoped_rule_problem_once_and_the_rest(ws: Workspace) -> None:
    _tree(ws)
    result = ws.run("check", str(ws.path("p")))
    p = ws.path("p")
    assert result.stdout.splitlines() == [
        f"{p}/.claude/rules/broken.md:1:1: warning: claude: front matter is not valid YAML (a list opened with [ "
        "is not closed): Claude Code does not load this file at start [frontmatter]",
        f"{p}/.claude/rules/docs.md:2:1: information: claude: no file in the workspace matches paths "
        "`docs/**/*.md`: Claude Code never applies this rule [rule-matches-nothing]",
        f"{p}/.cursor/rules/binary.mdc:1:1: warning: cursor: a binary file (NUL bytes), not text: Cursor cannot "
        "use it as a rule [encoding]",
        f"{p}/.cursor/rules/huge.mdc:1:1: warning: cursor: 20971546 bytes, over the 16777216 bytes Memory Lens "
        "reads of a rules file: not checked [too-large]",
        f"{p}/.cursor/rules/py.mdc:1:1: warning: cursor: alwaysApply is \"true\", not the boolean true or false: "
        "Cursor does not apply this rule always (write alwaysApply: true) [frontmatter]",
        f"{p}/.cursor/rules/py.mdc:2:1: information: cursor: no file in the workspace matches globs `**/*.py`: "
        "Cursor never applies this rule [rule-matches-nothing]",
        f"{p}/.cursor/rules/quote.mdc:1:1: warning: cursor: front matter cannot be read (the string \"never "
        "closed is not closed): Cursor skips this rule [frontmatter]",
        f"{p}/.cursor/rules/ts.mdc:2:1: warning: cursor: the glob `{EXPLODING[:77]}...` of globs expands to "
        "1,048,576 patterns (over 1,024): braces multiply; write fewer alternatives [invalid-glob]",
        f"{p}/.cursor/rules/ts.mdc:2:1: warning: cursor: the glob `/abs/*.ts` of globs is absolute: globs are "
        "relative to the project, so it matches nothing [invalid-glob]",
    ]
    assert result.rc == 0 and result.stderr.endswith("9 finding(s): 0 error(s), 7 warning(s)\n")
    data = ws.json("check", "--format", "json", str(ws.path("p/.cursor/rules/py.mdc")))
    assert [(f["code"], f["severity"], f["line"]) for f in data] == [
        ("frontmatter", "warning", 1), ("rule-matches-nothing", "information", 2)]


def test_a_rule_matching_a_file_or_not_scoped_gets_nothing(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/lib/x.py", "x\n")
    ws.write("p/.cursor/rules/py.mdc", "---\nglobs: lib/*.py\n---\n- python\n")
    ws.write("p/.cursor/rules/always.mdc", "---\nalwaysApply: true\n---\n- always\n")
    ws.write("p/.claude/rules/all.md", "- no paths: loads at start\n")
    result = ws.run("check", str(ws.path("p")))
    assert result.stdout == "" and result.rc == 0


def test_copilot_instructions_files_get_the_same_checks_one_finding_each(ws: Workspace) -> None:
    ws.project("p")
    ws.write("p/src/app.ts", "x\n")
    i = "p/.github/instructions"
    ws.write(f"{i}/ts.instructions.md", "---\napplyTo: 'src/**/*.ts, /src/app.ts'\n---\n- typed\n")  # matches
    ws.write(f"{i}/all.instructions.md", "---\napplyTo: '**'\n---\n- at start\n")
    ws.write(f"{i}/docs.instructions.md", "---\napplyTo: 'docs/**/*.md, *.go'\n---\n- docs\n")  # matches nothing
    ws.write(f"{i}/boom.instructions.md", f"---\ndescription: b\napplyTo: '{EXPLODING}'\n---\n- b\n")
    ws.write(f"{i}/open.instructions.md", "---\napplyTo: src/**\n- never closed\n")
    ws.write(f"{i}/binary.instructions.md", b"\x00\x01\x02 not text")
    ws.write(f"{i}/huge.instructions.md", b"---\napplyTo: src/**\n---\n" + b"- x\n" * (5 * 1024 * 1024 + 1))
    ws.write(f"{i}/notes.md", "---\napplyTo: nothing/*\n---\nnot an instructions file\n")
    result = ws.run("check", str(ws.path("p")))
    p = ws.path("p")
    assert result.stdout.splitlines() == [
        f"{p}/{i[2:]}/binary.instructions.md:1:1: warning: copilot: a binary file (NUL bytes), not text: Copilot "
        "CLI cannot use it as a rule [encoding]",
        f"{p}/{i[2:]}/boom.instructions.md:3:1: warning: copilot: the glob `{EXPLODING[:77]}...` of applyTo "
        "expands to 1,048,576 patterns (over 1,024): braces multiply; write fewer alternatives [invalid-glob]",
        f"{p}/{i[2:]}/docs.instructions.md:2:1: information: copilot: no file in the workspace matches applyTo "
        "`docs/**/*.md`, `*.go`: Copilot CLI never applies this rule [rule-matches-nothing]",
        f"{p}/{i[2:]}/huge.instructions.md:1:1: warning: copilot: 20971548 bytes, over the 16777216 bytes Memory "
        "Lens reads of a rules file: not checked [too-large]",
        f"{p}/{i[2:]}/open.instructions.md:1:1: warning: copilot: the front matter opened by --- on line 1 is "
        "never closed: Copilot CLI reads no applyTo and attaches the whole file at start [frontmatter]",
    ]
    assert result.rc == 0
    only_others = ws.run("check", "--agent", "cursor", str(ws.path("p")))
    assert "copilot:" not in only_others.stdout
