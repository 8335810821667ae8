"""A real editor in the suite: headless Neovim runs `memory-lens serve` and uses it like a user.

Neovim opens a memory file holding a duplicate entry, then checks diagnostics, hover,
`memory/effective`, and the two save code actions on a selection in a source file, running the
project one's command and finding the entry on disk with no buffer left to write.
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
    assert result["modified_buffers"] == []  # written by the server in one step, no buffer left to save
    assert (result["saved"]["path"], result["saved"]["line"], result["saved"]["added"]) == (str(memory), 7, True)


def _documented_snippet(heading: str) -> str:
    """The first ```lua block after HEADING in docs/editors.md: the test runs what users copy."""
    doc = (Path(__file__).parents[2] / "docs" / "editors.md").read_text(encoding="utf-8")
    after = doc[doc.index(heading):]
    start = after.index("```lua\n") + len("```lua\n")
    return after[start:after.index("```", start)]


def test_documented_neovim_07_setup_shares_one_server_per_project(tmp_path: Path, require_program) -> None:
    """docs/editors.md's Neovim 0.7–0.10 setup, as written: buffers of one project share one
    server (started as `memory-lens serve` from PATH), whose diagnostics reach them; a `.git`
    file (a worktree) marks a root too."""
    nvim = require_program("nvim", "apt-get install neovim")
    home = tmp_path / "home"
    home.mkdir()
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "GEMINI.md").write_text("- Use pnpm\n- use pnpm\n", encoding="utf-8")
    (root / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    worktree = tmp_path / "worktree"
    (worktree / "sub").mkdir(parents=True)
    (worktree / ".git").write_text("gitdir: /elsewhere\n", encoding="utf-8")
    (worktree / "sub" / "GEMINI.md").write_text("- one\n", encoding="utf-8")
    out = tmp_path / "result.json"
    init = tmp_path / "init.lua"
    snippet = _documented_snippet("Neovim 0.7–0.10")
    init.write_text(f"""
local function finish(result)
  local f = assert(io.open({json.dumps(str(out))}, 'w')); f:write(vim.json.encode(result)); f:close()
  vim.cmd('qall!')
end
local loaded, err = pcall(function()
{snippet}
  _G.memory_lens_clients = memory_lens_clients
end)
if not loaded then finish({{ error = tostring(err) }}) end
local files = {{ {json.dumps(str(root / "GEMINI.md"))}, {json.dumps(str(root / "src" / "app.py"))},
                {json.dumps(str(worktree / "sub" / "GEMINI.md"))} }}
local ran, failure = pcall(function()
  local bufs = {{}}
  for _, f in ipairs(files) do vim.cmd('edit ' .. vim.fn.fnameescape(f)); table.insert(bufs, vim.api.nvim_get_current_buf()) end
  local function attached(buf) local n = 0; for _ in pairs(vim.lsp.buf_get_clients(buf)) do n = n + 1 end; return n end
  local ok = vim.wait(30000, function() return #vim.diagnostic.get(bufs[1]) > 0 end, 50)
  vim.wait(30000, function() return #vim.lsp.get_active_clients() >= 2 end, 50)  -- the worktree's too
  local result = {{ diagnostics = ok, roots = {{}}, attached = {{}}, clients = #vim.lsp.get_active_clients() }}
  for root in pairs(_G.memory_lens_clients or {{}}) do table.insert(result.roots, root) end
  for _, b in ipairs(bufs) do table.insert(result.attached, attached(b)) end
  finish(result)
end)
if not ran then finish({{ error = tostring(failure) }}) end
""", encoding="utf-8")
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "xdg"), XDG_STATE_HOME=str(tmp_path / "xdg"),
               XDG_DATA_HOME=str(tmp_path / "xdg"), XDG_CACHE_HOME=str(tmp_path / "xdg"),
               MEMORY_LENS_LOCK_DIR=str(tmp_path / "locks"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    proc = subprocess.run([nvim, "--headless", "--clean", "-n", "-c", f"luafile {init}"],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.exists(), f"Neovim wrote no result (rc={proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in result, result["error"]
    assert result["diagnostics"], "the duplicate entry got no diagnostic"
    assert result["clients"] == 2 and result["attached"] == [1, 1, 1], result  # one server per project
    assert sorted(result["roots"]) == sorted([str(root), str(worktree)])
