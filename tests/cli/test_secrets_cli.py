"""The secrets guard on the command line: `add` and `notes create|edit|import` refuse text holding a
secret (one line naming the kind and position, never the secret; nothing written) unless
`--allow-secret`; `check` reports `secret` findings (error, exit 1). Samples: tests/secret_samples.py."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import pytest

from secret_samples import LOOK_ALIKES, SECRETS, never_echoed

if TYPE_CHECKING:
    from sandbox import Workspace

KEY = SECRETS["aws access key id"]  # "Deploy with access key AKIA... in prod": the key at column 24
KEY_ONLY = KEY.split()[4]  # the key itself


@pytest.mark.parametrize("name", ["aws access key id", "rsa private key", "basic auth url", "slack webhook",
                                  "password keyword", "high entropy, code span"])
def test_add_refuses_a_secret_and_writes_nothing(ws: Workspace, name: str) -> None:
    proj = ws.project("p")
    before = ws.snapshot()
    result = ws.run("add", SECRETS[name], cwd=proj)
    assert result.rc == 1 and result.stdout == ""
    assert re.fullmatch(r"memory-lens: error: looks like an? .+ at column \d+; not saved \(if it is no secret, "
                        r"add --allow-secret to save it anyway\)\n", result.stderr), result.stderr
    never_echoed(result.stderr)
    assert ws.snapshot() == before


def test_add_names_the_kind_and_column(ws: Workspace) -> None:
    proj = ws.project("p")
    result = ws.run("add", KEY, cwd=proj)
    assert result.stderr.startswith("memory-lens: error: looks like an AWS Access Key at column 24; not saved")


def test_allow_secret_saves_it_and_check_then_reports_it(ws: Workspace) -> None:
    proj = ws.project("p")
    ws.ok("add", "--allow-secret", KEY, cwd=proj)
    assert KEY in ws.read("p/GEMINI.md")
    result = ws.run("check", cwd=proj)
    assert result.rc == 1
    assert result.stdout == (f"{proj / 'GEMINI.md'}:2:26: error: looks like an AWS Access Key at column 26: every agent "
                             "that loads this file sends it to its model, and the file may be committed; remove the "
                             "entry and revoke the secret [secret]\n")


def test_add_for_wave_refuses_too(ws: Workspace) -> None:
    proj = ws.project("p")
    result = ws.run("add", "--agent", "wave", SECRETS["github personal token"], cwd=proj)
    assert result.rc == 1 and "looks like a GitHub Token at column 11; not saved" in result.stderr
    assert not (proj / "AGENTS.md").exists()


def test_check_flags_every_sample_in_a_memory_file_and_no_look_alike(ws: Workspace) -> None:
    proj = ws.project("p")
    samples = [t for t in SECRETS.values() if "\n" not in t]
    ws.write("p/GEMINI.md", "".join(f"- {t}\n" for t in samples))
    ws.write("p/sub/GEMINI.md", "".join(f"- {t}\n" for t in LOOK_ALIKES.values()))
    result = ws.run("check", "--format", "json", cwd=proj)
    assert result.rc == 1
    secrets = [f for f in result.json() if f["code"] == "secret"]
    assert [(f["path"], f["line"], f["severity"]) for f in secrets] == [
        (str(proj / "GEMINI.md"), n, "error") for n in range(1, len(samples) + 1)]
    never_echoed(result.stdout)
    assert "secret (error)" in ws.ok("check", "--help").stdout


def test_notes_create_edit_and_import_refuse_secrets(ws: Workspace) -> None:
    proj = ws.project("p")
    result = ws.run("notes", "create", "deploy", "Deploy notes\n" + KEY, cwd=proj)
    assert result.rc == 1
    assert result.stderr == ("memory-lens: error: the note looks like an AWS Access Key at line 2, column 24; not saved "
                             "(if it is no secret, add --allow-secret to save it anyway)\n")
    ws.ok("notes", "create", "deploy", "Deploy notes", cwd=proj)
    result = ws.run("notes", "edit", "deploy", SECRETS["stripe live key"], cwd=proj)
    assert result.rc == 1 and "looks like a Stripe Access Key at column 8; not saved" in result.stderr
    ws.ok("notes", "edit", "--allow-secret", "deploy", SECRETS["stripe live key"], cwd=proj)

    jsonl = "\n".join(json.dumps({"name": name, "content": text}) for name, text in SECRETS.items())
    ws.write("notes.jsonl", jsonl)
    report = ws.run("notes", "import", str(ws.path("notes.jsonl")), "--format", "json", cwd=proj)
    skipped = report.json()["skipped"]
    assert len(skipped) == len(SECRETS) and all("content looks like" in s for s in skipped)
    never_echoed(report.stdout + report.stderr)
    assert ws.json("notes", "import", "--allow-secret", str(ws.path("notes.jsonl")), cwd=proj)["created"]


def test_check_reports_a_secret_in_a_project_note(ws: Workspace) -> None:
    proj = ws.project("p")
    ws.ok("notes", "create", "clean", "Deploy with the script", cwd=proj)
    assert ws.run("check", cwd=proj).rc == 0
    ws.ok("notes", "create", "--allow-secret", "deploy", "Deploy notes\n\n" + KEY, cwd=proj)
    note = proj / ".memory-lens" / "notes" / "deploy.json"
    # where the editor shows it: the note file's line and column, not the line of the note's content
    at = next((n, line.index(KEY_ONLY) + 1) for n, line in enumerate(note.read_text().splitlines(), 1)
              if KEY_ONLY in line)
    for args in ((), (str(proj),)):
        result = ws.run("check", *args, cwd=proj)
        assert result.rc == 1
        assert result.stdout == (f"{note}:{at[0]}:{at[1]}: error: looks like an AWS Access Key at column {at[1]}: "
                                 "agents read this note; remove the secret from it and revoke the secret [secret]\n")
        never_echoed(result.stdout + result.stderr)
