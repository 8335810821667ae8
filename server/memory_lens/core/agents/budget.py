"""Budget and shadowing findings per enabled agent: `over-budget` and `not-loaded`.

`memory-lens check --agent X` and the language server's `agents` setting choose the agents; by
default they are Gemini CLI plus each agent whose own files exist among the memory files found
(Codex: AGENTS.md or AGENTS.override.md; Claude Code: CLAUDE.md or CLAUDE.local.md). Wave is
only checked when named: its project file is AGENTS.md, as Codex's, and it loads it whole.

For each memory file and each enabled agent that reads files of that name, from the file's own
directory (what the agent loads when started there, read from disk):

- codex: the file is cut by `project_doc_max_bytes` (over-budget on the line of `cutAt`), is not
  read at all because the budget is used up above it (over-budget on line 1), or is shadowed by
  the first of Codex's names in its directory, such as an AGENTS.override.md (not-loaded);
- claude: the file (a CLAUDE.md, CLAUDE.local.md, or an AGENTS.md that Claude Code reads because
  its directory has no CLAUDE.md) is over Claude Code's 40,000-character large-file warning
  threshold (over-budget on the line where the threshold falls);
- gemini: an AGENTS.md that Gemini CLI is not configured to read (not among its file names),
  flagged only when no other enabled agent (codex, wave, claude) reads AGENTS.md.

Gemini's own `over-budget` (the merged memory over the byte or token budget) stays in
`core/checks.py`, on line 1, unchanged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Collection, Iterable, Mapping, Sequence

from memory_lens.core.agents import AGENTS, UnknownAgentError, check_agent, claude, codex, gemini, wave
from memory_lens.core.agents.common import AgentView, decode_lossy, read_raw
from memory_lens.core.checks import NOT_LOADED, OVER_BUDGET, Finding
from memory_lens.core.settings import Settings

CLAUDE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")
AGENTS_MD = codex.DEFAULT_FILENAME


def parse_agents(values: Iterable[str]) -> tuple[str, ...]:
    """The agents named in VALUES (each a name or a comma list), each once, in the order given;
    UnknownAgentError for a name Memory Lens has no rules for."""
    out: list[str] = []
    for value in values:
        for name in (n.strip() for n in value.split(",")):
            if not name:
                continue
            check_agent(name)
            if name not in out:
                out.append(name)
    if not out:
        raise UnknownAgentError(f"no agent named: use one or more of {', '.join(AGENTS)}")
    return tuple(out)


_CODEX_NAMES: dict[Path, tuple[tuple[int, int, int] | None, list[str]]] = {}


def codex_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The file names Codex tries in each directory (its config's fallback names included).
    The language server asks for every file it checks: config.toml is read again only when it
    changes (its size, time or inode)."""
    config = codex.codex_home(environ) / "config.toml"
    try:
        st = os.stat(config)
        stamp: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
    except (OSError, ValueError):
        stamp = None
    cached = _CODEX_NAMES.get(config)
    if cached is not None and cached[0] == stamp:  # unchanged, or still absent
        return list(cached[1])
    names = codex.candidate_filenames(codex.read_config(config.parent))
    _CODEX_NAMES[config] = (stamp, names)
    return list(names)


def scan_names(settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every memory file name some agent reads: Gemini's configured names, Codex's, Claude Code's."""
    return tuple(dict.fromkeys([*settings.filenames, *codex_names(environ), *CLAUDE_NAMES]))


def agent_names(settings: Settings, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The file names the agents of the `agents` setting read that are not among Gemini's names
    (`settings.filenames`): the language server gives such files the per-agent findings only.
    None without an explicit `agents` setting."""
    names: list[str] = []
    for agent in settings.agents or ():
        if agent == codex.AGENT:
            names += codex_names(environ)
        elif agent == claude.AGENT:
            names += [*CLAUDE_NAMES, AGENTS_MD]
        else:  # gemini (an AGENTS.md it is not configured for is not-loaded), wave
            names.append(AGENTS_MD)
    return tuple(n for n in dict.fromkeys(names) if n not in settings.filenames)


def present_agents(paths: Iterable[Path], environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The default agents for a workspace whose memory files are PATHS: gemini always, codex and
    claude when files of theirs are among PATHS."""
    names = {p.name for p in paths}
    found = [gemini.AGENT]
    if names & set(codex_names(environ)):
        found.append(codex.AGENT)
    if names & set(CLAUDE_NAMES):
        found.append(claude.AGENT)
    return tuple(found)


def claude_reads_agents_md(directory: Path) -> bool:
    """Whether Claude Code reads DIRECTORY's AGENTS.md as a project file of its own: the directory
    has neither CLAUDE.md nor .claude/CLAUDE.md."""
    return claude.project_files(directory) == [directory / AGENTS_MD]


def line_of_char(text: str, index: int) -> int:
    """The 1-based line that character INDEX of TEXT is on."""
    return text.count("\n", 0, index) + 1


def agent_findings(path: Path, agents: Sequence[str], settings: Settings,
                   environ: Mapping[str, str] | None = None) -> list[Finding]:
    """The over-budget and not-loaded findings of memory file PATH for the enabled AGENTS."""
    found: list[Finding] = []
    name = path.name
    here = Path(os.path.realpath(path.parent))
    if codex.AGENT in agents and name in codex_names(environ):
        max_bytes = codex.read_config(codex.codex_home(environ)).max_bytes
        found += _codex_findings(path, here / name, codex.load_view(here, environ), max_bytes)
    if claude.AGENT in agents and (name in CLAUDE_NAMES or (name == AGENTS_MD and claude_reads_agents_md(here))):
        found += _claude_findings(path)
    readers = {codex.AGENT, wave.AGENT, claude.AGENT}
    if (gemini.AGENT in agents and name == AGENTS_MD and AGENTS_MD not in settings.filenames
            and not readers & set(agents)):
        found.append(Finding(
            path, 1, 1, NOT_LOADED,
            f"gemini: Gemini CLI does not load this file: its file names are {', '.join(settings.filenames)}. "
            f"Add {AGENTS_MD} to context.fileName in .gemini/settings.json (or --filename, setting "
            "memoryLens.filenames), or enable the agent that reads it (--agent codex, setting memoryLens.agents)",
            1))
    return found


def _codex_findings(path: Path, as_found: Path, view: AgentView, max_bytes: int) -> list[Finding]:
    mine = next((s for s in view.sources if s.tier == "project" and s.path == as_found), None)
    if mine is None:
        instead = next((s for s in view.sources if s.tier == "project" and s.path.parent == as_found.parent), None)
        if instead is None:
            return []
        return [Finding(path, 1, 1, NOT_LOADED,
                        f"codex: Codex does not load this file from here: it reads the first of its names in a "
                        f"directory and loads {instead.path.name} of this directory instead", 1)]
    if mine.cut_at is not None:
        line = mine.cut_line or 1
        return [Finding(path, line, 1, OVER_BUDGET,
                        f"codex: Codex cuts this file at byte {mine.cut_at} of {mine.bytes} (project_doc_max_bytes "
                        f"is {max_bytes}, shared by the AGENTS.md files from the project root down): it never "
                        f"sees line {line} onward", line)]
    if not mine.loaded and mine.reason.startswith("not read"):
        return [Finding(path, 1, 1, OVER_BUDGET,
                        f"codex: the {max_bytes}-byte project_doc_max_bytes budget is used up by the files "
                        "above this one: Codex never sees this file, from line 1 on", 1)]
    return []


def _claude_findings(path: Path) -> list[Finding]:
    got = read_raw(path, claude.READ_LIMIT)
    if not got.ok:
        return []
    text = decode_lossy(got.data)
    if len(text) <= claude.LARGE_FILE_CHARS:
        return []
    line = line_of_char(text, claude.LARGE_FILE_CHARS)
    return [Finding(path, line, 1, OVER_BUDGET,
                    f"claude: {len(text)} characters, over Claude Code's {claude.LARGE_FILE_CHARS}-character "
                    f"large-file warning threshold: line {line} onward is past it (Claude Code warns that a "
                    "large CLAUDE.md hurts performance)", line)]


def agent_files(paths: Sequence[str | os.PathLike[str]], settings: Settings, project_root: Path | None,
                environ: Mapping[str, str] | None = None) -> list[Path]:
    """The memory files of every agent's names that `check PATHS` covers: a FILE itself; under a
    DIR (or, without PATHs, the project root PROJECT_ROOT, else the current directory), every
    file the language server's scan finds by those names."""
    from memory_lens.core.discovery import resolve_target
    from memory_lens.core.scan import find_memory_files  # only a directory walks a tree

    names = scan_names(settings, environ)
    found: dict[Path, None] = {}
    for raw in paths or [None]:
        if raw is None:
            directory = project_root if project_root is not None else resolve_target(None)
            if project_root is None:  # outside a project: the current directory's own files
                found.update(dict.fromkeys(directory / n for n in names if os.path.isfile(directory / n)))
                continue
        else:
            p = Path(os.path.abspath(os.path.expanduser(os.fspath(raw))))
            if not os.path.isdir(p):
                found[p] = None
                continue
            directory = resolve_target(p)
        found.update(dict.fromkeys(find_memory_files(directory, names)))
    return list(found)


def check_agents(files: Sequence[Path], settings: Settings, agents: Sequence[str] | None = None,
                 environ: Mapping[str, str] | None = None) -> tuple[tuple[str, ...], list[Finding]]:
    """The agents checked (AGENTS, else the default for FILES) and their findings over FILES."""
    enabled = tuple(agents or settings.agents or present_agents(files, environ))
    findings = [f for path in files if os.path.isfile(path)
                for f in agent_findings(path, enabled, settings, environ)]
    return enabled, findings


def chain_agents(path: Path, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The default agents for memory file PATH in the language server: gemini, plus codex and
    claude when a file of theirs is in PATH's directory or a directory above it (the files they
    would load from there)."""
    names = [*codex_names(environ), *CLAUDE_NAMES]
    directory = Path(os.path.realpath(path.parent))
    present = [d / n for d in (directory, *directory.parents) for n in names if os.path.isfile(d / n)]
    return present_agents(present, environ)


def agent_file_names(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The file names of the agents other than Gemini (Codex's, its fallbacks, Claude Code's)."""
    return frozenset((*codex_names(environ), *CLAUDE_NAMES))


def file_agent_findings(path: Path, settings: Settings, environ: Mapping[str, str] | None = None,
                        names: Collection[str] | None = None) -> list[Finding]:
    """The per-agent findings of memory file PATH as on disk, for `settings.agents` (None: the
    `chain_agents` default); none for a file that is not on disk. NAMES: `agent_file_names()`,
    when the caller asks for many files at once."""
    try:
        if path.name not in (agent_file_names(environ) if names is None else names) or not os.path.isfile(path):
            return []  # a file of no agent's own names (GEMINI.md): nothing more to check
        return agent_findings(path, settings.agents or chain_agents(path, environ), settings, environ)
    except OSError:  # changed while being read: the next check sees it settled
        return []
