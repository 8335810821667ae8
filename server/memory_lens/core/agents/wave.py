"""What Wave loads, and where it saves (seed 003, "Memory Management").

- user memory: `~/.wave/memory.md` (FR-004); project memory: `AGENTS.md` in the working directory
  itself, not the project root (FR-003);
- both are combined into the prompt (FR-006): user memory first, then project memory, each
  trimmed, joined with a blank line, empty ones left out (the seed does not fix an order;
  Memory Lens puts the general one first, as every other agent does);
- entries are saved as Markdown bullets (FR-005): `- TEXT` appended at the end of the file,
  through the same safe writer and write policy as every other write.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from memory_lens.core.agents.common import AgentSource, AgentView, look, withheld_reason
from memory_lens.core.discovery import Scope, find_project_root
from memory_lens.core.edit import UnsafeEntryError, entry_text_to_save, format_entry
from memory_lens.core.files import read_memory_file
from memory_lens.core.markdown import detect_eol, normalize, parse
from memory_lens.core.secrets import refuse_secrets
from memory_lens.core.settings import Settings
from memory_lens.core.write_policy import DEFAULT_HINT, directory_area, global_area, project_area
from memory_lens.core.writer import update_memory_file

AGENT = "wave"
USER_DIR_NAME = ".wave"
USER_FILENAME = "memory.md"
PROJECT_FILENAME = "AGENTS.md"


def user_dir() -> Path:
    return Path.home() / USER_DIR_NAME


def memory_files(target_dir: Path) -> list[tuple[Path, str]]:
    """The two files Wave reads in TARGET_DIR, with their tiers, in the order they are combined."""
    return [(user_dir() / USER_FILENAME, "user"), (target_dir / PROJECT_FILENAME, "project")]


def load_view(target_dir: Path, max_file_bytes: int) -> AgentView:
    """What Wave loads when started in TARGET_DIR (an existing, resolved directory)."""
    sources, pieces, warnings = [], [], []
    for path, tier in memory_files(target_dir):
        look(path)
        got = read_memory_file(path, max_bytes=max_file_bytes)
        if not got.exists:
            continue
        why = withheld_reason(path)
        if why is not None:
            sources.append(AgentSource(path, tier, got.size, False, reason=why))
            continue
        if not got.loadable:
            sources.append(AgentSource(path, tier, got.size, False, reason=got.reason))
            warnings.append(f"{path}: skipped: {got.reason}")
            continue
        content = got.agent_text.strip()
        sources.append(AgentSource(path, tier, got.size, bool(content), reason="" if content else "empty"))
        if content:
            pieces.append(content)
    trace = tuple(f"{tier} {path}" for path, tier in memory_files(target_dir))
    return AgentView(AGENT, target_dir, find_project_root(target_dir), tuple(sources), "\n\n".join(pieces),
                     tuple(warnings), trace)


@dataclass(frozen=True)
class BulletPlan:
    text: str  # the entry as saved
    content: str | None  # the new file content; None: an equal entry is already there
    line: int  # 0-based line of the entry


def plan_bullet(content: str, text: str) -> BulletPlan:
    """Plan appending TEXT as a `- ` bullet at the end of CONTENT, unless an equal entry is there."""
    cleaned = entry_text_to_save(text)
    wanted = normalize(cleaned)
    for entry in parse(content).entries:
        if entry.normalized == wanted:
            return BulletPlan(cleaned, None, entry.line)
    eol = detect_eol(content)
    head = content if not content or content.endswith(("\n", "\r")) else content + eol
    line = len(head.splitlines())
    new = head + format_entry(cleaned, eol)
    if not any(e.line == line and e.normalized == wanted for e in parse(new).entries):
        why = ("the file ends inside a code block or an indented block, so a bullet appended there would not "
               "be an entry of its own; close the block, then try again")
        raise UnsafeEntryError(f"the memory file: {why}", line=max(line, 1), reason=why)
    return BulletPlan(cleaned, new, line)


@dataclass(frozen=True)
class WaveSaveResult:
    path: Path
    scope: Scope
    text: str
    line: int  # 0-based
    added: bool
    created: bool


def save_bullet(text: str, target_dir: Path, settings: Settings, scope: Scope | str | None = None,
                hint: str = DEFAULT_HINT, allow_secret: bool = False) -> WaveSaveResult:
    """Save TEXT where Wave keeps it: `AGENTS.md` in TARGET_DIR (project, the default) or
    `~/.wave/memory.md` (global); links and the size limit as SETTINGS say. TEXT holding a secret
    raises SecretError unless ALLOW_SECRET."""
    chosen = Scope(scope) if scope else Scope.PROJECT
    plan_bullet("", text)  # bad text fails before any file is touched
    refuse_secrets(text, allow_secret)
    follow = settings.follow_outside_links
    if chosen is Scope.GLOBAL:
        path, area = user_dir() / USER_FILENAME, global_area(user_dir(), follow, hint)
    else:
        root = find_project_root(target_dir)
        path = target_dir / PROJECT_FILENAME
        area = project_area(root, follow, hint) if root is not None else directory_area(target_dir, follow, hint)
    area = replace(area, max_file_bytes=settings.max_file_bytes)
    existed = path.exists()

    def change(content: str) -> tuple[str | None, BulletPlan]:
        try:
            plan = plan_bullet(content, text)
        except UnsafeEntryError as err:
            raise err.at(path) from None
        return plan.content, plan

    plan = update_memory_file(path, change, area=area)
    return WaveSaveResult(path, chosen, plan.text, plan.line, plan.content is not None,
                          created=not existed and plan.content is not None)
