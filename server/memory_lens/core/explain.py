"""Which agent loads which instruction file for one file or directory, and why not: the matrix
of `memory-lens explain`, the language server's `memory/explain` and the MCP tool
`explain_context` (docs/cli.md#explain).

Every agent is asked for its view (`agent_view`), started in one directory and reading PATH,
and each file of the view gets its status by one contract every view follows:

- a source loaded with `when` "start" or "" is `loaded` (with `cutAt` when the agent cuts it);
- a source loaded with `when` "on-read" is `on-read`, with `matchedBy`: the glob that matched,
  or else the directory PATH is in that brings the file in;
- a source with `when` "requestable" is `requestable` (the agent may pull it in itself);
- a source not loaded is `not-loaded`, with the view's reason.

A file no view of an agent lists (another agent's file, a file shadowed in its directory) gets
a reason from the names the agent reads. An agent whose view fails gives its reason for every
file; the other agents' statuses are still shown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence

from memory_lens.core.agents import (AGENTS, AgentSource, AgentView, agent_view, check_agent, claude, codex, copilot,
                                     copilot_vscode, gemini, wave)
from memory_lens.core.agents.common import kind, look
from memory_lens.core.discovery import find_project_root, has_git_marker, resolve_target
from memory_lens.core.merge import Memory
from memory_lens.core.settings import Settings

TITLES = {gemini.AGENT: "Gemini CLI", claude.AGENT: "Claude Code", codex.AGENT: "Codex", wave.AGENT: "Wave",
          "cursor": "Cursor", copilot.AGENT: "Copilot CLI", copilot_vscode.AGENT: copilot_vscode.LABEL}
LOADED, ON_READ, REQUESTABLE, NOT_LOADED = "loaded", "on-read", "requestable", "not-loaded"
STATUSES = (LOADED, ON_READ, REQUESTABLE, NOT_LOADED)


def title(agent: str) -> str:
    """The agent's name as its users know it."""
    return TITLES.get(agent, agent)


@dataclass(frozen=True)
class Status:
    """One agent's answer for one file."""

    status: str  # one of STATUSES
    reason: str = ""
    matched_by: str = ""
    cut_at: int | None = None

    def to_json(self) -> dict:
        data: dict = {"status": self.status}
        if self.reason:
            data["reason"] = self.reason
        if self.matched_by:
            data["matchedBy"] = self.matched_by
        if self.cut_at is not None:
            data["cutAt"] = self.cut_at
        return data


@dataclass(frozen=True)
class ExplainedFile:
    path: Path
    statuses: dict[str, Status]

    def to_json(self) -> dict:
        return {"path": str(self.path), "statuses": {a: s.to_json() for a, s in self.statuses.items()}}


@dataclass(frozen=True)
class Explanation:
    path: Path
    agents: tuple[str, ...]
    files: tuple[ExplainedFile, ...]

    def to_json(self) -> dict:
        """The one JSON of the matrix (CLI `--format json`, MCP; the language server adds URIs)."""
        return {"path": str(self.path), "agents": list(self.agents), "files": [f.to_json() for f in self.files]}


def start_dir(target: Path, given: Path | None) -> Path:
    """Where the agents are started for TARGET (a directory): GIVEN when TARGET is inside it
    (Claude Code then adds what it loads on reading PATH below it), else TARGET itself."""
    return given if given is not None and (given == target or given in target.parents) else target


def agent_reads_name(agent: str, path: Path, settings: Settings, environ: Mapping[str, str] | None) -> bool | None:
    """Whether AGENT reads files named as PATH is at all (None: Memory Lens does not know)."""
    return _name_test(agent, settings, environ)(path)


def _name_test(agent: str, settings: Settings, environ: Mapping[str, str] | None) -> Callable[[Path], bool | None]:
    """`agent_reads_name` for AGENT, its names worked out once (Codex's from its config)."""
    rules = f"{os.sep}.claude{os.sep}rules{os.sep}"
    if agent == gemini.AGENT:
        names = frozenset(settings.filenames)
        return lambda path: path.name in names
    if agent == codex.AGENT:
        from memory_lens.core.agents.budget import codex_names

        names = frozenset(codex_names(environ))
        return lambda path: path.name in names
    if agent == claude.AGENT:
        return lambda path: path.name in ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "MEMORY.md") or (
            path.name.endswith(".md") and rules in str(path))
    if agent == wave.AGENT:
        return lambda path: path.name in (wave.PROJECT_FILENAME, wave.USER_FILENAME)
    if agent == "cursor":
        cursor_rules = f"{os.sep}.cursor{os.sep}rules{os.sep}"
        return lambda path: path.name in ("AGENTS.md", ".cursorrules") or (
            path.name.endswith((".mdc", ".md")) and cursor_rules in str(path))
    if agent == copilot.AGENT:
        return lambda path: path.name.lower() in copilot.TAGGED_NAMES or path.name.lower().endswith(
            ".instructions.md") or (path.name.endswith(".md") and rules in str(path))
    if agent == copilot_vscode.AGENT:
        return lambda path: path.name in ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "copilot-instructions.md") or (
            path.name.endswith(".instructions.md") or (path.name.endswith(".md") and rules in str(path)))
    return lambda path: None


def _absent(agent: str, path: Path, reads: bool | None, instead: AgentSource | None, start: Path,
            settings: Settings) -> Status:
    """The status of PATH for AGENT, whose view does not list it; READS: whether AGENT reads
    files of its name, INSTEAD: the first file the view loads from PATH's directory."""
    who = title(agent)
    if reads is False and agent == gemini.AGENT:
        return Status(NOT_LOADED, f"{who}: {path.name} is not in context.fileName ({', '.join(settings.filenames)})")
    if reads is False:
        return Status(NOT_LOADED, f"{who} does not read {path.name}")
    if instead is not None and instead.path != path and reads:
        return Status(NOT_LOADED, f"{who} reads {instead.path.name} in this directory instead")
    return Status(NOT_LOADED, f"{who}, started in {start}, does not load this file")


def _listed(agent: str, path: Path, source: AgentSource, file: Path | None) -> Status:
    if source.when == "requestable":  # not loaded at all unless the agent asks for it
        return Status(REQUESTABLE, reason=source.reason, matched_by=source.matched_by)
    if not source.loaded:
        who = title(agent)
        why = source.reason or "not loaded"
        return Status(NOT_LOADED, why if why.startswith(who) else f"{who}: {why}", cut_at=source.cut_at)
    if source.when == "on-read":
        return Status(ON_READ, matched_by=source.matched_by or _directory_of(path, file), cut_at=source.cut_at)
    return Status(LOADED, cut_at=source.cut_at)


def _directory_of(path: Path, file: Path | None) -> str:
    """The directory that brings PATH in when FILE is read: the nearest one holding both."""
    if file is None:
        return ""
    for directory in path.parents:
        if directory in file.parents:
            return str(directory)
    return ""


def candidates(start: Path, target: Path, settings: Settings, environ: Mapping[str, str] | None) -> list[Path]:
    """The instruction files of the directories from the project root (or START) down to TARGET,
    by every name an agent Memory Lens knows reads there: those no view lists still get a row.
    Every path it looks at is `look`ed at (a kept matrix is worked out again when one changes)."""
    from memory_lens.core.agents.budget import scan_names

    look(codex.codex_home(environ) / "config.toml")  # Codex's names
    top = find_project_root(target, is_root=_git_marker) or start
    names = (*scan_names(settings, environ), *(f".claude{os.sep}{n}" for n in ("CLAUDE.md", "AGENTS.md")))
    dirs = [target, *(d for d in target.parents if top in d.parents or d == top)] if top in (target, *target.parents) \
        else [target]
    return [d / n for d in reversed(dirs) for n in names if _is_file(d / n)]


def _git_marker(directory: str | Path) -> bool:
    look(os.path.join(directory, ".git"), kind)
    return has_git_marker(directory)


def _is_file(path: Path) -> bool:
    look(path)  # its identity, as the views look at the same files (one `stat` each, not two)
    return os.path.isfile(path)


def where(path: str | os.PathLike[str], start: Path | None = None,
          nearest_existing: bool = False) -> tuple[Path, Path | None, Path, Path]:
    """What `explain` works out for PATH before asking the agents: PATH made absolute, the file
    read (None for a directory), the directory it means (`resolve_target`) and the one the agents
    are started in (`start_dir`). TargetError when PATH does not exist (see `explain`)."""
    target = resolve_target(path, nearest_existing=nearest_existing)
    asked = Path(os.path.abspath(os.path.expanduser(os.fspath(path))))
    return asked, None if os.path.isdir(asked) else asked, target, start_dir(target, start)


def explain(path: str | os.PathLike[str], settings: Settings, agents: Sequence[str] | None = None,
            start: Path | None = None, environ: Mapping[str, str] | None = None,
            gemini_memory: Callable[[Path], Memory] | None = None, nearest_existing: bool = False,
            chat_settings: Mapping[str, object] | None = None, also: Sequence[Path] = (),
            folders: Sequence[Path] | None = None) -> Explanation:
    """The matrix for PATH (a file or directory; TargetError when it does not exist): every agent
    of AGENTS (default: all Memory Lens knows), started in PATH's directory (or in START, when
    PATH is inside it) and reading PATH when it is a file; the files in the order the agents load them, then the
    instruction files on the way to PATH that none of them lists. NEAREST_EXISTING (an editor's
    document, maybe not saved yet): a PATH that does not exist is a file in the nearest existing
    directory above it. CHAT_SETTINGS, FOLDERS: the VS Code settings and the workspace folders open
    in the editor, for copilot-vscode (`agent_view`). ALSO: files that get a row whatever the agents
    read (at the end)."""
    names = tuple(dict.fromkeys(check_agent(a) for a in agents)) if agents else AGENTS
    asked, file, target, begin = where(path, start, nearest_existing)
    views: dict[str, AgentView | str] = {}
    listed: dict[str, dict[Path, AgentSource]] = {}
    order: dict[Path, None] = {}
    for agent in names:
        try:
            view = agent_view(agent, begin, settings, gemini_memory=gemini_memory, environ=environ, file=file,
                              chat_settings=chat_settings, folders=folders)
        except Exception as err:  # one agent's failure is its reason; the others still answer
            views[agent] = f"{title(agent)}: Memory Lens could not work out what it loads: {err}"
            continue
        views[agent], mine = view, listed.setdefault(agent, {})
        for s in view.sources:
            mine.setdefault(Path(os.path.normpath(s.path)), s)
        order.update(dict.fromkeys(p for p, s in mine.items() if s.loaded))
    for mine in listed.values():  # then what the agents look at and leave out, then the rest
        order.update(dict.fromkeys(p for p, s in mine.items() if not s.loaded))
    reads = {agent: _name_test(agent, settings, environ) for agent in names}
    order.update(dict.fromkeys(p for p in candidates(begin, target, settings, environ)
                               if any(reads[a](p) is not False for a in names)))
    order.update(dict.fromkeys(Path(os.path.normpath(p)) for p in also))
    firsts: dict[str, dict[Path, AgentSource]] = {}  # by agent: the first file its view loads from each directory
    for agent, view in views.items():
        if not isinstance(view, str):
            mine = firsts[agent] = {}
            for s in view.sources:
                if s.loaded:
                    mine.setdefault(s.path.parent, s)
    files = []
    for p in order:
        statuses: dict[str, Status] = {}
        for agent in names:
            view = views[agent]
            if isinstance(view, str):
                statuses[agent] = Status(NOT_LOADED, view)
                continue
            source = listed[agent].get(p)
            statuses[agent] = (_listed(agent, p, source, file) if source is not None
                               else _absent(agent, p, reads[agent](p), firsts[agent].get(p.parent), begin, settings))
        files.append(ExplainedFile(p, statuses))
    return Explanation(asked, names, tuple(files))
