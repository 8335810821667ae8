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
  flagged only when no other enabled agent (codex, wave, claude, cursor, copilot) reads AGENTS.md.

Gemini's own `over-budget` (the merged memory over the byte or token budget) stays in
`core/checks.py`, on line 1, unchanged.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Collection, Iterable, Mapping, Sequence

from memory_lens.core.agents import (AGENTS, UnknownAgentError, agent_view, check_agent, claude, claude_checks, codex,
                                     copilot, copilot_vscode, cursor, gemini, wave)
from memory_lens.core.agents.rule_files import rule_file_findings
from memory_lens.core.agents.scoped import RULE_HOLDERS, rule_folder, rules_below
from memory_lens.core.agents.common import AgentView, decode_lossy, read_raw
from memory_lens.core.checks import (
    FRESH,
    NOT_LOADED,
    OVER_BUDGET,
    Analyses,
    CheckProgress,
    CheckReport,
    Finding,
    Indexer,
    Rules,
    check_file,
    encoding_finding,
    index_entries,
    unusable_finding,
)
from memory_lens.core import checks
from memory_lens.core.discovery import Scope, TargetError, find_project_root, resolve_target
from memory_lens.core.files import FileStatus, RunReads, read_memory_file
from memory_lens.core.imports import IMPORT_NOT_FOUND
from memory_lens.core.merge import Reader, Source, load_memory
from memory_lens.core.settings import Settings

CLAUDE_NAMES = ("CLAUDE.md", "CLAUDE.local.md")
AGENTS_MD = codex.DEFAULT_FILENAME
# Instruction files of no memory name, found in the same walk (scoped rules files: `RULE_HOLDERS`):
# Cursor's legacy rules file, and Copilot's `.github/copilot-instructions.md` (`is_instruction_file`).
COPILOT_INSTRUCTIONS = "copilot-instructions.md"
INSTRUCTION_NAMES = (cursor.LEGACY, COPILOT_INSTRUCTIONS)


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
    """The file names some agent reads that are not among Gemini's names (`settings.filenames`),
    whether its agent is enabled or not: the language server gives such files the checks of their
    own text (`own_findings`: a secret is one whoever loads it) and the enabled agents' findings."""
    names = [*codex_names(environ), *CLAUDE_NAMES, AGENTS_MD, *INSTRUCTION_NAMES]
    return tuple(n for n in dict.fromkeys(names) if n not in settings.filenames)


def is_instruction_file(path: Path) -> bool:
    """Whether PATH, found by one of `INSTRUCTION_NAMES`, is one an agent reads: a `.cursorrules`,
    or a `copilot-instructions.md` in a `.github` folder (or Copilot's home, found by its view)."""
    return path.name != COPILOT_INSTRUCTIONS or path.parent.name == ".github"


def own_findings(path: Path, text: str, settings: Settings, whole: bool = True) -> list[Finding]:
    """The checks of an instruction file's own text (PATH with TEXT): `secret`, and when WHOLE (an
    enabled agent reads the file) `duplicate`, `stale` and `drift`. A secret is reported whoever
    reads the file, enabled or not (docs/security.md)."""
    found = checks.secret_findings(path, text)  # looked up when called (benchmarks/hygiene_bench.py turns it off)
    if whole:
        found = sorted([*index_entries(path, text).duplicates, *checks.hygiene_findings(path, text, settings), *found],
                       key=lambda f: f.line)
    return found


def instruction_findings(path: Path, settings: Settings, whole: bool = True, rules_file: bool = False) -> list[Finding]:
    """`own_findings` of instruction file PATH read from disk, after `unreadable`, `too-large` or
    `encoding` when WHOLE and not a RULES_FILE (`rule_file_findings` reports those)."""
    got = read_memory_file(path, settings.max_file_bytes)
    if got.status is FileStatus.MISSING:
        return []
    usual = whole and not rules_file
    if not got.loadable:
        return [unusable_finding(path, got.reason, got.size if got.too_large else 0, settings)] if usual else []
    bad = [encoding_finding(path, got.encoding)] if got.encoding and usual else []
    return bad + own_findings(path, got.text, settings, whole)


def user_files(directory: Path, settings: Settings, environ: Mapping[str, str] | None = None) -> dict[Path, str]:
    """The user-level instruction files Claude Code, Codex, Copilot CLI and Wave read when started in
    DIRECTORY, and whose they are (`~/.claude/CLAUDE.md`, `~/.claude/rules/**/*.md`, `~/.codex/AGENTS.md`,
    `~/.copilot/copilot-instructions.md`, `~/.copilot/instructions/**/*.instructions.md`, …), as
    their views list them. Gemini's are in its chain; Copilot Chat's (`~/.copilot/instructions`,
    `~/.claude/CLAUDE.md`, `~/.claude/rules`) are among these."""
    try:
        views = (claude.load_view(directory, environ), codex.load_view(directory, environ),
                 copilot.load_view(directory, environ), wave.load_view(directory, settings.max_file_bytes))
    except OSError:  # changed while being read: the next check sees it settled
        return {}
    found: dict[Path, str] = {}
    for view in views:
        for s in view.sources:
            if s.tier == "user" and os.path.isfile(s.path):
                found.setdefault(s.path, view.agent)
    return found


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


def claude_reads_agents_md(path: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether Claude Code, started in the project directory of the `AGENTS.md` at PATH (a real
    path), loads it as a project file: its loader decides, per project (no `CLAUDE.md`,
    `.claude/CLAUDE.md` or `CLAUDE.local.md` in the loaded chain, in the default mode)."""
    view = claude.load_view(claude.project_dir_of(path), environ)
    return any(s.path == path and s.tier == "project" and s.loaded for s in view.sources)


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
    if claude.AGENT in agents and name in (*CLAUDE_NAMES, AGENTS_MD):
        view = claude.load_view(claude.project_dir_of(here / name), environ) if name == AGENTS_MD else None
        if view is None or any(s.path == here / name and s.tier == "project" and s.loaded for s in view.sources):
            found += (_claude_findings(path) + claude_checks.import_findings(path, environ)
                      + claude_checks.config_findings(path, environ))
        else:
            found += claude_checks.agents_md_findings(here / name, view)
    if claude.AGENT in agents and claude_checks.is_auto_memory(path, environ):
        found += claude_checks.auto_memory_findings(path)
    readers = {codex.AGENT, wave.AGENT, claude.AGENT, cursor.AGENT, copilot.AGENT}  # they all read AGENTS.md
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


def readers(path: Path, agents: Sequence[str], settings: Settings,
            environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Those of AGENTS that load memory file PATH by its name (from its own directory)."""
    name = path.name
    reads = {gemini.AGENT: name in settings.filenames,
             codex.AGENT: name in codex_names(environ),
             claude.AGENT: name in CLAUDE_NAMES or (
                 name == AGENTS_MD and claude_reads_agents_md(Path(os.path.realpath(path.parent)) / name, environ)),
             wave.AGENT: name == AGENTS_MD, cursor.AGENT: name == cursor.LEGACY,  # its rules: core/agents/scoped.py
             copilot.AGENT: name.lower() in copilot.TAGGED_NAMES,
             copilot_vscode.AGENT: name in ("AGENTS.md", "CLAUDE.md", "CLAUDE.local.md", "copilot-instructions.md")}
    return tuple(a for a in agents if reads[a])


# What each agent does with a file's text beyond its entries: Claude Code follows `@path` imports
# but skips a missing one (and imports from anywhere), Codex and Wave follow none; the merged-memory
# budget is Gemini's (the others': `agent_findings`).
RULES = {claude.AGENT: Rules(frozenset({IMPORT_NOT_FOUND}), False),
         codex.AGENT: Rules(frozenset(), False), wave.AGENT: Rules(frozenset(), False),
         cursor.AGENT: Rules(frozenset(), False), copilot.AGENT: Rules(frozenset(), False),
         copilot_vscode.AGENT: Rules(frozenset(), False)}


def agent_chain(agent: str, path: Path, settings: Settings, environ: Mapping[str, str] | None = None,
                reader: Reader | None = None) -> list[Source]:
    """The files AGENT loads before memory file PATH when started in PATH's directory, read as
    sources to check PATH's entries against (all it loads when PATH is not among them)."""
    view = agent_view(agent, Path(os.path.realpath(path.parent)), settings, environ=environ)
    real = os.path.realpath(path)
    before: list[Source] = []
    for s in view.sources:
        if os.path.realpath(s.path) == real:
            break
        got = (reader(s.path) if reader else read_memory_file(s.path, settings.max_file_bytes)) if s.loaded else None
        if got is not None and got.loadable:
            before.append(Source(s.path, Scope.PROJECT, True, got.size, 0, text=got.text))
    return before


def file_findings(path: Path, enabled: Sequence[str], settings: Settings, environ: Mapping[str, str] | None = None,
                  indexer: Indexer = index_entries, reader: Reader | None = None,
                  analyses: Analyses = FRESH) -> list[Finding]:
    """Every finding of memory file PATH for the ENABLED agents: the checks of its text, as each
    agent that loads it does (Gemini's rules when Gemini is one of them, or when none is: a file
    checked by name), then the per-agent budget and shadowing findings. INDEXER parses entries,
    READER reads files, ANALYSES finds secrets and near copies (`check_file`)."""
    who = readers(path, enabled, settings, environ)
    if not who or gemini.AGENT in who:
        own = check_file(path, settings, indexer=indexer, reader=reader, analyses=analyses)
    else:
        own = []
        for agent in who:
            found = check_file(path, settings, chain=lambda: agent_chain(agent, path, settings, environ, reader),
                               rules=RULES[agent], indexer=indexer, reader=reader, analyses=analyses)
            own += [f for f in found if f not in own]
        own.sort(key=lambda f: f.line)
    return own + (agent_findings(path, enabled, settings, environ) if os.path.isfile(path) else [])


def check_targets(paths: Sequence[str | os.PathLike[str]], settings: Settings, agents: Sequence[str] | None = None,
                  progress: CheckProgress | None = None, environ: Mapping[str, str] | None = None) -> CheckReport:
    """`memory-lens check PATHS`. A FILE is checked whoever loads it. A directory: its chain and
    every memory file under it of a name some enabled agent reads (the language server's scan,
    PROGRESS told of it), each checked as those agents load it. Without PATHs: the project of the
    current directory (its root as a directory), or outside any project the current directory's
    chain and own files. AGENTS: as given, else `settings.agents`, else Gemini plus the agents
    whose files are among those found. Each finding and each file is reported once."""
    from memory_lens.core.scan import scan_tree  # only a directory walks a tree

    names = (*scan_names(settings, environ), *INSTRUCTION_NAMES)
    targets: dict[Path, bool] = {}  # every file found, in order: whether it was named itself
    walked: dict[Path, list[Path]] = {}  # the directories walked, and their rules folders' holders
    project_root = None
    for raw in paths or [None]:
        if raw is None:
            directory = resolve_target(None)
            project_root = find_project_root(directory)
            if project_root is None:
                targets.update(dict.fromkeys((s.path for s in load_memory(directory, settings).sources), False))
                targets.update(dict.fromkeys((directory / n for n in names if os.path.isfile(directory / n)), False))
                continue
            directory = project_root
        else:
            p = Path(os.path.abspath(os.path.expanduser(os.fspath(raw))))
            if not os.path.isdir(p):
                targets[p] = True
                continue
            directory = resolve_target(p)
        if progress is not None:
            progress.scanning(directory)
        memory_files, walked[directory] = scan_tree(directory, names, RULE_HOLDERS)
        found = [*(s.path for s in load_memory(directory, settings).sources),
                 *(p for p in memory_files if is_instruction_file(p))]
        targets.update((f, targets.get(f, False)) for f in found)
    enabled = tuple(agents or settings.agents or present_agents(targets, environ))
    if claude.AGENT in enabled:  # the auto memory of each project walked (core/agents/claude_checks.py)
        for directory in walked:
            memory = claude.auto_memory_file(directory, claude.claude_dir(environ))
            if os.path.isfile(memory):
                targets.setdefault(memory, False)
    # The other agents' user-level files: their own text's checks, a secret whichever agents are enabled.
    users = {p: a for d in walked for p, a in user_files(d, settings, environ).items() if p not in targets}
    findings: list[Finding] = []
    checked: list[Path] = []
    seen: set[tuple[str, int, str, str]] = set()
    # Each file is checked against the files above it, so a directory's chain would be parsed once
    # per file below it (4.4 times per file on the large benchmark tree): the files are walked in
    # tree order, so the last 64 parses cover the chains in use (docs/performance.md); the others
    # come from the parse cache the language server fills too (`core/entry_cache.py`), when the
    # file's text was parsed before.
    from memory_lens.core.entry_cache import shared_cache

    cache = shared_cache()  # secret findings and near copies too, of the texts checked before
    indexer = lru_cache(maxsize=64)(cache.entries)
    reader = RunReads(settings.max_file_bytes)  # each file read once, not once per file below it
    for done, (path, named) in enumerate(targets.items(), start=1):
        batch: list[Finding] | None = None
        if named and rule_folder(path) is not None:
            batch = rule_file_findings([path]) + instruction_findings(path, settings, rules_file=True)
        elif named or readers(path, enabled, settings, environ):
            try:
                batch = file_findings(path, enabled, settings, environ, indexer, reader, cache)
            except TargetError:
                if named:
                    raise  # else removed since the scan found it
        elif os.path.isfile(path):  # no enabled agent loads it: its own text, whether one should (not-loaded)
            batch = instruction_findings(path, settings, whole=False) + agent_findings(path, enabled, settings, environ)
        if batch is not None:
            checked.append(path)
            for f in batch:
                key = (str(f.path), f.line, f.code, f.message)
                if key not in seen:
                    seen.add(key)
                    findings.append(f)
        if progress is not None and not named:
            progress.checked(done, len(targets))
    chosen = agents or settings.agents
    batches: list[list[Finding]] = []
    for directory, holders in walked.items():  # its rules files, then a walk for all their globs (core/agents/scoped.py)
        every = [p for p in rules_below(holders) if rule_folder(p) is not None and p not in targets]
        rules = [p for p in every if not chosen or rule_folder(p)[1] in chosen]  # type: ignore[index]
        batches.append(rule_file_findings(rules, directory))
        batches += [instruction_findings(p, settings, p in rules, rules_file=True) for p in every]  # a secret in any
        checked += every
    batches += [instruction_findings(p, settings, agent in enabled) for p, agent in users.items()]
    checked += users
    for f in (f for batch in batches for f in batch):
        key = (str(f.path), f.line, f.code, f.message)
        if key not in seen:
            seen.add(key)
            findings.append(f)
    return CheckReport(findings, checked, project_root, enabled)


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
        if rule_folder(path) is not None:  # a scoped rules file (core/agents/scoped.py)
            return rule_file_findings([path])
        if claude_checks.is_auto_memory(path, environ):
            return claude_checks.auto_memory_findings(path) if claude.AGENT in (settings.agents or AGENTS) else []
        if path.name not in (agent_file_names(environ) if names is None else names) or not os.path.isfile(path):
            return []  # a file of no agent's own names (GEMINI.md): nothing more to check
        return agent_findings(path, settings.agents or chain_agents(path, environ), settings, environ)
    except OSError:  # changed while being read: the next check sees it settled
        return []
