"""Emacs with eglot (the setup of docs/editors.md) runs `memory-lens serve`: diagnostics reach
Flymake, `memory/effective` answers, and the save code actions are offered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DRIVER = Path(__file__).with_name("eglot_driver.el")


def test_emacs_eglot_session(tmp_path: Path, require_program) -> None:
    emacs = require_program("emacs", "apt-get install emacs-nox elpa-eglot")
    if not Path("/usr/share/emacs/site-lisp/elpa").exists() and not os.environ.get("CI"):
        import pytest

        pytest.skip("eglot is not installed (apt-get install elpa-eglot)")
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "GEMINI.md").write_text("- Prefer small commits.\n", encoding="utf-8")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    memory = root / "GEMINI.md"
    memory.write_text("# Project\n- Prefer small commits\n- Use tabs\n- use tabs.\n", encoding="utf-8")
    out = tmp_path / "result.json"
    env = dict(os.environ, HOME=str(home), MEMORY_LENS_LOCK_DIR=str(tmp_path / "locks"),
               ML_PYTHON=sys.executable, ML_MEMORY=str(memory), ML_OUT=str(out),
               ML_PACKAGE_DIR=str(tmp_path / "elpa"))
    proc = subprocess.run([emacs, "--batch", "-Q", "-l", str(DRIVER)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=180)
    assert out.exists(), f"Emacs wrote no result (rc={proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"] is True, result.get("error")
    by_line = {d["line"]: d for d in result["diagnostics"]}
    assert "duplicate entry" in by_line[4]["text"] and by_line[4]["type"] == "eglot-warning"
    assert "redundant entry" in by_line[2]["text"]
    assert result["effective_text"] == "- Prefer small commits.\n\n" + memory.read_text().strip()
    assert "Save selection to project memory" in result["code_actions"]
    assert "Save selection to global memory" in result["code_actions"]
