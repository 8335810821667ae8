""""Always allow for this project": the choices a user made in an MCP client's confirmation.

Kept in `<user config dir>/memory-lens/mcp-approvals.json` (never in the project, so a
repository cannot grant itself anything), keyed by the project root (or, outside a project, the
directory the server runs in) and the tool with the scope it writes (`approval_name`): one
approval covers one scope of one project.

    {"version": 1, "always_allow": {"/home/me/app": ["save_memory", "save_memory:global"]}}

Written through the core writer (locked, atomic). A file that cannot be read as such is treated
as empty and never overwritten: the choice is then not remembered, and the write says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memory_lens.core.writer import MemoryFileError, update_memory_file

FILENAME = "mcp-approvals.json"


def approval_name(tool: str, scope: str) -> str:
    """What an approval of TOOL writing to SCOPE is kept as: the tool's name for the project's
    memory (as before scopes were told apart), `tool:global` for the global memory."""
    return tool if scope == "project" else f"{tool}:{scope}"


def approvals_file() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir("memory-lens", appauthor=False)) / FILENAME


class Approvals:
    """The always-allow choices of one project."""

    def __init__(self, project_key: Path, path: Path | None = None) -> None:
        self.key = os.path.realpath(project_key)
        self.path = path or approvals_file()

    def _load(self, text: str) -> dict | None:
        if not text.strip():
            return {"version": 1, "always_allow": {}}
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("always_allow"), dict):
            return None
        return data

    def allowed(self, tool: str) -> bool:
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return False
        data = self._load(text)
        tools = data["always_allow"].get(self.key, []) if data else []
        return isinstance(tools, list) and tool in tools

    def allow(self, tool: str) -> str | None:
        """Remember TOOL as always allowed here; a warning when it cannot be."""

        def change(text: str) -> tuple[str | None, None]:
            data = self._load(text)
            if data is None:
                raise MemoryFileError(f"{self.path}: is not a Memory Lens approvals file; fix or remove it")
            tools = data["always_allow"].setdefault(self.key, [])
            if tool in tools:
                return None, None
            tools.append(tool)
            return json.dumps(data, ensure_ascii=False, indent=2) + "\n", None

        try:
            update_memory_file(self.path, change)
        except MemoryFileError as err:
            return f"the choice to always allow {tool} was not remembered: {err}"
        return None
