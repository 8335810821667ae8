"""`memory-lens check` on built repositories: `stale` paths, scripts and package managers."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox import Workspace

MEMORY = (
    "# Project\n"
    "- Tests live in `tests/unit` and `tests/integration`.\n"           # 2: integration is gone
    "- Run `npm run lint` before pushing; `npm run test` for tests.\n"   # 3: no lint script
    "- Use pnpm for installs.\n"                                         # 4: package-lock.json only
    "- Run `make check` or `make test`; make sure it passes.\n"          # 5: no check target
    "- Run `just docs`, `just fmt`, `tox -e lint,typecheck`, `tox -e py312`, `nox -s tests-3.12`.\n"  # 6
    "- `nox -s coverage` and src/main.py and src/app.py.\n"             # 7: no coverage session, no main.py
    "- Examples: https://example.com/src/gone.py, `src/*.py`, `<dir>/x.py`, `$HOME/src/x`, `src/{a,b}.py`,\n"
    "  `/etc/passwd`, `~/notes/x.md`, `other-repo/src/x.py`, `textDocument/hover`, `dist/app.js`.\n"
    "- Tabs, and/or I/O, read/write.\n"
    "```sh\n"
    "npm run nothing\n"
    "cat src/missing.txt\n"
    "make nothing\n"
    "```\n"
)


def build(ws: Workspace) -> Path:
    ws.project("p")
    ws.write("p/package.json", '{"scripts": {"test": "jest", "build": "tsc"}}')
    ws.write("p/package-lock.json", "{}")
    ws.write("p/Makefile", "test:\n\tpytest\nlint fmt: deps\n\truff .\n")
    ws.write("p/justfile", "fmt:\n    ruff format\nalias f := fmt\n")
    ws.write("p/tox.ini", "[tox]\nenvlist = py{310,311}, lint\n[testenv:docs]\ncommands = sphinx-build\n")
    ws.write("p/noxfile.py", "import nox\n\n@nox.session(python=['3.12'])\ndef tests(session):\n    pass\n")
    ws.write("p/.gitignore", "dist/\n")
    ws.write("p/tests/unit/test_x.py", "")
    ws.write("p/src/app.py", "")
    ws.mkdir("p/dist")
    return ws.write("p/GEMINI.md", MEMORY)


def stale(ws: Workspace, *args: str, cwd: Path) -> list[tuple[int, int, str]]:
    result = ws.run("check", "--format", "json", *args, cwd=cwd)
    return [(f["line"], f["column"], f["message"]) for f in result.json() if f["code"] == "stale"]


def test_each_stale_reference_is_reported_with_its_evidence(ws: Workspace) -> None:
    memory = build(ws)
    root = ws.path("p")
    found = stale(ws, cwd=root)
    assert [(line, col) for line, col, _ in found] == [(2, 35), (3, 16), (4, 3), (5, 8), (6, 8), (6, 45), (7, 11),
                                                       (7, 25)]
    messages = [m for _, _, m in found]
    assert "`tests/integration` does not exist in" in messages[0]
    assert f"{root / 'package.json'} defines no script 'lint' (build, test)" in messages[1]
    assert f"says pnpm, but {root} has package-lock.json (npm's lock file)" in messages[2]
    assert f"{root / 'Makefile'} defines no target 'check' (fmt, lint, test)" in messages[3]
    assert f"{root / 'justfile'} defines no recipe 'docs' (f, fmt)" in messages[4]
    assert f"{root / 'tox.ini'} defines no environment 'typecheck' (docs, lint, py310, py311)" in messages[5]
    assert f"{root / 'noxfile.py'} defines no session 'coverage' (tests)" in messages[6]
    assert "`src/main.py` does not exist" in messages[7]
    text = ws.ok("check", cwd=root)
    assert f"{memory}:3:16: warning: stale: `npm run lint`" in text.stdout


def test_fixing_the_project_clears_the_findings(ws: Workspace) -> None:
    build(ws)
    ws.write("p/package.json", '{"scripts": {"test": "jest", "lint": "eslint ."}}')
    ws.write("p/pnpm-lock.yaml", "")
    ws.write("p/Makefile", "test check:\n\tpytest\n")
    ws.write("p/justfile", "docs:\n    mkdocs build\nfmt:\n    ruff format\n")
    ws.write("p/tox.ini", "[tox]\nenvlist = lint, typecheck\n")
    ws.write("p/noxfile.py", "import nox\n\n@nox.session(name='coverage')\ndef cov(session):\n    pass\n"
                             "@nox.session\ndef tests(session):\n    pass\n")
    ws.write("p/tests/integration/test_y.py", "")
    ws.write("p/src/main.py", "")
    assert stale(ws, cwd=ws.path("p")) == []


def test_what_this_reader_cannot_see_is_not_reported(ws: Workspace) -> None:
    """No evidence, no finding: a Makefile that includes others, an unparsable package.json, no
    project at all (a global file), a nested package.json nearer to the memory file."""
    build(ws)
    ws.write("p/Makefile", "include common.mk\ntest:\n\tpytest\n")
    ws.write("p/package.json", "{not json")
    ws.write("p/pnpm-lock.yaml", "")
    found = [m for _, _, m in stale(ws, cwd=ws.path("p"))]
    assert not any("Makefile" in m or "package.json" in m or "pnpm" in m for m in found), found
    ws.write("p/web/package.json", '{"scripts": {"lint": "eslint ."}}')
    ws.write("p/web/GEMINI.md", "- Run `npm run lint`; `npm run build` is gone\n")
    nested = stale(ws, str(ws.path("p/web/GEMINI.md")), cwd=ws.path("p"))
    assert [m for _, _, m in nested if "web" in m] == [
        f"stale: `npm run build`: {ws.path('p/web/package.json')} defines no script 'build' (lint)"]
    ws.write_global("- Run `npm run nothing` and see `src/gone.py`\n")
    assert stale(ws, str(ws.global_dir / "GEMINI.md"), cwd=ws.path("p")) == []
