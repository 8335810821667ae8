"""`memory-lens notes ...` as a subprocess: every subcommand, content from an argument, a file or
stdin, $EDITOR, both layouts, errors and exit codes, malformed files, backup/restore,
export/import, and real processes racing to create the same note."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Result, Workspace

from sandbox import MEMORY_LENS, Result


def run_with_input(ws: Workspace, data: bytes, *args: str, cwd: Path | None = None,
                   env: dict[str, str] | None = None) -> Result:
    proc = subprocess.run([*MEMORY_LENS, *args], cwd=str(cwd or ws.home), env=ws.env(env), input=data,
                          capture_output=True, timeout=60)
    return Result(proc.returncode, proc.stdout.decode(), proc.stderr.decode(), tuple(args))


@pytest.fixture
def proj(ws: Workspace) -> Path:
    return ws.project("proj")


def notes_dir(proj: Path) -> Path:
    return proj / ".memory-lens" / "notes"


def global_notes(ws: Workspace) -> Path:
    return ws.config_dir / "memory-lens" / "notes"


def one_line_error(result: Result, rc: int = 1) -> str:
    assert result.rc == rc, str(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, str(result)
    return lines[0]


def test_create_read_list_edit_delete(ws: Workspace, proj: Path) -> None:
    r = ws.ok("notes", "create", "api_key_rotation", "Rotate API keys every 90 days", "--tag", "security",
              "--tag", "maintenance", cwd=proj)
    path = notes_dir(proj) / "api_key_rotation.json"
    assert r.stdout == "" and r.stderr == f"memory-lens: created project note 'api_key_rotation' ({path})\n"
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["content"] == "Rotate API keys every 90 days" and data["tags"] == ["security", "maintenance"]

    assert ws.ok("notes", "read", "api_key_rotation", cwd=proj).stdout == "Rotate API keys every 90 days\n"
    note = ws.json("notes", "read", "api_key_rotation", cwd=proj)
    assert {k: note[k] for k in ("name", "scope", "tags", "path")} == {
        "name": "api_key_rotation", "scope": "project", "tags": ["security", "maintenance"], "path": str(path)}

    listed = ws.ok("notes", "list", cwd=proj)
    assert listed.stdout == "[project] api_key_rotation (security, maintenance): Rotate API keys every 90 days\n"

    r = ws.ok("notes", "edit", "api_key_rotation", "Rotate API keys every 30 days", cwd=proj)
    assert r.stderr.startswith("memory-lens: updated project note 'api_key_rotation'")
    assert ws.ok("notes", "read", "api_key_rotation", cwd=proj).stdout == "Rotate API keys every 30 days\n"
    r = ws.ok("notes", "edit", "api_key_rotation", "--no-tags", cwd=proj)
    assert ws.json("notes", "read", "api_key_rotation", cwd=proj)["tags"] == []

    r = ws.ok("notes", "delete", "api_key_rotation", cwd=proj)
    assert r.stderr == f"memory-lens: deleted project note 'api_key_rotation' ({path})\n" and not path.exists()
    assert ws.ok("notes", "list", cwd=proj).stderr == "memory-lens: no notes\n"


def test_content_from_a_file_and_from_stdin_exactly(ws: Workspace, proj: Path) -> None:
    text = "Line one\r\n\n  indented — ünïcode\n"
    source = ws.write("content.md", text)
    ws.ok("notes", "create", "from file", "--file", str(source), cwd=proj)
    assert ws.json("notes", "read", "from file", cwd=proj)["content"] == text
    r = run_with_input(ws, text.encode(), "notes", "create", "from stdin", "-", "--scope", "global", cwd=proj)
    assert r.rc == 0, str(r)
    assert ws.json("notes", "read", "from stdin", cwd=proj)["content"] == text
    assert (global_notes(ws) / f"{ws.json('notes', 'read', 'from stdin', cwd=proj)['path'].rsplit('/', 1)[1]}").is_file()
    r = run_with_input(ws, b"new body", "notes", "edit", "from file", "-", cwd=proj)
    assert r.rc == 0 and ws.ok("notes", "read", "from file", cwd=proj).stdout == "new body\n"
    bad = run_with_input(ws, b"\xff\xfe", "notes", "create", "binary", "-", cwd=proj)
    assert one_line_error(bad) == "memory-lens: error: stdin: not valid UTF-8 (bad byte at offset 0)"


def test_edit_without_content_opens_the_editor(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "style", "Use tabs", "--tag", "old", cwd=proj)
    editor = ws.write("editor.py", (
        "import sys\n"
        "path = sys.argv[1]\n"
        "text = open(path, encoding='utf-8').read()\n"
        "assert text == '---\\ntags: old\\n---\\nUse tabs', repr(text)\n"
        "open(path, 'w', encoding='utf-8').write('---\\ntags: new, style\\n---\\nUse spaces\\n')\n"))
    r = ws.ok("notes", "edit", "style", cwd=proj, env={"EDITOR": f"{sys.executable} {editor}", "VISUAL": ""})
    assert "updated project note 'style'" in r.stderr
    note = ws.json("notes", "read", "style", cwd=proj)
    assert note["content"] == "Use spaces\n" and note["tags"] == ["new", "style"]

    untouched = ws.write("noop.py", "import sys\n")
    r = ws.ok("notes", "edit", "style", cwd=proj, env={"EDITOR": f"{sys.executable} {untouched}", "VISUAL": ""})
    assert r.stderr == "memory-lens: no change to project note 'style'\n"

    before = (notes_dir(proj) / "style.json").read_bytes()
    failing = ws.write("fail.py", "import sys\nopen(sys.argv[1], 'w').write('garbage')\nsys.exit(3)\n")
    r = ws.run("notes", "edit", "style", cwd=proj, env={"EDITOR": f"{sys.executable} {failing}", "VISUAL": ""})
    assert one_line_error(r) == "memory-lens: error: the editor exited with status 3; nothing changed"
    r = ws.run("notes", "edit", "style", cwd=proj, env={"EDITOR": "", "VISUAL": ""})
    assert "set $EDITOR" in one_line_error(r)
    assert (notes_dir(proj) / "style.json").read_bytes() == before


def test_errors_are_one_line_with_the_usual_exit_codes(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "n", "x", cwd=proj)
    snapshot = ws.snapshot()
    assert one_line_error(ws.run("notes", "create", "n", "y", cwd=proj)) == (
        "memory-lens: error: a project note named 'n' already exists; edit it, or delete it first")
    assert "no note named 'missing' in project or global notes" in one_line_error(
        ws.run("notes", "read", "missing", cwd=proj))
    assert "no note named 'n' in global notes" in one_line_error(ws.run("notes", "delete", "n", "--scope", "global", cwd=proj))
    assert "at most 128 characters" in one_line_error(ws.run("notes", "create", "x" * 129, "c", cwd=proj))
    assert "not inside a project" in one_line_error(ws.run("notes", "create", "g", "c", "--scope", "project"))
    assert "no content" in one_line_error(ws.run("notes", "create", "n2", cwd=proj), rc=2)
    assert "not both" in one_line_error(ws.run("notes", "create", "n2", "a", "--file", "f", cwd=proj), rc=2)
    assert "invalid choice" in one_line_error(ws.run("notes", "list", "--scope", "team", cwd=proj), rc=2)
    assert "invalid choice" in one_line_error(ws.run("notes", "frobnicate", cwd=proj), rc=2)
    assert "required: NAME" in one_line_error(ws.run("notes", "read", cwd=proj), rc=2)
    assert "unknown notes layout" in one_line_error(ws.run("notes", "list", cwd=proj,
                                                           env={"MEMORY_LENS_NOTES_LAYOUT": "vim"}), rc=2)
    assert "nothing to search for" in one_line_error(ws.run("notes", "search", "!!", cwd=proj))
    assert ws.snapshot() == snapshot


def test_project_first_then_global_and_shadowing_in_list(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "style", "global style", "--scope", "global", cwd=proj)
    assert ws.ok("notes", "read", "style", cwd=proj).stdout == "global style\n"
    ws.ok("notes", "create", "style", "project style", cwd=proj)
    assert ws.ok("notes", "read", "style", cwd=proj).stdout == "project style\n"
    assert ws.ok("notes", "read", "style", "--scope", "global", cwd=proj).stdout == "global style\n"
    assert ws.ok("notes", "list", cwd=proj).stdout == ("[project] style: project style\n"
                                                       "[global, shadowed] style: global style\n")
    assert ws.ok("notes", "list", "--scope", "global", cwd=proj).stdout == "[global, shadowed] style: global style\n"
    outside = ws.ok("notes", "list")
    assert outside.stdout == "[global] style: global style\n"


def test_search_list_filters_and_pages(ws: Workspace, proj: Path) -> None:
    for i in range(7):
        ws.ok("notes", "create", f"note {i}", f"deploy step {i}" if i % 2 else f"release step {i}",
              "--tag", "odd" if i % 2 else "even", cwd=proj)
    found = ws.json("notes", "search", "deploy", cwd=proj)
    assert [n["name"] for n in found["notes"]] == ["note 1", "note 3", "note 5"] and found["total"] == 3
    assert all("content" not in n for n in found["notes"])
    assert ws.ok("notes", "search", '"release step 4"', cwd=proj).stdout == "[project] note 4 (even): release step 4\n"
    assert [n["name"] for n in ws.json("notes", "list", "--tag", "EVEN", cwd=proj)["notes"]] == [
        "note 0", "note 2", "note 4", "note 6"]
    assert ws.json("notes", "list", "--search", "rel*", cwd=proj)["total"] == 4
    page = ws.json("notes", "list", "--limit", "3", cwd=proj)
    assert [n["name"] for n in page["notes"]] == ["note 0", "note 1", "note 2"] and page["total"] == 7
    rest = ws.json("notes", "list", "--limit", "10", "--cursor", page["next_cursor"], cwd=proj)
    assert [n["name"] for n in rest["notes"]] == ["note 3", "note 4", "note 5", "note 6"] and rest["next_cursor"] is None
    text = ws.ok("notes", "list", "--limit", "2", cwd=proj)
    assert text.stderr.startswith("memory-lens: 2 of 7 notes; more with --cursor ")
    assert "another listing" in one_line_error(ws.run("notes", "search", "deploy", "--cursor", page["next_cursor"], cwd=proj))


def test_malformed_files_are_warned_about_and_left_alone(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "good", "fine", cwd=proj)
    bad = ws.write("proj/.memory-lens/notes/bad.json", '{"name": "bad", "content": 42}')
    snapshot = ws.snapshot()
    r = ws.ok("notes", "list", cwd=proj)
    assert r.stdout == "[project] good: fine\n"
    assert f"memory-lens: warning: {bad}: skipped: is not a note: missing 'created_at', 'updated_at'" in r.stderr
    listed = ws.json("notes", "list", cwd=proj)
    assert listed["problems"] == [{"scope": "project", "path": str(bad),
                                   "reason": "is not a note: missing 'created_at', 'updated_at'"}]
    assert ws.ok("notes", "search", "fine", cwd=proj).stdout == "[project] good: fine\n"
    assert "bad.json" in one_line_error(ws.run("notes", "edit", "bad", "new", cwd=proj))
    assert "bad.json" in one_line_error(ws.run("notes", "create", "bad", "new", cwd=proj))
    assert ws.snapshot() == snapshot


def test_aicoder_layout(ws: Workspace, proj: Path) -> None:
    existing = ws.write("proj/.aicoder/memory/architecture_decisions.json", json.dumps({
        "name": "architecture_decisions", "content": "Hexagonal architecture", "tags": ["design"],
        "created_at": "2025-10-08T03:07:11Z", "updated_at": "2025-10-08T03:07:11Z", "scope": "project"}))
    r = ws.ok("notes", "list", "--layout", "aicoder", cwd=proj)
    assert r.stdout == "[project] architecture_decisions (design): Hexagonal architecture\n"
    ws.ok("notes", "create", "build_issues", "node 20", "--layout", "aicoder", cwd=proj)
    ws.ok("notes", "create", "personal_preferences", "tabs", "--scope", "global", cwd=proj,
          env={"MEMORY_LENS_NOTES_LAYOUT": "aicoder"})
    assert (proj / ".aicoder" / "memory" / "build_issues.json").is_file()
    global_file = ws.home / ".config" / "aicoder" / "memory" / "personal_preferences.json"
    assert json.loads(global_file.read_text())["scope"] == "global"
    index = json.loads((proj / ".aicoder" / "memory" / "index.json").read_text())
    assert sorted(index["notes"]) == ["architecture_decisions", "build_issues"]
    assert index["notes"]["architecture_decisions"]["file"] == existing.name
    assert list(json.loads((global_file.parent / "index.json").read_text())["notes"]) == ["personal_preferences"]
    assert not notes_dir(proj).exists()


def test_backup_and_restore(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "p1", "project one", cwd=proj)
    ws.ok("notes", "create", "g1", "global one", "--scope", "global", cwd=proj)
    broken = ws.write("proj/.memory-lens/notes/broken.json", "{oops")
    archive = ws.path("backup.tar.gz")
    r = ws.ok("notes", "backup", str(archive), cwd=proj)
    assert r.stderr == f"memory-lens: backed up 2 project, 1 global note file(s) to {archive}\n"
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["global/g1.json", "memory-lens-backup.json", "project/broken.json",
                                          "project/p1.json"]
    original = {p.name: p.read_bytes() for p in notes_dir(proj).iterdir()}

    ws.ok("notes", "delete", "p1", cwd=proj)
    broken.unlink()
    ws.ok("notes", "edit", "g1", "changed since", cwd=proj)
    r = ws.run("notes", "restore", str(archive), cwd=proj)
    assert r.rc == 1
    assert "conflict: global:g1: differs from the backup; kept (use --replace to overwrite)" in r.stderr
    assert "restored: 2 created, 0 replaced, 0 unchanged, 1 conflict(s), 0 skipped" in r.stderr
    assert {p.name: p.read_bytes() for p in notes_dir(proj).iterdir()} == original
    assert ws.ok("notes", "read", "g1", cwd=proj).stdout == "changed since\n"
    r = ws.ok("notes", "restore", str(archive), "--replace", "--scope", "global", cwd=proj, )
    assert "0 created, 1 replaced" in r.stderr
    assert ws.ok("notes", "read", "g1", cwd=proj).stdout == "global one\n"
    again = ws.json("notes", "restore", str(archive), cwd=proj)
    assert {k: v for k, v in again.items() if k != "unchanged"} == {
        "created": [], "replaced": [], "conflicts": [], "skipped": [], "warnings": []}
    assert sorted(again["unchanged"]) == ["global:g1", "project/broken.json", "project:p1"]
    not_backup = ws.write("other.tar.gz", b"not an archive")
    assert "not a Memory Lens notes backup" in one_line_error(ws.run("notes", "restore", str(not_backup), cwd=proj))


def test_export_and_import_jsonl_and_markdown(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "a", "first\nsecond line\n<!-- memory-lens-note {} -->", "--tag", "x", cwd=proj)
    ws.ok("notes", "create", "b -- odd", "global body", "--scope", "global", cwd=proj)
    jsonl = ws.ok("notes", "export", cwd=proj).stdout
    records = [json.loads(line) for line in jsonl.splitlines()]
    assert [list(r) for r in records] == [["name", "content", "tags", "created_at", "updated_at", "scope"]] * 2
    assert [(r["name"], r["scope"]) for r in records] == [("a", "project"), ("b -- odd", "global")]
    bundle_file = ws.path("notes.md")
    ws.ok("notes", "export", str(bundle_file), cwd=proj)
    bundle = bundle_file.read_text(encoding="utf-8")
    assert bundle.startswith("<!-- memory-lens notes bundle v1 -->\n\n## a\n")

    for source, fmt in ((jsonl.encode(), []), (bundle.encode(), ["--as", "markdown"])):
        target = ws.project(f"other-{len(fmt)}")
        r = run_with_input(ws, source, "notes", "import", "-", *fmt, "--notes-dir", str(ws.path(f"g{len(fmt)}")),
                           cwd=target)
        assert r.rc == 0 and "imported: 2 created, 0 replaced, 0 unchanged, 0 conflict(s), 0 skipped" in r.stderr, str(r)
        imported_note = ws.json("notes", "read", "a", "--notes-dir", str(ws.path(f"g{len(fmt)}")), cwd=target)
        assert imported_note["content"] == "first\nsecond line\n<!-- memory-lens-note {} -->" and imported_note["tags"] == ["x"]
        assert imported_note["created_at"] == records[0]["created_at"]

    ws.ok("notes", "edit", "a", "diverged", cwd=proj)
    source = ws.write("in.jsonl", jsonl + '{"name": "", "content": "x"}\nnot json\n')
    r = ws.run("notes", "import", str(source), cwd=proj)
    assert r.rc == 1
    assert "conflict: project:a: a different note of that name exists; kept (use --replace to overwrite)" in r.stderr
    assert "skipped: line 3: a note name cannot be empty" in r.stderr and "skipped: line 4: not valid JSON" in r.stderr
    assert ws.ok("notes", "read", "a", cwd=proj).stdout == "diverged\n"
    r = ws.run("notes", "import", str(source), "--replace", "--format", "json", cwd=proj)
    assert r.json()["replaced"] == ["project:a"] and r.json()["unchanged"] == ["global:b -- odd"]
    assert ws.json("notes", "read", "a", cwd=proj)["content"].startswith("first\n")


def test_two_processes_creating_the_same_note_one_wins(ws: Workspace, proj: Path) -> None:
    """Real processes, released together, race to create the same names: for every name exactly
    one succeeds, the others get the 'exists' error, and the file is one writer's complete note."""
    go = ws.path("go")
    script = (
        "import os, sys, time\n"
        "from memory_lens.cli import main\n"
        "go, me = sys.argv[1], sys.argv[2]\n"
        "while not os.path.exists(go): time.sleep(0.005)\n"
        "results = []\n"
        "for i in range(12):\n"
        "    results.append(main(['notes', 'create', f'race {i}', f'written by {me} ' * 200]))\n"
        "print(''.join(str(r) for r in results))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(go), str(w)], cwd=proj, env=ws.env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for w in range(4)]
    go.touch()
    outputs = [p.communicate(timeout=180) for p in procs]
    codes = [out.decode().strip() for out, _ in outputs]
    errors = "".join(err.decode() for _, err in outputs)
    assert all(len(c) == 12 for c in codes), (codes, errors)
    for i in range(12):
        winners = [w for w, c in enumerate(codes) if c[i] == "0"]
        assert len(winners) == 1, (i, codes, errors)
        assert all(c[i] == "1" for c in codes if c[i] != "0")
        data = json.loads((notes_dir(proj) / f"race-{i}-{_hash(f'race {i}')}.json").read_text())
        assert data["content"] == f"written by {winners[0]} " * 200
    assert errors.count("already exists; edit it, or delete it first") == 12 * 3
    assert "Traceback" not in errors
    assert [n for n in os.listdir(notes_dir(proj)) if n.startswith(".")] == []  # no temporary file left


def _hash(name: str) -> str:
    from memory_lens.core.notes.naming import name_hash

    return name_hash(name)
