"""One view per agent: what Gemini CLI, Claude Code, Codex or Wave loads for a directory.

`agent_view` is the one place that picks the agent's rules; `memory-lens show --agent` and the
language server's `memory/effective` both call it. Each agent's rules live in its own module.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from memory_lens.core.agents import claude, codex, copilot, copilot_vscode, cursor, gemini, wave
from memory_lens.core.agents.common import AgentSource, AgentView, Kept
from memory_lens.core.merge import Memory, load_memory
from memory_lens.core.settings import Settings

AGENTS = (gemini.AGENT, claude.AGENT, codex.AGENT, wave.AGENT, cursor.AGENT, copilot.AGENT,
          copilot_vscode.AGENT)
DEFAULT_AGENT = gemini.AGENT


class UnknownAgentError(ValueError):
    """An agent name Memory Lens has no rules for (the message lists the known ones)."""


def check_agent(name: str | None) -> str:
    """NAME when it is a known agent, the default for None; else UnknownAgentError."""
    if name is None:
        return DEFAULT_AGENT
    if name not in AGENTS:
        raise UnknownAgentError(f"unknown agent {name!r}: use one of {', '.join(AGENTS)}")
    return name


def agent_view(agent: str | None, target_dir: Path, settings: Settings,
               gemini_memory: Callable[[Path], Memory] | None = None,
               environ: Mapping[str, str] | None = None, file: Path | None = None,
               chat_settings: Mapping[str, Any] | None = None, folders: Sequence[Path] | None = None) -> AgentView:
    """What AGENT loads when started in TARGET_DIR (an existing, resolved directory).

    Gemini's memory comes from GEMINI_MEMORY when given (the language server's cached loader),
    else from `load_memory` with SETTINGS. The other agents have fixed file names of their own;
    SETTINGS gives them only the size limit (Wave). ENVIRON (default: the process environment)
    gives `CODEX_HOME`, `CLAUDE_CONFIG_DIR`, `COPILOT_HOME` and `COPILOT_CUSTOM_INSTRUCTIONS_DIRS`.
    FILE (claude): add what Claude Code loads when it reads that file, started in TARGET_DIR
    (sources marked `when: "on-read"`); cursor too; (copilot) mark the scoped files whose
    pattern matches it. CHAT_SETTINGS (copilot-vscode): the VS Code settings the client sent
    (setting ID to value); None: the workspace's `.vscode/settings.json`. FOLDERS (copilot-vscode):
    the workspace folders open in the editor; None: the project root of TARGET_DIR."""
    name = check_agent(agent)
    if name == gemini.AGENT:
        memory = gemini_memory(target_dir) if gemini_memory else load_memory(target_dir, settings)
        return gemini.view_of(memory)
    if name == claude.AGENT:
        return claude.load_view(target_dir, environ, file=file)
    env = tuple(sorted((os.environ if environ is None else environ).items()))
    key = (name, str(target_dir), str(file or ""), env, settings.max_file_bytes,
           json.dumps(chat_settings, sort_keys=True, default=repr), None if folders is None else tuple(map(str, folders)))
    return _VIEWS.get(key, lambda: _load_view(name, target_dir, settings, environ, file, chat_settings, folders))


# The other agents' views by agent, start directory, file read, environment and settings, kept
# while every file and folder they looked at is as it was (`Kept`, one `stat` each): the editor asks
# `memory/explain` for the open file again and again, and reading Copilot's, Cursor's and Codex's
# files each time cost most of it (docs/performance.md, target: explain.open_file.p99_ms <= 10).
_VIEWS = Kept(64)


def _load_view(name: str, target_dir: Path, settings: Settings, environ: Mapping[str, str] | None,
               file: Path | None, chat_settings: Mapping[str, Any] | None, folders: Sequence[Path] | None) -> AgentView:
    if name == codex.AGENT:
        return codex.load_view(target_dir, environ)
    if name == cursor.AGENT:
        return cursor.load_view(target_dir, environ, file=file)
    if name == copilot.AGENT:
        return copilot.load_view(target_dir, environ, file=file)
    if name == copilot_vscode.AGENT:
        return copilot_vscode.load_view(target_dir, environ, file=file, chat_settings=chat_settings, folders=folders)
    return wave.load_view(target_dir, settings.max_file_bytes)


def user_dir(agent: str, environ: Mapping[str, str] | None = None) -> Path | None:
    """The directory of AGENT's own user-level files (`~/.claude`, `$CODEX_HOME`, `~/.wave`);
    None for Gemini CLI, whose global directory is `Settings.global_dir`."""
    dirs = {claude.AGENT: lambda: claude.claude_dir(environ), codex.AGENT: lambda: codex.codex_home(environ),
            wave.AGENT: wave.user_dir}
    found = dirs.get(agent)
    return found() if found else None


__all__ = ["AGENTS", "DEFAULT_AGENT", "AgentSource", "AgentView", "UnknownAgentError", "agent_view",
           "check_agent", "user_dir"]
