"""The secrets guard in the core (core/secrets.py): what is found and where, what is not, the
core write paths that refuse it (entries, Wave bullets, notes create/edit/import), and the
`secret` finding of `check`. The samples are built at test time (tests/secret_samples.py)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from memory_lens.core.agents.wave import save_bullet
from memory_lens.core.checks import SECRET, SEVERITY_OF, Severity, check_file
from memory_lens.core.entries import save_entry
from memory_lens.core.notes import Layout, NotesSettings, NotesStore
from memory_lens.core.notes.transfer import import_notes
from memory_lens.core.secrets import SecretError, find_secrets
from memory_lens.core.settings import Settings
from secret_samples import LOOK_ALIKES, MISSES, SECRETS

REPO = Path(__file__).resolve().parents[2]


def long_words(text: str) -> list[str]:
    """The parts of TEXT a message must never repeat: its words of 12 or more characters."""
    return [w for w in re.split(r"[\s\"'`=:@]+", text) if len(w) >= 12]


def test_the_suite_has_forty_samples_of_each_and_covers_every_detector() -> None:
    from memory_lens.core.secrets import KIND_NAMES, _detectors

    assert len(SECRETS) >= 40 and len(LOOK_ALIKES) >= 40
    kinds = {s.kind for text in SECRETS.values() for s in find_secrets(text)}
    assert kinds == {KIND_NAMES.get(p.secret_type, p.secret_type) for p in _detectors()}


@pytest.mark.parametrize("name", SECRETS)
def test_each_secret_is_found_with_its_position(name: str) -> None:
    text = SECRETS[name]
    found = find_secrets(text)
    assert len(found) == 1, found
    line = text.split("\n")[found[0].line - 1]
    assert 1 <= found[0].column <= len(line)
    assert found[0].line == (2 if name == "a key on the second line" else 1)


def test_the_position_is_the_secret_s_column() -> None:
    text = SECRETS["aws access key id"]
    (found,) = find_secrets(text)
    assert (found.kind, found.line, found.column) == ("AWS Access Key", 1, text.index("AKIA") + 1)
    err = SecretError(found)
    assert str(err) == f"looks like an AWS Access Key at column {found.column}; not saved"


@pytest.mark.parametrize("before", ["note\n", "café \u2003 naïve\n", "\x1c\x1f\x0b\n", "a" * 20 + "\x1fb\n"])
def test_secrets_are_found_the_same_in_ascii_and_other_text(before: str) -> None:
    """ASCII text is searched for long words as bytes, other text word by word: the same finds."""
    for name, text in SECRETS.items():
        assert [(s.kind, s.line - 1, s.column) for s in find_secrets(before + text)] == [
            (s.kind, s.line, s.column) for s in find_secrets(text)], name


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_look_alikes_are_not_secrets(name: str) -> None:
    assert find_secrets(LOOK_ALIKES[name]) == []


def test_known_misses_are_still_missed() -> None:
    """docs/security.md counts these; a detector that starts finding them changes the count."""
    assert {name: find_secrets(text) for name, text in MISSES.items()} == dict.fromkeys(MISSES, [])


def test_one_finding_per_line_in_line_order() -> None:
    text = "\n".join([LOOK_ALIKES["uuid"], SECRETS["stripe live key"], SECRETS["github personal token"] + " "
                      + SECRETS["slack bot token"], "", SECRETS["rsa private key"]])
    assert [(s.line, s.kind) for s in find_secrets(text)] == [
        (2, "Stripe Access Key"), (3, "GitHub Token"), (5, "Private Key")]


def test_this_repository_s_docs_and_examples_hold_no_secret() -> None:
    found = {}
    for path in [*REPO.glob("*.md"), *REPO.glob("docs/**/*.md"), *REPO.glob("examples/**/*"),
                 *REPO.glob("client-vscode/*.md")]:
        if path.is_file():
            hits = find_secrets(path.read_text(encoding="utf-8", errors="replace"))
            if hits:
                found[str(path.relative_to(REPO))] = hits
    assert found == {}


# The core's write paths -----------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "p" / ".git").mkdir(parents=True)
    return tmp_path / "p"


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(tmp_path / "locks"))
    return Settings(global_dir=tmp_path / "home" / ".gemini")


def test_save_entry_refuses_every_secret_and_writes_nothing(project: Path, settings: Settings) -> None:
    for name, text in SECRETS.items():
        with pytest.raises(SecretError) as err:
            save_entry(text, project, settings)
        message = str(err.value)
        assert message.startswith("looks like ") and message.endswith("; not saved"), message
        assert not any(w in message for w in long_words(text)), (name, message)
    assert os.listdir(project) == [".git"]
    for text in LOOK_ALIKES.values():
        save_entry(text, project, settings)
    saved = save_entry(SECRETS["stripe live key"], project, settings, allow_secret=True)
    assert saved.added and SECRETS["stripe live key"] in (project / "GEMINI.md").read_text()


def test_a_wave_bullet_with_a_secret_is_refused(project: Path, settings: Settings) -> None:
    with pytest.raises(SecretError, match="looks like a GitHub Token at column 11; not saved"):
        save_bullet(SECRETS["github personal token"], project, settings)
    assert not (project / "AGENTS.md").exists()
    assert save_bullet(SECRETS["github personal token"], project, settings, allow_secret=True).added


def _store(project: Path, tmp_path: Path) -> NotesStore:
    return NotesStore(NotesSettings(Layout("memory-lens"), tmp_path / "global-notes"), project,
                      index_dir=tmp_path / "index")


def test_notes_create_and_edit_refuse_secrets(project: Path, settings: Settings, tmp_path: Path) -> None:
    store = _store(project, tmp_path)
    try:
        body = "Deploy notes\n\n" + SECRETS["gitlab personal token"]
        with pytest.raises(SecretError, match="^the note looks like a GitLab Token at line 3, column 9; not saved$"):
            store.create("deploy", body)
        assert store.list().total == 0
        store.create("deploy", "Deploy notes")
        with pytest.raises(SecretError):
            store.edit("deploy", body)
        assert store.read("deploy").note.content == "Deploy notes"
        store.edit("deploy", body, allow_secret=True)
        assert store.read("deploy").note.content == body
        store.create("other", body, allow_secret=True)
    finally:
        store.close()


def test_notes_import_skips_each_note_holding_a_secret(project: Path, settings: Settings, tmp_path: Path) -> None:
    store = _store(project, tmp_path)
    records = [{"name": f"secret {i}", "content": text} for i, text in enumerate(SECRETS.values())]
    records += [{"name": f"plain {i}", "content": text} for i, text in enumerate(LOOK_ALIKES.values())]
    jsonl = "\n".join(json.dumps(r) for r in records)
    try:
        report = import_notes(store, jsonl)
        assert len(report.skipped) == len(SECRETS) and len(report.created) == len(LOOK_ALIKES)
        assert all("its content looks like" in s and "; not saved" in s for s in report.skipped)
        assert not any(w in "\n".join(report.skipped) for t in SECRETS.values() for w in long_words(t))
        assert len(import_notes(store, jsonl, allow_secret=True).created) == len(SECRETS)
    finally:
        store.close()


# `check` -------------------------------------------------------------------------------------------


def test_check_flags_each_secret_on_its_line_as_an_error(project: Path, settings: Settings) -> None:
    lines = [f"- {text}" for text in SECRETS.values() if "\n" not in text]
    lines += [f"- {text}" for text in LOOK_ALIKES.values()]
    (project / "GEMINI.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    secrets = [f for f in check_file(project / "GEMINI.md", settings) if f.code == SECRET]
    assert SEVERITY_OF[SECRET] is Severity.ERROR
    assert [f.line for f in secrets] == list(range(1, len(SECRETS)))
    for f in secrets:
        assert f.message.startswith("looks like ") and "remove the entry and revoke the secret" in f.message
        assert not any(w in f.message for w in long_words(lines[f.line - 1]))
