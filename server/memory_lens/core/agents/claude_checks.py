"""Claude Code's findings on its own files beyond their size (core/agents/budget.py calls these):

- an `@path` import Claude Code does not follow: more than four hops from the memory file
  (`import-depth`), outside the start directory while the project has not approved external
  imports in `~/.claude.json` (`import-outside-root`), or back to a file already imported along
  the chain (`import-cycle`: Claude Code loads it once) — each on the line of the file's own
  mention that leads there;
- a `~/.claude.json` or `settings.json` that is not JSON (`not-loaded`: Claude Code refuses to
  start until it is fixed);
- an `AGENTS.md` the project's `CLAUDE.md` turns off while it has lines no loaded file has
  (`not-loaded`, with the reason);
- the auto memory `MEMORY.md` over its cut (`over-budget` on the first line Claude never sees).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from memory_lens.core.agents import claude
from memory_lens.core.agents.common import AgentView, decode_lossy, read_raw
from memory_lens.core.checks import NOT_LOADED, OVER_BUDGET, Finding
from memory_lens.core.imports import IMPORT_CYCLE, IMPORT_DEPTH, IMPORT_OUTSIDE_ROOT

MAX_MENTIONS = 5000  # as Memory Lens's import bound (core/imports.py ImportBudget)


def _text(path: Path) -> str | None:
    got = read_raw(path, claude.READ_LIMIT)
    return decode_lossy(got.data) if got.ok and got.size <= claude.READ_LIMIT else None


def _mention_line(text: str, target: str) -> int:
    for raw in ("@" + target, "@" + target.replace(" ", "\\ ")):
        at = text.find(raw)
        if at >= 0:
            return text.count("\n", 0, at) + 1
    return 1


def import_findings(path: Path, environ: Mapping[str, str] | None = None) -> list[Finding]:
    """The imports of memory file PATH that Claude Code, started in PATH's directory, does not
    follow: one finding per mention of PATH that leads to the first such import."""
    text = _text(path)
    if text is None or "@" not in text:
        return []
    start = Path(os.path.realpath(path.parent))
    config = claude.read_config(start, environ)
    mentions = [0]
    found: list[Finding] = []
    approval = claude.global_config_file(environ)
    for target in claude.import_targets(text):
        resolved = claude.resolve_import(target, path, config.home)
        why = _problem(resolved, 1, (os.path.realpath(path),), (start, config, approval), set(), mentions)
        if why is not None:
            code, message = why
            line = _mention_line(text, target)
            found.append(Finding(path, line, 1, code, f"claude: @{target}: {message}", line))
    return found


def _problem(file: Path, depth: int, chain: tuple[str, ...], where: tuple[Path, claude.Config, Path],
             done: set[str], mentions: list[int]) -> tuple[str, str] | None:
    """The first import Claude Code does not follow from FILE (imported DEPTH hops from the
    memory file, along CHAIN; WHERE: the start directory, Claude's settings, the file that
    approves external imports): its code and what happens. DONE: files already looked into."""
    start, config, approval = where
    mentions[0] += 1
    if mentions[0] > MAX_MENTIONS or not os.path.isfile(file):
        return None
    real = os.path.realpath(file)
    if not config.approved and not claude.inside(real, str(start)):
        return IMPORT_OUTSIDE_ROOT, (f"{file} is outside the start directory {start}: Claude Code does not load it "
                                     "until the project's external imports are approved (hasClaudeMdExternalIncludes"
                                     f"Approved in {approval})")
    if real in chain:
        return IMPORT_CYCLE, f"{file} is reached again through its own imports (a loop): Claude Code loads it once"
    if real in done:
        return None
    done.add(real)
    text = _text(file)
    if text is None:
        return None
    for target in claude.import_targets(text):
        nested = claude.resolve_import(target, file, config.home)
        if depth + 1 >= claude.MAX_IMPORT_DEPTH:
            if os.path.isfile(nested):
                return IMPORT_DEPTH, (f"{file} imports @{target}, {depth + 1} hops away: Claude Code follows imports "
                                      f"{claude.MAX_IMPORT_DEPTH - 1} hops deep at most, so it does not load it")
            continue
        why = _problem(nested, depth + 1, (*chain, real), where, done, mentions)
        if why is not None:
            return why
    return None


def config_findings(path: Path, environ: Mapping[str, str] | None = None) -> list[Finding]:
    """Claude Code's settings that are not JSON, on line 1 of memory file PATH: it refuses to start."""
    config = claude.read_config(Path(os.path.realpath(path.parent)), environ)
    return [Finding(path, 1, 1, NOT_LOADED, f"claude: Claude Code loads nothing: {problem}", 1)
            for problem in config.problems]


def agents_md_findings(path: Path, view: AgentView) -> list[Finding]:
    """`AGENTS.md` at PATH left out of VIEW (Claude Code started in its project directory)
    because of a `CLAUDE.md`, when it has lines no file of the view has."""
    mine = next((s for s in view.sources if s.path == path and not s.loaded), None)
    text = _text(path) if mine is not None and "AGENTS.md is off" in mine.reason else None
    if not text:
        return []
    seen = {line.strip() for line in view.text.splitlines()}
    missing = [i for i, line in enumerate(text.splitlines(), 1) if line.strip() and line.strip() not in seen]
    if not missing:
        return []
    claude_md = next((s.path for s in view.sources if s.loaded and s.tier in ("project", "local")
                      and s.path.name in ("CLAUDE.md", "CLAUDE.local.md")), None)
    return [Finding(path, 1, 1, NOT_LOADED,
                    f"claude: Claude Code does not load this file: this project has {claude_md or 'a CLAUDE.md'}, so "
                    f"AGENTS.md is off (instructionFiles mode {claude.DEFAULT_MODE}), and {len(missing)} of its lines "
                    f"{'is' if len(missing) == 1 else 'are'} in no file Claude Code loads (the first: line {missing[0]}); import it from CLAUDE.md with "
                    "@AGENTS.md", 1)]


def is_auto_memory(path: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether PATH is an auto memory file: `<config dir>/projects/*/memory/MEMORY.md`."""
    if path.name != "MEMORY.md" or path.parent.name != "memory":
        return False
    projects = os.path.realpath(claude.claude_dir(environ) / "projects")
    return os.path.realpath(path.parent.parent.parent) == projects


def auto_memory_findings(path: Path) -> list[Finding]:
    """The auto memory at PATH over Claude Code's cut: `over-budget` on the first line it never sees."""
    text = _text(path)
    if text is None:
        return []
    _, cut_line = claude.memory_text(text)
    if cut_line is None:
        return []
    return [Finding(path, cut_line, 1, OVER_BUDGET,
                    f"claude: Claude Code loads the first {claude.MEMORY_MAX_LINES} lines or {claude.MEMORY_MAX_CHARS} "
                    f"characters of MEMORY.md: it never sees line {cut_line} onward", cut_line)]
