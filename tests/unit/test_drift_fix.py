"""The drift fix (core/drift_fix.py): which file becomes the source and how, the settings edit of
Gemini CLI's `context.fileName`, and the write itself on built directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_lens.core.drift_fix import IMPORT, SETTING, TRIM, apply_drift_fix, plan_drift_fix
from memory_lens.core.gemini_settings import with_context_filename
from memory_lens.core.similar import sibling_agent_files
from memory_lens.core.writer import MemoryFileError

SHARED = "".join(f"- Shared rule number {n}: keep the build green\n" for n in range(8))
TRUSTED = {"GEMINI_CLI_TRUST_WORKSPACE": "true"}


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMORY_LENS_LOCK_DIR", str(tmp_path / "locks"))
    (tmp_path / "p" / ".git").mkdir(parents=True)
    (tmp_path / "p" / "AGENTS.md").write_text("# Rules\n" + SHARED + "- Codex only\n")
    return tmp_path / "p"


def test_with_context_filename_puts_the_name_first_and_keeps_every_other_key() -> None:
    text = '{"ui": {"theme": "dark"}, "context": {"fileName": "CONTEXT.md", "importFormat": "flat"}}'
    assert json.loads(with_context_filename(text, "AGENTS.md", ("GEMINI.md",)) or "") == {
        "ui": {"theme": "dark"}, "context": {"fileName": ["AGENTS.md", "CONTEXT.md"], "importFormat": "flat"}}
    assert json.loads(with_context_filename("", "AGENTS.md", ("X.md", "GEMINI.md")) or "") == {
        "context": {"fileName": ["AGENTS.md", "X.md", "GEMINI.md"]}}
    assert with_context_filename('{"context": {"fileName": ["AGENTS.md"]}}', "AGENTS.md", ()) is None


@pytest.mark.parametrize("text, why", [
    ('{"a": 1 // no\n}', "holds comments"), ("{nope", "is not valid JSON"), ("[1]", "is not a JSON object"),
    ('{"context": 3}', "is not a JSON object"), ('{"context": {"fileName": 3}}', "context.fileName must be")])
def test_with_context_filename_refuses_what_it_would_break(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        with_context_filename(text, "AGENTS.md", ())


def test_copilot_instructions_are_a_sibling_of_the_agents_files_of_their_directory(proj: Path) -> None:
    copilot = proj / ".github" / "copilot-instructions.md"
    copilot.parent.mkdir()
    copilot.write_text(SHARED)
    assert sibling_agent_files(proj / "AGENTS.md") == [copilot]
    assert sibling_agent_files(copilot) == [proj / "AGENTS.md"]


def test_plan_picks_the_copy_and_the_way(proj: Path) -> None:
    agents, claude, gemini = proj / "AGENTS.md", proj / "CLAUDE.md", proj / "GEMINI.md"
    copilot = proj / ".github" / "copilot-instructions.md"
    assert plan_drift_fix(agents, claude, {}) is None  # Codex follows no imports
    assert (plan_drift_fix(claude, agents, {}).kind, plan_drift_fix(claude, agents, {}).copy) == (IMPORT, claude)
    assert plan_drift_fix(gemini, agents, {}).kind == IMPORT  # an untrusted folder: settings not read
    for path, other in ((gemini, agents), (agents, gemini)):
        fix = plan_drift_fix(path, other, TRUSTED)
        assert (fix.kind, fix.copy, fix.source, fix.settings_file) == (
            SETTING, gemini, agents, proj / ".gemini" / "settings.json")
    assert (plan_drift_fix(agents, copilot, {}).kind, plan_drift_fix(agents, copilot, {}).copy) == (TRIM, copilot)
    assert plan_drift_fix(copilot, claude, {}) is None


def test_setting_fix_writes_the_settings_then_keeps_the_copy_own_lines(proj: Path) -> None:
    gemini = proj / "GEMINI.md"
    gemini.write_text("# Rules\n" + SHARED + "- Gemini only\n")
    fix = plan_drift_fix(gemini, proj / "AGENTS.md", TRUSTED)
    apply_drift_fix(fix, environ={})
    assert json.loads(fix.settings_file.read_text()) == {"context": {"fileName": ["AGENTS.md", "GEMINI.md"]}}
    assert gemini.read_text() == "- Gemini only\n"
    with pytest.raises(MemoryFileError, match="no longer drifts"):
        apply_drift_fix(fix, environ={})


def test_trim_fix_deletes_a_copy_with_no_line_of_its_own(proj: Path) -> None:
    copilot = proj / ".github" / "copilot-instructions.md"
    copilot.parent.mkdir()
    copilot.write_text(SHARED)
    assert "removed" in apply_drift_fix(plan_drift_fix(copilot, proj / "AGENTS.md", {}))
    assert not copilot.exists()
