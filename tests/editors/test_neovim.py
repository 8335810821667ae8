"""A real editor in the suite: headless Neovim runs `memory-lens serve` and uses it like a user.

Neovim opens a memory file holding a duplicate entry, then checks diagnostics, hover,
`memory/effective`, and the two save code actions on a selection in a source file, applying the
project one and finding the entry on disk.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

DRIVER = Path(__file__).with_name("nvim_driver.lua")


def test_neovim_session(tmp_path: Path, require_program) -> None:
    nvim = require_program("nvim", "apt-get install neovim")
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "GEMINI.md").write_text("# Global\n- Answer in English.\n", encoding="utf-8")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    memory = root / "GEMINI.md"
    memory.write_text(
        "# Project rules\n\n## Gemini Added Memories\n- Use pnpm, not npm.\n- Run tests with pytest.\n"
        "- use PNPM, not npm\n",
        encoding="utf-8",
    )
    (root / "src" / "GEMINI.md").write_text("- Source files use 4-space indents.\n", encoding="utf-8")
    source = root / "src" / "app.py"
    source.write_text("Deploys go through the staging branch first\nprint('hi')\n", encoding="utf-8")
    out = tmp_path / "result.json"
    xdg = tmp_path / "xdg"
    env = dict(
        os.environ,
        HOME=str(home),
        XDG_CONFIG_HOME=str(xdg / "config"), XDG_CACHE_HOME=str(xdg / "cache"),
        XDG_DATA_HOME=str(xdg / "data"), XDG_STATE_HOME=str(xdg / "state"),
        MEMORY_LENS_LOCK_DIR=str(tmp_path / "locks"),
        ML_PYTHON=sys.executable, ML_ROOT=str(root), ML_MEMORY=str(memory), ML_SOURCE=str(source),
        ML_OUT=str(out), ML_DUP_LINE="5",
    )
    proc = subprocess.run([nvim, "--headless", "--clean", "-n", "-c", f"luafile {DRIVER}"],
                          env=env, cwd=root, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"Neovim wrote no result (rc={proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["ok"], f"Neovim session failed at {result.get('steps')}: {result.get('error')}"
    assert proc.returncode == 0

    dup = [d for d in result["diagnostics"] if d["code"] == "duplicate"]
    assert dup and dup[0]["lnum"] == 5 and dup[0]["source"] == "memory-lens"
    assert dup[0]["severity"] == 2  # vim.diagnostic.severity.WARN

    assert "duplicate in this file" in result["hover_entry"] and "GEMINI.md:4" in result["hover_entry"]
    assert "Effective memory here" in result["hover_summary"]

    eff = result["effective"]
    assert eff["projectRoot"] == str(root)
    assert [s["path"] for s in eff["sources"]] == [
        str(home / ".gemini" / "GEMINI.md"), str(memory), str(root / "src" / "GEMINI.md")]
    assert eff["text"].startswith("# Global\n- Answer in English.\n\n# Project rules")
    assert eff["text"].endswith("- Source files use 4-space indents.")

    assert "Save selection to project memory" in result["code_actions"]
    assert "Save selection to global memory" in result["code_actions"]
    saved = memory.read_text(encoding="utf-8")
    assert saved == (
        "# Project rules\n\n## Gemini Added Memories\n- Use pnpm, not npm.\n- Run tests with pytest.\n"
        "- use PNPM, not npm\n- Deploys go through the staging branch first\n"
    )
