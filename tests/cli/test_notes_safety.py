"""`memory-lens notes ...` where a name, an archive or a link could mislead: a plain name whose
file another note holds, names that only look like another, note files linking out of their
area, backup archive formats and overwrites, the hint outside a project, and a restore of
thousands of notes."""

from __future__ import annotations

import json
import tarfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sandbox import Result, Workspace


@pytest.fixture
def proj(ws: Workspace) -> Path:
    return ws.project("proj")


def notes_dir(proj: Path) -> Path:
    return proj / ".memory-lens" / "notes"


def one_line_error(result: Result, rc: int = 1) -> str:
    assert result.rc == rc, str(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, str(result)
    return lines[0]


def test_a_plain_name_whose_file_another_note_holds_is_usable(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "Build Issues", "npm ci fails", cwd=proj)
    assert (notes_dir(proj) / "build-issues-d3533b69.json").is_file()
    ws.ok("notes", "create", "build-issues-d3533b69", "the other one", cwd=proj)
    assert ws.ok("notes", "read", "build-issues-d3533b69", cwd=proj).stdout == "the other one\n"
    assert ws.ok("notes", "read", "Build Issues", cwd=proj).stdout == "npm ci fails\n"
    names = [n["name"] for n in ws.json("notes", "list", cwd=proj)["notes"]]
    assert sorted(names) == ["Build Issues", "build-issues-d3533b69"]
    ws.ok("notes", "edit", "build-issues-d3533b69", "edited", cwd=proj)
    ws.ok("notes", "delete", "build-issues-d3533b69", cwd=proj)
    assert ws.ok("notes", "read", "Build Issues", cwd=proj).stdout == "npm ci fails\n"


@pytest.mark.parametrize("name", ["notes\u200b", "\u202eevil", "a\u2066b", "x\ufeff", "\u3164"])
def test_a_name_with_invisible_or_bidi_characters_is_refused(ws: Workspace, proj: Path, name: str) -> None:
    error = one_line_error(ws.run("notes", "create", name, "x", cwd=proj))
    assert "invisible or bidirectional control characters" in error and "U+" in error, error
    assert not notes_dir(proj).exists()


def test_a_name_that_looks_like_another_is_created_with_a_warning(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "Notes", "latin", cwd=proj)
    ws.ok("notes", "create", "l0g", "digits", "--scope", "global", cwd=proj)
    r = ws.ok("notes", "create", "N\u043etes", "cyrillic o", cwd=proj)
    assert "warning: the note name 'N\u043etes' looks like that of the project note 'Notes'" in r.stderr, r.stderr
    assert "U+043E" in r.stderr
    r = ws.ok("notes", "create", "log", "plain", cwd=proj)
    assert "looks like that of the global note 'l0g'" in r.stderr, r.stderr
    r = ws.ok("notes", "create", "notes", "only the case differs from 'Notes': no warning about it", cwd=proj)
    assert "(U+006F where it has U+043E)" in r.stderr and "'Notes'" not in r.stderr, r.stderr
    assert ws.ok("notes", "read", "N\u043etes", cwd=proj).stdout == "cyrillic o\n"


def _note_text(name: str, content: str) -> str:
    return json.dumps({"name": name, "content": content, "tags": [], "created_at": "2025-10-08T03:07:11Z",
                       "updated_at": "2025-10-08T03:07:11Z"})


def test_a_note_file_linking_out_of_its_area_is_not_read(ws: Workspace, proj: Path) -> None:
    global_dir = ws.config_dir / "memory-lens" / "notes"
    global_dir.mkdir(parents=True)
    (global_dir.parent / "outside.json").write_text(_note_text("link", "SECRET-ONE"), encoding="utf-8")
    (global_dir / "link.json").symlink_to("../outside.json")
    ws.write("elsewhere/key.json", _note_text("key", "SECRET-TWO"))
    notes_dir(proj).mkdir(parents=True)
    (notes_dir(proj) / "key.json").symlink_to(ws.path("elsewhere/key.json"))
    ws.write("proj/docs/shared.json", _note_text("shared", "inside the project"))
    (notes_dir(proj) / "shared.json").symlink_to("../../docs/shared.json")

    for name, target in (("link", global_dir.parent / "outside.json"), ("key", ws.path("elsewhere/key.json"))):
        error = one_line_error(ws.run("notes", "read", name, cwd=proj))
        assert f"is a link to {target}, outside" in error and "SECRET" not in error, error
    assert ws.ok("notes", "read", "shared", cwd=proj).stdout == "inside the project\n"  # a link inside the project
    listed = ws.run("notes", "list", "--format", "json", cwd=proj)
    assert [n["name"] for n in listed.json()["notes"]] == ["shared"], listed
    assert len(listed.json()["problems"]) == 2 and "SECRET" not in listed.stdout + listed.stderr
    assert ws.json("notes", "search", "SECRET*", cwd=proj)["notes"] == []
    allowed = ws.ok("notes", "read", "key", "--follow-outside-links", cwd=proj)  # the user's own opt-in
    assert allowed.stdout == "SECRET-TWO\n"


def test_project_scope_outside_a_project_names_the_option(ws: Workspace) -> None:
    outside = ws.mkdir("plain")
    error = one_line_error(ws.run("notes", "create", "o2", "x", "--scope", "project", cwd=outside))
    assert "use `--scope global`" in error and "use scope global" not in error, error
    error = one_line_error(ws.run("notes", "list", "--scope", "project", cwd=outside))
    assert "use `--scope global`" in error, error


def test_backup_format_follows_the_name(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "p1", "project one", cwd=proj)
    zipped = ws.path("x.zip")
    ws.ok("notes", "backup", str(zipped), cwd=proj)
    assert zipfile.is_zipfile(zipped)
    with zipfile.ZipFile(zipped) as archive:
        assert sorted(archive.namelist()) == ["memory-lens-backup.json", "project/p1.json"]
    for name in ("x.tar.gz", "x.tgz"):
        ws.ok("notes", "backup", str(ws.path(name)), cwd=proj)
        with tarfile.open(ws.path(name), mode="r:gz") as tar:
            assert "project/p1.json" in tar.getnames()
    error = one_line_error(ws.run("notes", "backup", str(ws.path("x.rar")), cwd=proj))
    assert "x.rar" in error and ".zip" in error and ".tar.gz" in error, error
    assert not ws.path("x.rar").exists()

    ws.ok("notes", "delete", "p1", cwd=proj)
    for name in ("x.zip", "x.tgz"):
        ws.ok("notes", "restore", str(ws.path(name)), cwd=proj)
        assert ws.ok("notes", "read", "p1", cwd=proj).stdout == "project one\n"
        ws.ok("notes", "delete", "p1", cwd=proj)


def test_backup_refuses_to_overwrite_without_force(ws: Workspace, proj: Path) -> None:
    ws.ok("notes", "create", "p1", "project one", cwd=proj)
    archive = ws.write("old.zip", b"an archive kept from before")
    error = one_line_error(ws.run("notes", "backup", str(archive), cwd=proj))
    assert "--force" in error and str(archive) in error, error
    assert archive.read_bytes() == b"an archive kept from before"
    ws.ok("notes", "backup", str(archive), "--force", cwd=proj)
    assert zipfile.is_zipfile(archive)


def test_restore_reads_a_zip_member_as_data_never_as_a_path(ws: Workspace, proj: Path) -> None:
    archive = ws.path("hostile.zip")
    note = {"name": "n", "content": "c", "tags": [], "created_at": "2025-10-08T03:07:11Z",
            "updated_at": "2025-10-08T03:07:11Z", "scope": "project"}
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("memory-lens-backup.json", json.dumps({"format": "memory-lens-notes-backup", "version": 1}))
        z.writestr("project/../../escape.json", json.dumps(note))
        z.writestr("project/n.json", json.dumps(note))
    r = ws.run("notes", "restore", str(archive), cwd=proj)
    assert r.rc == 1 and "skipped: project/../../escape.json: not a note file of the backup" in r.stderr, str(r)
    assert not (proj / ".memory-lens" / "escape.json").exists() and not ws.path("escape.json").exists()
    assert ws.ok("notes", "read", "n", cwd=proj).stdout == "c\n"
    damaged = ws.write("damaged.zip", b"PK\x03\x04 not really")
    assert "not a Memory Lens notes backup" in one_line_error(ws.run("notes", "restore", str(damaged), cwd=proj))



def test_restore_skips_a_tar_member_that_cannot_be_read(ws: Workspace, proj: Path) -> None:
    """A tar member whose data cannot be read (a sparse map promising 100,000 bytes where the
    archive holds a few): reported as skipped, the other notes restored, no traceback."""
    import io

    archive = ws.path("cut.tar")
    stamp = "2025-10-08T03:07:11Z"
    with tarfile.open(archive, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data, sparse in (
                ("memory-lens-backup.json", {"format": "memory-lens-notes-backup", "version": 1}, False),
                ("project/cut.json", {"name": "cut", "content": "c", "tags": [], "scope": "project",
                                      "created_at": stamp, "updated_at": stamp}, True),
                ("project/kept.json", {"name": "kept", "content": "whole", "tags": [], "scope": "project",
                                       "created_at": stamp, "updated_at": stamp}, False)):
            raw = json.dumps(data).encode()
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            if sparse:
                info.pax_headers = {"GNU.sparse.map": "0,100000", "GNU.sparse.size": "100000"}
            tar.addfile(info, io.BytesIO(raw))
    r = ws.run("notes", "restore", str(archive), cwd=proj)
    assert r.rc == 1 and "Traceback" not in r.stderr, str(r)
    assert "skipped: project/cut.json: cannot be read (" in r.stderr, str(r)
    assert ws.ok("notes", "read", "kept", cwd=proj).stdout == "whole\n"
    assert ws.run("notes", "read", "cut", cwd=proj).rc != 0


STRESS_NOTES = 5000


def test_restore_and_import_of_thousands_of_notes_is_exact(ws: Workspace, proj: Path) -> None:
    """A bounded stress test: 5,000 notes (half project, half global, plain and free-form names)
    backed up, restored into another project with the bar on a terminal, and imported into a
    third: every note comes back byte for byte, once. Timings are in benchmarks/."""
    from test_check_progress import ERASE, run_with_terminal_stderr

    stamp = "2025-10-08T03:07:11Z"
    files: dict[str, bytes] = {}
    global_dir = ws.path("g-source")
    for i in range(STRESS_NOTES):
        scope = "project" if i % 2 == 0 else "global"
        name = f"note-{i}" if i % 3 else f"Note {i} — ünïcode"
        note = {"name": name, "content": f"content {i}\nline two", "tags": [f"t{i % 7}"],
                "created_at": stamp, "updated_at": stamp, "scope": scope}
        directory = notes_dir(proj) if scope == "project" else global_dir
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / (f"{name}.json" if i % 3 else f"n{i}-hand-named.json")
        path.write_text(json.dumps(note, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        files[f"{scope}/{path.name}"] = path.read_bytes()
    archive = ws.path("all.tar.gz")
    ws.ok("notes", "backup", str(archive), "--notes-dir", str(global_dir), cwd=proj)
    export = ws.path("all.jsonl")
    ws.ok("notes", "export", str(export), "--notes-dir", str(global_dir), cwd=proj)

    target = ws.project("target")
    status, out, terminal = run_with_terminal_stderr(ws, "notes", "restore", str(archive), "--notes-dir",
                                                     str(ws.path("g-target")), cwd=target)
    assert status == 0, terminal
    assert f"] restored {STRESS_NOTES} of {STRESS_NOTES} archive members{ERASE}" in terminal, terminal[-300:]
    assert terminal.rsplit(ERASE, 1)[1] == (f"memory-lens: restored: {STRESS_NOTES} created, 0 replaced, "
                                            "0 unchanged, 0 conflict(s), 0 skipped\n")
    restored = {f"project/{p.name}": p.read_bytes() for p in notes_dir(target).iterdir()}
    restored.update({f"global/{p.name}": p.read_bytes() for p in ws.path("g-target").iterdir()})
    assert restored == files
    listed = ws.json("notes", "list", "--notes-dir", str(ws.path("g-target")), cwd=target)
    assert listed["total"] == STRESS_NOTES and listed["problems"] == []

    other = ws.project("imported")
    report = ws.json("notes", "import", str(export), "--notes-dir", str(ws.path("g-imported")), cwd=other)
    assert len(report["created"]) == STRESS_NOTES and report["skipped"] == report["conflicts"] == []
    assert ws.ok("notes", "read", "Note 3 — ünïcode", "--notes-dir", str(ws.path("g-imported")),
                 cwd=other).stdout == "content 3\nline two\n"
