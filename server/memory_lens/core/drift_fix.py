"""The fix of a `drift` (core/similar.py): make one of two drifted agents' files the source of the
other, so that each agent still loads the source's text, once. `plan_drift_fix` decides it, for
the language server's quick fix and for `memory-lens check --fix drift` alike; `apply_drift_fix`
writes it with the locked atomic writes of `core/writer.py`.

- IMPORT: a `CLAUDE.md` (or a `GEMINI.md` beside a `CLAUDE.md`, or beside an `AGENTS.md` when
  Gemini CLI would not read the project's settings) becomes `@OTHER` then its own lines
  (`similar.bridge_text`): Claude Code and Gemini CLI follow `@path` imports.
- SETTING: a `GEMINI.md` beside an `AGENTS.md`, Gemini CLI reading the project's
  `.gemini/settings.json` (a trusted folder): `AGENTS.md` goes first into `context.fileName`
  there, then the `GEMINI.md` keeps only the lines `AGENTS.md` lacks (it is deleted when none
  are left; Gemini CLI always reads `GEMINI.md` too).
- TRIM: a `.github/copilot-instructions.md` beside an `AGENTS.md`: Copilot reads both, so the
  copy keeps only its own lines (deleted when none are left).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from memory_lens.core import gemini_settings as gs
from memory_lens.core.discovery import find_project_root
from memory_lens.core.files import read_memory_file
from memory_lens.core.similar import (
    DRIFT_MIN_LINES, DRIFT_SHARE, IMPORTING, bridge_text, distinct_lines, is_copilot_file, own_lines, shown_name,
)
from memory_lens.core.write_policy import project_area
from memory_lens.core.writer import MemoryFileError, delete_file, update_memory_file

IMPORT, SETTING, TRIM = "import", "setting", "trim"


@dataclass(frozen=True)
class DriftFix:
    """What the fix does: KIND to COPY, which then takes its text from SOURCE."""

    kind: str
    copy: Path
    source: Path
    root: Path  # the project root: where `.gemini/settings.json` is, and the write area
    title: str

    @property
    def settings_file(self) -> Path:
        return self.root / gs.GEMINI_DIR / gs.SETTINGS_FILE


def plan_drift_fix(path: Path, other: Path, environ: Mapping[str, str] | None = None) -> DriftFix | None:
    """The fix of the drift of PATH from OTHER (its sibling: `similar.sibling_agent_files`), or
    None when no agent can take one file's text from the other (an `AGENTS.md` copying a
    `CLAUDE.md`: Codex follows no imports)."""
    env = os.environ if environ is None else environ
    root = find_project_root(path.parent.parent if is_copilot_file(path) else path.parent) or path.parent
    names = {path.name, other.name}
    if is_copilot_file(path) or is_copilot_file(other):
        copy, source = (path, other) if is_copilot_file(path) else (other, path)
        if source.name != "AGENTS.md":
            return None
        return DriftFix(TRIM, copy, source, root, f"Make AGENTS.md the source: keep in {shown_name(copy)} "
                                                  "only the lines AGENTS.md lacks")
    if names == {"AGENTS.md", "GEMINI.md"} and _reads_project_settings(root, env):
        copy, source = (path, other) if path.name == "GEMINI.md" else (other, path)
        return DriftFix(SETTING, copy, source, root, "Make AGENTS.md the source: add it to context.fileName in "
                                                     ".gemini/settings.json, keep in GEMINI.md only its own lines")
    if path.name in IMPORTING:
        return DriftFix(IMPORT, path, other, root, f"Make {other.name} the source: import it in {path.name}")
    return None


def _reads_project_settings(root: Path, env: Mapping[str, str]) -> bool:
    """Whether Gemini CLI started in ROOT reads ROOT's `.gemini/settings.json` (`gemini_settings`)."""
    home = gs.gemini_home(env)
    if os.path.realpath(root) == os.path.realpath(home):
        return False
    return gs.workspace_trusted(root, home, gs._raw_user(home / gs.GEMINI_DIR / gs.SETTINGS_FILE), env)


def apply_drift_fix(fix: DriftFix, max_file_bytes: int | None = None,
                    environ: Mapping[str, str] | None = None) -> str:
    """Write FIX while its two files still drift; what was done, in one line. MemoryFileError (one
    line) when a file cannot be written, the settings file is not plain JSON, or the files no
    longer drift."""
    area = project_area(fix.root)
    source = read_memory_file(fix.source, max_file_bytes or area.max_file_bytes)
    if not source.loadable:
        raise MemoryFileError(f"{fix.source}: {source.reason}; not changed")

    def still_drifting(text: str) -> str:
        if drift_message(fix.copy, text, fix.source, source.text) is None:
            raise MemoryFileError(f"{fix.copy} no longer drifts from {fix.source}; not changed")
        return text

    if fix.kind == IMPORT:
        update_memory_file(fix.copy, lambda t: (bridge_text(still_drifting(t), fix.source, source.text), None),
                           create=False, area=area)
        return f"{fix.copy}: now imports {fix.source.name}, followed by its own lines"
    if fix.kind == SETTING:
        still_drifting(read_memory_file(fix.copy, area.max_file_bytes).text or "")
        _add_to_context_filenames(fix, area, environ)
    left = None

    def keep_own(text: str) -> tuple[str | None, None]:
        nonlocal left
        left = own_lines(still_drifting(text), source.text)
        return (left or None), None

    update_memory_file(fix.copy, keep_own, create=False, area=area)
    if left:
        return f"{fix.copy}: kept only the lines {fix.source.name} lacks"

    def nothing_own(text: str) -> None:
        if own_lines(text, source.text):
            raise MemoryFileError(f"{fix.copy}: changed while being fixed; not deleted")

    delete_file(fix.copy, nothing_own, area)
    return f"{fix.copy}: removed (every line of it is in {fix.source.name})"


def _add_to_context_filenames(fix: DriftFix, area, environ: Mapping[str, str] | None) -> None:
    inherited = gs.read_gemini_settings(None, environ=environ).filenames or (gs.DEFAULT_CONTEXT_FILENAME,)

    def change(text: str) -> tuple[str | None, None]:
        try:
            return gs.with_context_filename(text, fix.source.name, inherited), None
        except ValueError as err:
            raise MemoryFileError(f"{fix.settings_file}: {err}; nothing changed") from None

    update_memory_file(fix.settings_file, change, create=True, area=area)


def drift_message(path: Path, text: str, other: Path, other_text: str) -> str | None:
    """The drift between agent files PATH (with TEXT) and OTHER (with OTHER_TEXT), or None when
    they are not mostly the same text."""
    mine, theirs = distinct_lines(text), distinct_lines(other_text)
    shared = len(mine & theirs)
    union = len(mine | theirs)
    if shared < DRIFT_MIN_LINES or shared < DRIFT_SHARE * union:
        return None
    (a, a_lines), (b, b_lines) = sorted([(shown_name(path), mine), (shown_name(other), theirs)])
    only = [f"{n} line{'s' if n != 1 else ''} {'are' if n != 1 else 'is'} only in {name}"
            for name, n in ((a, len(a_lines - b_lines)), (b, len(b_lines - a_lines))) if n]
    fix = (f"; make {other.name} the source: put `@{other.name}` in {path.name} in place of the copy (quick fix)"
           if path.name in IMPORTING and not is_copilot_file(other) else "")
    if fix and {path.name, other.name} == {"GEMINI.md", "AGENTS.md"}:  # the fix may be Gemini's setting instead
        plan = plan_drift_fix(path, other)
        if plan is not None and plan.kind == SETTING:
            fix = f"; {plan.title[0].lower()}{plan.title[1:]} (quick fix)"
    return (f"drift: {a} and {b} share {shared} of {union} lines"
            + (f"; {' and '.join(only)}" if only else "; the same lines") + fix)
