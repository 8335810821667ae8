"""What Claude Code loads: at start in the start directory, and when it reads a file.

Verified against Claude Code 2.1.328 (docs/agents.md, tests/fidelity/test_real_agents.py):

- at start, in this order: the managed policy file; the user's `CLAUDE.md` and `rules/**/*.md`
  in `~/.claude` (or `$CLAUDE_CONFIG_DIR`); for every directory from the top down to the start
  directory (the filesystem root itself excluded) its `CLAUDE.md`, `.claude/CLAUDE.md`, the
  `.claude/rules/**/*.md` without `paths:` and `CLAUDE.local.md`; then the auto memory
  `MEMORY.md` of the project, cut at 200 lines or 25,000 characters;
- the built-in AGENTS.md plugin then adds `AGENTS.md` and `.claude/AGENTS.md` of the start
  directory and every directory above it, by its `instructionFiles` mode (default: only when no
  `CLAUDE.md`, `.claude/CLAUDE.md` or `CLAUDE.local.md` is in the loaded chain);
- `@path` imports (not in code, not in HTML comments) load right after their file, four hops
  deep at most; a file outside the start directory is imported only once the project's
  `hasClaudeMdExternalIncludesApproved` is set in `~/.claude.json` (always for a user file);
- each file's text is trimmed as JavaScript's `trim()` trims it; an empty file loads nothing;
- when Claude reads a file: the `CLAUDE.md`/`CLAUDE.local.md` files between the start directory
  and the file (below the start directory), and the rules whose `paths:` globs match it.
"""

from __future__ import annotations

import json
import os
import re
import sys
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from memory_lens.core.agents.common import (AgentSource, AgentView, Kept, decode_lossy, git_root, look, read_raw, settled,
                                            withheld_reason)
from memory_lens.core.agents.claude_rules import front_matter, rule_matches
from memory_lens.core.file_identity import Identity, file_identity
from memory_lens.core.imports import ImportBudget, limit_message
from memory_lens.core.node_paths import JS_WHITESPACE, js_trim

AGENT = "claude"
MANAGED_FILE = Path({"darwin": "/Library/Application Support/ClaudeCode/CLAUDE.md",
                     "win32": "C:/Program Files/ClaudeCode/CLAUDE.md"}.get(sys.platform, "/etc/claude-code/CLAUDE.md"))
ENV_CONFIG_DIR = "CLAUDE_CONFIG_DIR"
AGENTS_FALLBACK = "AGENTS.md"
AGENTS_NAMES = ("AGENTS.md", ".claude/AGENTS.md")
CLAUDE_NAMES = ("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md")
PLUGIN_ID = "cc-plugin-agents-md@builtin"
MODES = ("claude-md", "claude-md-or-agents-md", "claude-md-and-agents-md", "managed-only")
LEGACY_MODES = {"none": "managed-only", "claude": "claude-md", "agents-fallback": "claude-md-or-agents-md",
                "both": "claude-md-and-agents-md"}
DEFAULT_MODE = "claude-md-or-agents-md"
MAX_IMPORT_DEPTH = 5  # the top file is depth 0: imports go four hops deep
LARGE_FILE_CHARS = 40_000
READ_LIMIT = 16 * 1024 * 1024
MEMORY_MAX_LINES = 200
MEMORY_MAX_CHARS = 25_000
DESCRIPTIONS = {
    "managed": " (organization-managed policy instructions)",
    "user": " (user's private global instructions for all projects)",
    "project": " (project instructions, checked into the codebase)",
    "local": " (user's private project instructions, not checked in)",
    "memory": " (user's auto-memory, persists across conversations)",
}
_MENTION = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(`+)[\s\S]*?\1")
_COMMENT_BLOCK = re.compile(r"^ {0,3}<!--[\s\S]*?-->[ \t]*(?:\n|\Z)", re.M)
_SAFE = re.compile(r"[^A-Za-z0-9]")


def js_trim_start(text: str) -> str:
    return text.lstrip(JS_WHITESPACE)


def claude_dir(environ: Mapping[str, str] | None = None) -> Path:
    """`$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_CONFIG_DIR, "")
    return Path(os.path.expanduser(raw)) if raw else Path.home() / ".claude"


def global_config_file(environ: Mapping[str, str] | None = None) -> Path:
    """`~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set)."""
    env = os.environ if environ is None else environ
    return claude_dir(env) / ".claude.json" if env.get(ENV_CONFIG_DIR) else Path.home() / ".claude.json"


def _read_json(path: Path, problems: list[str]) -> dict:
    got = read_raw(path, READ_LIMIT, confine=False)
    if got.missing:
        return {}
    try:
        data = json.loads(decode_lossy(got.data)) if got.ok else None
    except ValueError as err:
        problems.append(f"{path}: not valid JSON ({err}); Claude Code refuses to start until it is fixed; "
                        "shown as if it were empty")
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: " + (got.reason or "not a JSON object") + "; shown as if it were empty")
        return {}
    return data


@dataclass
class Config:
    """What Claude Code's settings say about memory files."""

    home: Path
    user_dir: Path
    approved: bool = False  # external imports approved for the project
    mode: str = DEFAULT_MODE
    excludes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_config(start: Path, environ: Mapping[str, str] | None) -> Config:
    config = Config(Path.home(), claude_dir(environ))
    glob = _read_json(global_config_file(environ), config.problems)
    project = (glob.get("projects") or {}).get(str(start)) if isinstance(glob.get("projects"), dict) else None
    config.approved = isinstance(project, dict) and project.get("hasClaudeMdExternalIncludesApproved") is True
    user = _read_json(config.user_dir / "settings.json", config.problems)
    options = ((user.get("pluginConfigs") or {}).get(PLUGIN_ID) or {}).get("options") or {} \
        if isinstance(user.get("pluginConfigs"), dict) else {}
    mode = options.get("instructionFiles") if isinstance(options, dict) else None
    legacy = options.get("projectInstructions") if isinstance(options, dict) else None
    if mode is None and isinstance(legacy, str):
        mode = LEGACY_MODES.get(legacy, "claude-md")
    config.mode = mode if mode in MODES else DEFAULT_MODE
    for layer in (user, _read_json(start / ".claude" / "settings.json", config.problems),
                  _read_json(start / ".claude" / "settings.local.json", config.problems)):
        found = layer.get("claudeMdExcludes")
        if isinstance(found, list):
            config.excludes += [p for p in found if isinstance(p, str) and p]
    return config


def auto_memory_file(start: Path, user_dir: Path) -> Path:
    """`<config dir>/projects/<project root, every non-alphanumeric character as '-'>/memory/MEMORY.md`."""
    root = git_root(start) or start
    return user_dir / "projects" / _SAFE.sub("-", str(root)) / "memory" / "MEMORY.md"


def import_targets(text: str) -> list[str]:
    """The `@path` mentions of TEXT Claude Code imports: outside code blocks, code spans and HTML
    comments, `#fragment` dropped, `\\ ` read as a space, starting as a path does."""
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
    prose = _SPAN.sub(lambda s: " " * len(s.group(0)), re.sub(r"<!--[\s\S]*?-->", " ", "\n".join(kept)))
    out = []
    for m in _MENTION.finditer(prose):
        target = m.group(1).split("#", 1)[0].replace("\\ ", " ")
        if not target:
            continue
        if (target.startswith(("./", "~/")) or (target.startswith("/") and target != "/")
                or (re.match(r"[A-Za-z0-9._-]", target) and not re.match(r"[#%^&*()]+", target))):
            out.append(target)
    return out


def without_comments(text: str) -> str:
    """TEXT without its HTML comment blocks, as Claude Code shows a file that has them."""
    return _COMMENT_BLOCK.sub("", text) if "<!--" in text else text


def resolve_import(target: str, importing: Path, home: Path) -> Path:
    if target.startswith("~/"):
        return Path(os.path.normpath(home / target[2:]))
    return Path(os.path.normpath(importing.parent / target))


def inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def memory_text(raw: str) -> tuple[str, int | None]:
    """The auto memory's text as Claude Code shows it, and the 1-based line it cuts at (None: whole)."""
    text = js_trim(re.sub(r"\r\n?|[\u2028\u2029]", "\n", raw))
    lines, size = text.count("\n") + 1, len(text)
    over_lines, over_size = lines > MEMORY_MAX_LINES, size > MEMORY_MAX_CHARS
    if not over_lines and not over_size:
        return text, None
    kept = "\n".join(text.split("\n")[:MEMORY_MAX_LINES]) if over_lines else text
    if len(kept) > MEMORY_MAX_CHARS:
        at = kept.rfind("\n", 0, MEMORY_MAX_CHARS + 1)
        kept = kept[:at if at > 0 else MEMORY_MAX_CHARS]
    kept_lines = kept.count("\n") + 1 if text[len(kept):len(kept) + 1] == "\n" else 0
    nxt_end = text.find("\n", len(kept) + 1)
    nxt = js_trim(text[len(kept) + 1:nxt_end if nxt_end >= 0 else None])
    if kept_lines == 0:
        cut = f"everything after the first {len(kept)} characters of line 1 was cut off"
    else:
        cut = (f"{lines - kept_lines} of {lines} lines were cut off, starting at line {kept_lines + 1}"
               + (f' ("{_shorten(nxt, 80)}")' if nxt else ""))
    what = (f"{_size(size)} (limit: {_size(MEMORY_MAX_CHARS)}) \u2014 index entries are too long"
            if over_size and not over_lines else f"{lines} lines (limit: {MEMORY_MAX_LINES})"
            if over_lines and not over_size else f"{lines} lines and {_size(size)}")
    warning = (f"MEMORY.md is {what}. Only part of it was loaded: {cut}. Keep index entries to one line "
               "under ~200 chars; move detail into topic files.")
    return f"{kept}\n\n> WARNING: {warning}", (kept_lines or 1) + (1 if kept_lines else 0)


def _size(n: int) -> str:
    k = n / 1024
    return f"{n} bytes" if k < 1 else f"{k:.1f}".removesuffix(".0") + "KB"


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    m = re.search(r"\s\S*$", head)
    cut = "" if m is None else head[:m.start()].rstrip()
    return f"{cut if len(cut) > limit / 2 else head.rstrip()}\u2026"


@dataclass
class Loaded:
    """One file Claude Code loads, with the text it shows."""

    source: AgentSource
    kind: str  # managed, user, project, local, memory
    text: str  # as shown (trimmed)
    parent: Path | None = None
    globs: tuple[str, ...] = ()
    raw: str = ""  # as Claude Code attaches it after a read: untrimmed, front matter and what precedes the body off


@dataclass(frozen=True)
class _Parsed:
    """What one file's bytes give, whoever loads it: the same until the file changes."""

    size: int
    problem: str  # why its front matter could not be read
    globs: tuple[str, ...]
    text: str  # as shown (trimmed, HTML comment blocks out)
    raw_body: str
    targets: tuple[str, ...]  # its `@path` imports, unresolved


# Parsed files by path, kept while their identity (one `stat`) is unchanged and was settled when
# read (`common.settled`): the language server
# asks for the same project's view on every request, and its rules files rarely change.
PARSED_CACHE_SIZE = 2048
_PARSED: dict[str, tuple[Identity, _Parsed]] = {}


def _parse(raw: str, size: int) -> _Parsed:
    fm = front_matter(raw)
    raw_body = fm.body if fm.body is raw else js_trim_start(fm.body)
    return _Parsed(size, fm.problem, fm.globs, js_trim(without_comments(fm.body)), raw_body,
                   tuple(import_targets(fm.body)))


class Loader:
    """Claude Code's walk over the files of one start directory."""

    def __init__(self, start: Path, config: Config) -> None:
        self.start, self.config = start, config
        self.real_start = os.path.realpath(start)
        self.seen: set[str] = set()
        self.warnings: list[str] = list(config.problems)
        self.trace: list[str] = []
        self.excluded = _exclude_matcher(config.excludes)
        self.budget = ImportBudget()  # Memory Lens's bound on every mention and what they pull in
        self.held: dict[Path, list[Loaded]] = {}  # rules folder: its rules with paths:, read at start
        self._links: dict[str, bool] = {}

    def real(self, path: Path) -> str:
        """PATH's real path; the path itself (no system call past the first) when no directory on
        its way and not PATH itself is a link, as in a project tree."""
        text = os.path.normpath(str(path))
        parent = os.path.dirname(text)
        linked = self._links.get(parent)
        if linked is None:
            linked = self._links[parent] = os.path.realpath(parent) != parent
        return os.path.realpath(text) if linked or os.path.islink(text) else text

    def load(self, path: Path, kind: str, external_ok: bool, depth: int = 0, parent: Path | None = None,
             when: str = "start", matched_by: str = "") -> list[Loaded]:
        """PATH and what it imports, in load order (nothing when it is missing, seen or excluded)."""
        key = os.path.normpath(str(path))
        if key in self.seen or depth >= MAX_IMPORT_DEPTH:
            return []
        if kind in ("user", "project", "local") and self.excluded(key):
            self.trace.append(f"{path}: left out by claudeMdExcludes")
            return []
        real = self.real(path)
        if depth > 0 and not external_ok and not inside(real, self.real_start):
            look(path)
            if os.path.isfile(path):
                self.warnings.append(f"{parent}: @{path} is outside the start directory {self.start}: not loaded, "
                                     "needs approval in Claude Code (hasClaudeMdExternalIncludesApproved)")
            return []
        look(key)
        ident, cached = file_identity(path), _PARSED.get(key)
        got = None
        if (kind == "memory" or ident is None or cached is None or cached[0] != ident
                or withheld_reason(path) is not None):
            got = read_raw(path, READ_LIMIT)
            if got.missing:
                return []
        if real in self.seen:
            return []
        self.seen.update((key, real))
        tier = "import" if parent is not None else kind
        if got is not None and (not got.ok or got.size > READ_LIMIT):
            why = got.reason or f"is too large ({got.size} bytes): Memory Lens reads at most {READ_LIMIT} bytes of it"
            self.warnings.append(f"{path}: {why}")
            return [Loaded(AgentSource(path, tier, got.size, False, reason=why, imported_from=parent), kind, "")]
        if kind == "memory":
            text, cut_line = memory_text(decode_lossy(got.data))
            if cut_line is not None:
                self.warnings.append(f"{path}:{cut_line}: Claude Code loads the first {MEMORY_MAX_LINES} lines or "
                                     f"{MEMORY_MAX_CHARS} characters of MEMORY.md; it never sees line {cut_line} onward")
            src = AgentSource(path, tier, got.size, bool(text), when=when, cut_line=cut_line)
            return [Loaded(src, kind, text)] if text else []
        if got is None:
            parsed = cached[1]
        else:
            parsed = _parse(decode_lossy(got.data), got.size)
            if ident is not None and settled(ident):
                if len(_PARSED) >= PARSED_CACHE_SIZE:
                    _PARSED.clear()
                _PARSED[key] = (ident, parsed)
        if parsed.problem:
            self.warnings.append(f"{path}:1: {parsed.problem}")
        if not parsed.text:
            return []
        src = AgentSource(path, tier, parsed.size, True, imported_from=parent, when=when, matched_by=matched_by)
        out = [Loaded(src, kind, parsed.text, parent, parsed.globs, parsed.raw_body)]
        self.budget.spend(len(parsed.text) if parent is not None else 0)
        for target in parsed.targets:
            if not self.budget.take():
                if self.budget.mark():
                    self.warnings.append(f"{path}: @{target} is {limit_message('Claude Code')}")
                break
            resolved = resolve_import(target, path, self.config.home)
            if depth + 1 >= MAX_IMPORT_DEPTH:
                look(resolved)
                if os.path.isfile(resolved):
                    self.warnings.append(f"{path}: @{target} is not imported: Claude Code follows imports "
                                         f"{MAX_IMPORT_DEPTH - 1} hops deep at most")
                continue
            out += self.load(resolved, kind, external_ok, depth + 1, path, when)
        return out

    def rules(self, folder: Path, kind: str, external_ok: bool, conditional: bool, visited: set[str] | None = None
              ) -> list[Loaded]:
        """The rules in FOLDER (recursively, in directory order): those without `paths:` (and
        what every rule imports), or with CONDITIONAL those with `paths:`."""
        visited = set() if visited is None else visited
        real = self.real(folder)
        if real in visited:
            return []
        visited.add(real)
        look(folder)
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            return []
        out: list[Loaded] = []
        for entry in entries:
            path = folder / entry.name
            if entry.is_dir():
                out += self.rules(path, kind, external_ok, conditional, visited)
            elif entry.name.endswith(".md") and entry.is_file():
                got = self.load(path, kind, external_ok)
                out += [f for f in got if bool(f.globs) == conditional]
                if not conditional and got and got[0].globs:
                    self.held.setdefault(folder, []).extend(got[:1])
        return out


def _exclude_matcher(patterns: list[str]):
    if not patterns:
        return lambda path: False
    from memory_lens.core.agents.claude_rules import glob_matcher
    match = glob_matcher([p.replace("\\", "/") for p in patterns])
    return lambda path: match(path.replace("\\", "/"))


def startup(loader: Loader, managed: Path) -> list[Loaded]:
    """What loads at start, before the AGENTS.md plugin."""
    config, start = loader.config, loader.start
    out = loader.load(managed, "managed", False)
    out += loader.load(config.user_dir / "CLAUDE.md", "user", True)
    out += loader.rules(config.user_dir / "rules", "user", True, False)
    dirs = [d for d in (start, *start.parents) if d != d.parent]
    for directory in reversed(dirs):
        out += loader.load(directory / "CLAUDE.md", "project", config.approved)
        out += loader.load(directory / ".claude" / "CLAUDE.md", "project", config.approved)
        out += loader.rules(directory / ".claude" / "rules", "project", config.approved, False)
        out += loader.load(directory / "CLAUDE.local.md", "local", config.approved)
    out += loader.load(auto_memory_file(start, config.user_dir), "memory", True)
    return out


def project_dir_of(path: Path) -> Path:
    """The directory a project file belongs to: its own, or the one holding its `.claude`."""
    text = str(path)
    at = text.rfind(f"{os.sep}.claude{os.sep}")
    return Path(text[:at]) if at > 0 else path.parent


def chain_root(item: Loaded, by_path: dict[Path, Loaded]) -> Path:
    seen = {item.source.path}
    while item.parent is not None and item.parent in by_path and item.parent not in seen:
        item = by_path[item.parent]
        seen.add(item.source.path)
    return item.source.path


def with_agents_md(loader: Loader, files: list[Loaded]) -> tuple[list[Loaded], list[Path]]:
    """FILES with the `AGENTS.md` files the plugin adds (its mode from the user's settings), and
    the `AGENTS.md` files it leaves out because a `CLAUDE.md` is in the chain."""
    mode, start = loader.config.mode, loader.start
    if mode == "managed-only":
        return [f for f in files if f.kind not in ("project", "local", "user")], []
    dirs = [d for d in (start, *start.parents) if d != d.parent]
    loaded = {loader.real(f.source.path) for f in files}
    probed = [d / n for d in reversed(dirs) for n in AGENTS_NAMES]
    for p in probed:
        look(p)
    candidates = [p for p in probed if os.path.isfile(p) and loader.real(p) not in loaded]
    if mode == "claude-md" or not candidates:
        return files, []
    if mode == DEFAULT_MODE:
        claude_here = any(f.parent is None and f.kind in ("project", "local")
                          and any(str(f.source.path).endswith(os.sep + n.replace("/", os.sep)) for n in CLAUDE_NAMES)
                          for f in files)
        if claude_here:
            return files, candidates
    shown = {js_trim(f.text) for f in files if f.kind in ("project", "local")}
    added: list[Loaded] = []
    for path in candidates:
        for item in loader.load(path, "project", loader.config.approved):
            if not item.text or js_trim(item.text) not in shown:
                added.append(item)
    if not added:
        return files, []
    out = list(files)
    by_path = {f.source.path: f for f in added}
    groups: dict[Path, list[Loaded]] = {}
    for item in added:
        groups.setdefault(project_dir_of(chain_root(item, by_path)), []).append(item)
    for directory, items in groups.items():
        out[_insertion_index(out, directory):0] = items
    return out, []


def _insertion_index(files: list[Loaded], directory: Path) -> int:
    """Where the plugin puts the AGENTS.md files of DIRECTORY: before the first project file of
    a directory below it, else after the last project file, else before the auto memory."""
    by_path = {f.source.path: f for f in files}
    prefix = str(directory).rstrip(os.sep) + os.sep
    for i, f in enumerate(files):
        if f.kind in ("project", "local") and str(project_dir_of(chain_root(f, by_path))).startswith(prefix):
            return i
    last = max((i for i, f in enumerate(files) if f.kind in ("project", "local")), default=None)
    if last is not None:
        return last + 1
    return next((i for i, f in enumerate(files) if f.kind == "memory"), len(files))


def on_read(loader: Loader, file: Path) -> list[Loaded]:
    """What Claude Code attaches when it reads FILE, in its order: the user's rules whose `paths:`
    match; for each directory below the start directory down to FILE's, its `CLAUDE.md`,
    `.claude/CLAUDE.md`, `CLAUDE.local.md` (with their imports), its rules without `paths:` and
    its rules whose `paths:` match; then the matching rules of the start directory and above."""
    start, config = loader.start, loader.config
    real = Path(os.path.realpath(file))
    if not inside(str(real), str(start)):
        return []
    out: list[Loaded] = []
    seen, fresh = loader.seen, set(loader.seen)

    def conditional(folder: Path, base: Path, kind: str) -> list[Loaded]:
        found = [f for held_in, items in loader.held.items() if inside(str(held_in), str(folder)) for f in items]
        if not found:  # a folder below the start directory: not read at start
            loader.seen = set()
            try:
                found = loader.rules(folder, kind, kind == "user" or config.approved, True)
            finally:
                loader.seen = fresh
        return [_on_read(f, glob) if (glob := rule_matches(f.globs, real, base)) is not None else _unmatched(f, real)
                for f in found]

    loader.seen = fresh
    out += conditional(config.user_dir / "rules", start, "user")
    for directory in reversed([d for d in real.parents if inside(str(d), str(start)) and d != start]):
        for path, kind in ((directory / "CLAUDE.md", "project"), (directory / ".claude" / "CLAUDE.md", "project"),
                           (directory / "CLAUDE.local.md", "local")):
            out += [_on_read(f, "") for f in loader.load(path, kind, config.approved)]
        out += [_on_read(f, "") for f in loader.rules(directory / ".claude" / "rules", "project", config.approved,
                                                      False)]
        out += conditional(directory / ".claude" / "rules", directory, "project")
    for directory in reversed([start, *start.parents]):
        if directory != directory.parent:
            out += conditional(directory / ".claude" / "rules", directory, "project")
    loader.seen = seen | fresh
    return out


def _on_read(item: Loaded, glob: str) -> Loaded:
    s = item.source
    return Loaded(AgentSource(s.path, s.tier, s.bytes, s.loaded, s.reason, imported_from=s.imported_from,
                              when="on-read", matched_by=glob), item.kind, item.text, item.parent, item.globs, item.raw)


def _unmatched(item: Loaded, file: Path) -> Loaded:
    """A rule with `paths:` none of which matches FILE: listed, not loaded, with why."""
    s = item.source
    why = ("its front matter cannot be read, so Claude Code never loads it" if "\0invalid" in item.globs
           else f"paths: {', '.join(item.globs)} does not match {file}")
    return Loaded(AgentSource(s.path, s.tier, s.bytes, False, why, imported_from=s.imported_from, when="on-read"),
                  item.kind, "", item.parent, item.globs)


def block(item: Loaded) -> str:
    if item.source.when == "on-read":
        return f"Contents of {item.source.path}:\n\n{item.raw}"
    return f"Contents of {item.source.path}{DESCRIPTIONS[item.kind]}:\n\n{item.text}"


@dataclass(frozen=True)
class _Started:
    """What loads at start in one directory, and the loader's state after it."""

    loader: Loader
    files: tuple[Loaded, ...]
    left_out: tuple[Path, ...]


# What loads at start by start directory, and whole views by start directory and file read, kept
# (`Kept`) while every file and folder they looked at is as it was: the editor asks for the open
# file's view again and again, and walking a project's 200 rules files again cost ~40 ms, the
# on-read part (the directories between the start directory and the file, each rule's `paths:`
# matched) ~10x the check (docs/performance.md, target: memory/effective with agent claude for
# the open file p99 <= 2 ms over stdio).
STARTED_CACHE_SIZE = 64
VIEWS_CACHE_SIZE = 32
_STARTED = Kept(STARTED_CACHE_SIZE)
_VIEWS = Kept(VIEWS_CACHE_SIZE)


def _started(start: Path, environ: Mapping[str, str] | None, managed: Path) -> tuple[Loader, list[Loaded], list[Path]]:
    """A loader in START after what loads at start, those files, and the AGENTS.md files left out."""
    def work() -> _Started:
        loader = Loader(start, read_config(start, environ))
        files, left_out = with_agents_md(loader, startup(loader, managed))
        return _Started(loader, tuple(files), tuple(left_out))

    kept = _STARTED.get(_key(start, environ, managed), work)
    return _fork(kept.loader), list(kept.files), list(kept.left_out)


def _fork(loader: Loader) -> Loader:
    """A copy of LOADER whose state (what it has seen, held, warned of, spent) is its own."""
    out = copy(loader)
    out.seen, out.warnings, out.trace = set(loader.seen), list(loader.warnings), list(loader.trace)
    out.held, out.budget = {k: list(v) for k, v in loader.held.items()}, copy(loader.budget)
    return out


def load_view(target_dir: Path, environ: Mapping[str, str] | None = None, managed: Path = MANAGED_FILE,
              file: Path | None = None) -> AgentView:
    """What Claude Code loads when started in TARGET_DIR (an existing, resolved directory), plus
    what it loads on reading FILE."""
    return _VIEWS.get((*_key(target_dir, environ, managed), str(file or "")),
                      lambda: _load_view(target_dir, environ, managed, file))


def _key(start: Path, environ: Mapping[str, str] | None, managed: Path) -> tuple[str, ...]:
    """What tells one start apart: its directory, the managed file, and the home and
    `$CLAUDE_CONFIG_DIR` that give the user's files (`claude_dir`, `global_config_file`)."""
    env = os.environ if environ is None else environ
    return str(start), str(managed), os.path.expanduser("~"), env.get(ENV_CONFIG_DIR, "")


def _load_view(target_dir: Path, environ: Mapping[str, str] | None, managed: Path, file: Path | None) -> AgentView:
    loader, files, left_out = _started(target_dir, environ, managed)
    if file is not None:
        files += on_read(loader, file)
    sources = [f.source for f in files]
    for path in left_out:
        sources.append(AgentSource(path, "project", os.path.getsize(path), False, when="start",
                                   reason="this project has a CLAUDE.md, so AGENTS.md is off "
                                          "(Claude Code's instructionFiles mode claude-md-or-agents-md)"))
    for f in files:
        if len(f.text) > LARGE_FILE_CHARS and f.kind != "memory":
            loader.warnings.append(f"{f.source.path}: {len(f.text)} characters, over Claude Code's "
                                   f"{LARGE_FILE_CHARS}-character large-file warning threshold")
    text = "\n\n".join(block(f) for f in files if f.text)
    loader.trace += [f"{s.when} {s.tier} {s.path}" for s in sources]
    return AgentView(AGENT, target_dir, git_root(target_dir), tuple(sources), text, tuple(loader.warnings),
                     tuple(loader.trace))
