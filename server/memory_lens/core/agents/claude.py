"""What Claude Code loads at startup: CLAUDE.md files in tiers, and what they import.

The rules follow Claude Code's memory documentation (pinned in docs/agents.md):

- tiers, in load order: managed policy (`/etc/claude-code/CLAUDE.md` on Linux), user
  (`~/.claude/CLAUDE.md`, or `$CLAUDE_CONFIG_DIR/CLAUDE.md`), then for every directory from the
  top down to the working directory (the filesystem root `/` itself excluded) its `CLAUDE.md`,
  `.claude/CLAUDE.md` (project) and `CLAUDE.local.md` (local); in a directory with neither
  `CLAUDE.md` nor `.claude/CLAUDE.md`, its `AGENTS.md` (project) instead, as the issue asks and
  recent versions are reported to do (docs/agents.md says what the documentation says); the same
  real file loads once;
- `@path` imports, outside Markdown code spans and code blocks: relative to the importing file,
  `~/` for the home directory, absolute paths allowed; imported files import further, at most
  5 hops deep; a missing file or one already loaded is skipped. An imported file is loaded as a
  file of its own, right after the file that imports it;
- each loaded, non-empty file is shown to the model as `Contents of PATH (DESCRIPTION):` and its
  text, files separated by a blank line;
- a file over 40,000 characters gets Claude Code's "large CLAUDE.md" warning.

Files in subdirectories below the working directory load only when Claude reads files there:
they are not part of this startup view.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Mapping

from memory_lens.core.agents.common import AgentSource, AgentView, decode_lossy, read_raw

AGENT = "claude"
MANAGED_FILE = Path("/etc/claude-code/CLAUDE.md")
ENV_CONFIG_DIR = "CLAUDE_CONFIG_DIR"
AGENTS_FALLBACK = "AGENTS.md"
MAX_IMPORT_DEPTH = 5
LARGE_FILE_CHARS = 40_000
READ_LIMIT = 16 * 1024 * 1024
DESCRIPTIONS = {
    "managed": "managed policy instructions",
    "user": "user's private global instructions for all projects",
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
}
_MENTION = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(`+)[\s\S]*?\1")


def claude_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_CONFIG_DIR, "")
    return Path(os.path.expanduser(raw)) if raw else Path.home() / ".claude"


def startup_files(target_dir: Path, user_dir: Path, managed: Path = MANAGED_FILE) -> list[tuple[Path, str]]:
    """Every path Claude Code looks at when started in TARGET_DIR, with its tier, in load order."""
    files = [(managed, "managed"), (user_dir / "CLAUDE.md", "user")]
    dirs = [d for d in (target_dir, *target_dir.parents) if d != d.parent]
    for directory in reversed(dirs):
        files += [(p, "project") for p in project_files(directory)]
        files.append((directory / "CLAUDE.local.md", "local"))
    return files


def project_files(directory: Path) -> list[Path]:
    """The project files Claude Code reads in DIRECTORY: `CLAUDE.md` and `.claude/CLAUDE.md`, or
    `AGENTS.md` in their place when the directory has neither."""
    own = [directory / "CLAUDE.md", directory / ".claude" / "CLAUDE.md"]
    if any(os.path.isfile(p) for p in own):
        return own
    return [directory / AGENTS_FALLBACK]


def import_targets(text: str) -> list[str]:
    """The `@path` mentions of TEXT outside fenced code blocks and code spans, in order."""
    kept, fence = [], None
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            continue
        if fence is not None:
            if m and m.group(1).startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        kept.append(line)
    prose = _SPAN.sub(lambda s: " " * len(s.group(0)), "\n".join(kept))
    return [m.group(1).replace("\\ ", " ") for m in _MENTION.finditer(prose)]


def resolve_import(target: str, importing: Path, home: Path) -> Path:
    """Where `@TARGET` in file IMPORTING points."""
    if target.startswith("~/"):
        return home / target[2:]
    return Path(os.path.normpath(importing.parent / target))


def load_view(target_dir: Path, environ: Mapping[str, str] | None = None,
              managed: Path = MANAGED_FILE) -> AgentView:
    """What Claude Code loads when started in TARGET_DIR (an existing, resolved directory)."""
    home = Path.home()
    sources: list[AgentSource] = []
    blocks: list[str] = []
    warnings: list[str] = []
    trace: list[str] = []
    seen: set[str] = set()

    def load(path: Path, tier: str, depth: int, parent: Path | None) -> None:
        got = read_raw(path, READ_LIMIT)
        if got.missing:
            if parent is not None:
                trace.append(f"import @{path} from {parent}: not found (skipped)")
            return
        real = os.path.realpath(path)
        if real in seen:
            trace.append(f"{tier} {path}: already loaded (skipped)")
            return
        seen.add(real)
        shown_tier = "import" if parent is not None else tier
        if got.reason:
            sources.append(AgentSource(path, shown_tier, got.size, False, reason=got.reason, imported_from=parent))
            warnings.append(f"{path}: {got.reason}")
            return
        if got.size > READ_LIMIT:
            reason = f"is too large ({got.size} bytes): Memory Lens reads at most {READ_LIMIT} bytes of it"
            sources.append(AgentSource(path, shown_tier, got.size, False, reason=reason, imported_from=parent))
            warnings.append(f"{path}: {reason}")
            return
        text = decode_lossy(got.data)
        sources.append(AgentSource(path, shown_tier, got.size, bool(text.strip()),
                                   reason="" if text.strip() else "empty", imported_from=parent))
        trace.append(f"{shown_tier} {path}: loaded ({got.size} bytes)")
        if text.strip():
            blocks.append(f"Contents of {path} ({DESCRIPTIONS[tier]}):\n{text}")
            if len(text) > LARGE_FILE_CHARS:
                warnings.append(f"{path}: {len(text)} characters, over Claude Code's {LARGE_FILE_CHARS}-character "
                                "large-file warning threshold (it warns that a large CLAUDE.md hurts performance)")
        for target in import_targets(text):
            if depth >= MAX_IMPORT_DEPTH:
                warnings.append(f"{path}: @{target} is not imported: Claude Code follows imports "
                                f"{MAX_IMPORT_DEPTH} hops deep at most")
                continue
            load(resolve_import(target, path, home), tier, depth + 1, path)

    for path, tier in startup_files(target_dir, claude_dir(environ), managed):
        load(path, tier, 0, None)
    return AgentView(AGENT, target_dir, None, tuple(sources), "\n\n".join(blocks), tuple(warnings), tuple(trace))
