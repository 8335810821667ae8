"""docs/mcp.md's client set-up, run as written with the clients that run here: the Python SDK
program, the MCP Inspector's command-line mode (Node.js), and the agent CLIs that
scripts/agent-clis.sh installs (Gemini CLI, Claude Code, Codex; skipped when they are not
installed, as in tests/fidelity). `memory-lens` is on PATH, as the page asks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import Workspace

DOC = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
AGENT_CACHE = Path(os.environ.get("MEMORY_LENS_AGENT_CACHE") or Path.home() / ".cache" / "memory-lens-agents")
CLIS = {"gemini": "google-gemini-cli-0.61.0", "claude": "anthropic-ai-claude-code-2.1.328",
        "codex": "openai-codex-0.169.0"}
TIMEOUT = 300  # a safety net against a hung client, not a timing assertion


def snippet(after: str, lang: str) -> str:
    """The first LANG code block of docs/mcp.md after the text AFTER."""
    found = re.search(rf"```{lang}\n(.*?)```", DOC[DOC.index(after):], re.S)
    assert found, (after, lang)
    return found.group(1)


def run(ws: Workspace, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = ws.env({"PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])})
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT,
                          stdin=subprocess.DEVNULL)


def cli(name: str) -> str:
    path = AGENT_CACHE / CLIS[name] / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.skip(f"{CLIS[name]} is not installed (scripts/agent-clis.sh)")
    return str(path)


@pytest.fixture
def proj(ws: Workspace) -> Path:
    proj = ws.project("app")
    ws.write("app/GEMINI.md", "- Use pnpm\n")
    return proj


def test_the_python_sdk_program(ws: Workspace, proj: Path, tmp_path: Path) -> None:
    program = tmp_path / "client.py"
    program.write_text(snippet("**The Python SDK**", "python"), encoding="utf-8")
    done = run(ws, [sys.executable, str(program)], proj)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "- Use pnpm\n"


@pytest.mark.skipif(shutil.which("npx") is None, reason="the Inspector needs Node.js (npx)")
def test_the_inspector_commands(ws: Workspace, proj: Path) -> None:
    listing, call = snippet("**MCP Inspector**", "sh").splitlines()
    done = run(ws, listing.split(), proj)
    assert done.returncode == 0, done.stderr
    assert "effective_memory" in [t["name"] for t in json.loads(done.stdout)["tools"]]
    done = run(ws, call.split(), proj)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["isError"] is False and result["structuredContent"]["text"] == "- Use pnpm"


def test_gemini_cli_entry_and_folder_trust(ws: Workspace, proj: Path) -> None:
    gemini = cli("gemini")
    ws.write("app/.gemini/settings.json", snippet("**Gemini CLI**", "json"))
    untrusted = run(ws, [gemini, "mcp", "list"], proj)
    assert "memory-lens: memory-lens mcp (stdio) - Disabled" in untrusted.stdout + untrusted.stderr
    rule = re.search(r"`(\{\"/home/me/app\": \"TRUST_FOLDER\"\})`", DOC).group(1)
    ws.write("home/.gemini/trustedFolders.json", rule.replace("/home/me/app", str(proj)))
    trusted = run(ws, [gemini, "mcp", "list"], proj)
    listed = trusted.stdout + trusted.stderr
    assert "memory-lens: memory-lens mcp (stdio)" in listed and "Disabled" not in listed


def test_claude_code_project_entry_waits_for_approval_and_the_local_one_connects(ws: Workspace, proj: Path) -> None:
    claude = cli("claude")
    ws.write("app/.mcp.json", snippet("To share it with everyone", "json"))
    pending = run(ws, [claude, "mcp", "list"], proj)
    assert "memory-lens: memory-lens mcp - ⏸ Pending approval (run `claude` to approve)" in pending.stdout
    os.remove(proj / ".mcp.json")
    add = snippet("**Claude Code**", "sh").strip()
    assert add == "claude mcp add --scope local memory-lens -- memory-lens mcp"
    done = run(ws, [claude, *add.split()[1:]], proj)
    assert done.returncode == 0, done.stderr
    connected = run(ws, [claude, "mcp", "list"], proj)
    assert "memory-lens: memory-lens mcp - ✔ Connected" in connected.stdout


def test_codex_entry(ws: Workspace, proj: Path) -> None:
    codex = cli("codex")
    ws.write("home/.codex/config.toml", snippet("**Codex**", "toml"))
    listed = run(ws, [codex, "mcp", "list"], proj)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^memory-lens\s+memory-lens\s+mcp\s.*\benabled\b", listed.stdout, re.M), listed.stdout
