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

