"""What GitHub Copilot CLI loads: its instruction files, and the scoped ones it only names.

Verified against Copilot CLI 1.0.102 (`@github/copilot`) by the real-agent suite
(tests/fidelity/test_real_agents.py; the rules are pinned in docs/agents.md):

- the git root is the nearest directory holding a `.git` file, or a `.git` directory with `HEAD`,
  `objects/` and `refs/`; without one, the working directory alone;
- attached in `<custom_instruction>` blocks, in this order: `$COPILOT_HOME/copilot-instructions.md`
  (`~/.copilot`); `.github/copilot-instructions.md` of the git root, then of the working
  directory; `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` of the git root, then of the working
  directory; then for each directory between them, nearest first, its
  `.github/copilot-instructions.md`, `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` (names matched
  without regard to case);
- attached as they are (front matter kept), then named in a table the model may open: the
  `*.instructions.md` files under `$COPILOT_HOME/instructions`, then `.github/instructions` and
  `.claude/rules/**/*.md` of the git root and of the working directory, then those under each
  `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` directory, each folder sorted by path. A file applies at
  start when its `applyTo` (`paths:` for a Claude rule) is absent, not a string or list, empty,
  `*`, `**` or `**/*`; any other pattern puts it in the table. `excludeAgent: coding-agent` leaves
  a file out. An `AGENTS.md` of a custom directory is named in a table of its own;
- a leading byte order mark is taken off, nothing else; an empty file is an empty block; a tagged
  file with the same text as one before it is left out (the plain ones are not).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Mapping

from memory_lens.core.agents import scoped
from memory_lens.core.agents.common import AgentSource, AgentView, decode_lossy, kind, look, read_raw

AGENT = "copilot"
ENV_HOME = "COPILOT_HOME"
ENV_DIRS = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"
MODEL_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")
TAGGED_NAMES = ("agents.md", "claude.md", "gemini.md", "copilot-instructions.md")  # by name, case aside
ALWAYS = ("", "*", "**", "**/*")
READ_LIMIT = 16 * 1024 * 1024
MAX_FILES = 2000  # per instructions folder: Memory Lens's bound on a walk of a hostile tree
INSTRUCTIONS_HEAD = (
    "Here is a list of instruction files that contain rules for modifying or creating new code.\n"
    "These files are important for ensuring that the code is modified or created correctly.\n"
    "Please make sure to follow the rules specified in these files when working with the codebase.\n"
    "If you have not already read the file, use the `view` tool to acquire it.\n"
    "Make sure to acquire the instructions before making any changes to the code.\n"
    "| Pattern | File Path | Description |\n| ------- | --------- | ----------- |")
NESTED_HEAD = (
    "Here is a list of nested AGENTS.md files that contain additional agent instructions.\n"
    "These files provide context-specific instructions for different parts of the codebase.\n"
    "Please make sure to follow the rules specified in these files when working with the relevant areas.\n"
    "If you have not already read the file, use the `view` tool to acquire it.\n"
    "Make sure to acquire the instructions before making any changes to the code in those areas.\n"
    "| Directory | File Path | Description |\n| --------- | --------- | ----------- |")
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)


def copilot_home(environ: Mapping[str, str] | None = None) -> Path:
    """`$COPILOT_HOME`, else `~/.copilot`."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_HOME, "")
    return Path(os.path.expanduser(raw)) if raw else Path.home() / ".copilot"


def git_root(start: Path) -> Path | None:
    """The nearest ancestor-or-self of START holding a `.git` file (whatever it says) or a `.git`
    directory with `HEAD`, `objects/` and `refs/` in it, as git checks a repository: Copilot CLI
    1.0.102 takes an empty `.git` directory, or one with `HEAD` alone, for none."""
    for directory in (start, *start.parents):
        dot = directory / ".git"
        for probed in (dot, dot / "HEAD", dot / "objects", dot / "refs") if os.path.isdir(dot) else (dot,):
            look(probed, kind)
        if os.path.isfile(dot) or (os.path.isfile(dot / "HEAD") and os.path.isdir(dot / "objects")
                                   and os.path.isdir(dot / "refs")):
            return directory
    return None


def _named(directory: Path, name: str) -> Path | None:
    """The file of DIRECTORY named NAME, its case aside (Copilot CLI lists the directory)."""
    exact = directory / name
    look(exact)
    if os.path.isfile(exact):
        return exact
    look(directory)
    try:
        with os.scandir(directory) as it:
            for entry in it:
                if entry.name.lower() == name.lower() and entry.is_file():
                    return directory / entry.name
    except OSError:
        pass
    return None


@dataclass(frozen=True)
class FrontMatter:
    pattern: str | None  # applyTo (paths:) as Copilot shows it, lists joined with ", "; None: absent
    description: str
    excluded: bool  # excludeAgent names the coding agent


def _value(lines: list[str], key: str) -> str | list[str] | None:
    """KEY's value in the front matter LINES, read as leniently as Copilot CLI reads it: a quoted
    or plain string, a flow list `[a, b]` or a block list; a number, boolean or null is no value;
    a flow list left open is the string as written."""
    for i, line in enumerate(lines):
        m = re.match(rf"{key}[ \t]*:(.*)$", line)
        if not m:
            continue
        raw = m.group(1).strip()
        if raw.startswith("[") and raw.endswith("]"):
            return [_scalar(v) for v in raw[1:-1].split(",") if v.strip()]
        if raw:
            if raw[:1] not in "\"'" and re.fullmatch(r"[-+]?\d+(\.\d+)?|true|false|null|~", raw, re.I):
                return None
            return _scalar(raw)
        items = []
        for item in lines[i + 1:]:
            mm = re.match(r"[ \t]*-[ \t]+(.*)$", item)
            if not mm:
                break
            items.append(_scalar(mm.group(1)))
        return items or None
    return None


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    return raw


def front_matter(text: str, key: str) -> FrontMatter:
    """TEXT's `---` front matter: the pattern under KEY, the description, excludeAgent."""
    opened = _OPEN.match(text)
    closed = _CLOSE.search(text, opened.end()) if opened else None
    if not opened or not closed:
        return FrontMatter(None, "", False)
    lines = text[opened.end():closed.start()].splitlines()
    pattern, description, exclude = _value(lines, key), _value(lines, "description"), _value(lines, "excludeAgent")
    if isinstance(pattern, list):
        pattern = ", ".join(pattern)
    excluded = "coding-agent" in (exclude if isinstance(exclude, list) else [exclude])
    return FrontMatter(pattern, description if isinstance(description, str) else "", excluded)


@dataclass(frozen=True)
class Found:
    """One instruction file Copilot CLI looks at."""

    source: AgentSource
    text: str  # its text, byte order mark off
    block: str  # "tagged", "plain" (attached untagged) or "table" (only named)
    pattern: str = ""
    description: str = ""
    shown: str = ""  # its path as the table shows it
    base: Path | None = None  # what its pattern is relative to
    key: str = "applyTo"  # the front matter key its pattern comes from


def read_instruction(path: Path, tier: str, binary: bool = False) -> tuple[AgentSource, str]:
    """PATH as an instructions file: its source, loaded at start, and its text (byte order mark
    off); or a source not loaded with why: it cannot be read, is over READ_LIMIT, or (BINARY:
    the agent takes a file with a NUL byte for binary) holds a NUL byte. Copilot CLI and Copilot
    Chat both read their files so."""
    got = read_raw(path, READ_LIMIT + 1)
    nul = binary and b"\0" in got.data
    if not got.ok or got.size > READ_LIMIT or nul:
        why = got.reason or ("a binary file (NUL bytes), not text" if nul
                             else f"too large ({got.size} bytes): Memory Lens reads at most {READ_LIMIT} bytes of it")
        return AgentSource(path, tier, got.size, False, reason=why), ""
    text = decode_lossy(got.data)
    return AgentSource(path, tier, got.size, True, when="start"), text[1:] if text.startswith("\ufeff") else text


def _read(path: Path, tier: str, warnings: list[str]) -> tuple[AgentSource, str]:
    source, text = read_instruction(path, tier)
    if not source.loaded:
        warnings.append(f"{path}: {source.reason}")
    return source, text


def walk_files(folder: Path, keep: Callable[[str], bool], skip: Callable[[str], bool] = lambda name: False
               ) -> list[Path]:
    """The files under FOLDER whose name KEEP accepts, in no directory whose name SKIP accepts,
    sorted by path; at most MAX_FILES (Memory Lens's bound on a walk of a hostile tree)."""
    out: list[Path] = []
    look(folder)
    for dirpath, dirnames, filenames in os.walk(folder):
        look(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not skip(d))
        out += [Path(dirpath) / n for n in sorted(filenames) if keep(n)]
        if len(out) >= MAX_FILES:
            break
    rel = {p: p.relative_to(folder).as_posix() for p in out[:MAX_FILES]}
    return sorted(rel, key=rel.__getitem__)


def _scoped(folder: Path, suffix: str, key: str, tier: str, shown_from: Path | None, base: Path,
            warnings: list[str], hidden: bool = True) -> list[Found]:
    out = []
    for path in walk_files(folder, lambda name: name.lower().endswith(suffix),
                           lambda name: not hidden and name.startswith(".")):
        if not os.path.isfile(path):
            continue
        source, text = _read(path, tier, warnings)
        fm = front_matter(text, key)
        if fm.excluded or not source.loaded:
            continue
        shown = str(path) if shown_from is None else os.path.relpath(path, shown_from).replace(os.sep, "/")
        if fm.pattern is None or fm.pattern.strip() in ALWAYS:
            out.append(Found(source, text, "plain"))
        else:
            out.append(Found(source, text, "table", fm.pattern, fm.description, shown, base, key))
    return out


def _instructions_of(directory: Path, tier: str, shown_from: Path | None, base: Path,
                     warnings: list[str]) -> list[Found]:
    return (_scoped(directory / ".github" / "instructions", ".instructions.md", "applyTo", tier, shown_from,
                    base, warnings)
            + _scoped(directory / ".claude" / "rules", ".md", "paths", tier, shown_from, base, warnings))


def custom_dirs(start: Path, environ: Mapping[str, str] | None) -> list[Path]:
    """The `COPILOT_CUSTOM_INSTRUCTIONS_DIRS` directories (split on `,`, each trimmed)."""
    env = os.environ if environ is None else environ
    dirs = [start / os.path.expanduser(d.strip()) for d in env.get(ENV_DIRS, "").split(",") if d.strip()]
    for d in dirs:
        look(d, kind)
    return [Path(os.path.normpath(d)) for d in dirs if d.is_dir()]


def collect(start: Path, environ: Mapping[str, str] | None, warnings: list[str]) -> tuple[Path | None, list[Found]]:
    """Every file Copilot CLI looks at when started in START, in the order it uses them."""
    home, root = copilot_home(environ), git_root(start)
    top = root or start
    between = [d for d in start.parents if root is not None and root in d.parents]
    seen: set[str] = set()
    found: list[Found] = []

    texts: dict[str, Path] = {}

    def tagged(path: Path | None, tier: str) -> None:
        if path is None or str(path) in seen:
            return
        seen.add(str(path))
        source, text = _read(path, tier, warnings)
        if source.loaded and text in texts:
            source = AgentSource(path, tier, source.bytes, False, when="start",
                                 reason=f"the same text as {texts[text]}, which Copilot CLI attaches once")
        texts.setdefault(text, path)
        found.append(Found(source, text, "tagged"))

    tagged(_named(home, "copilot-instructions.md"), "user")
    for directory, tier in ((top, "repository"), (start, "working-directory")):
        tagged(_named(directory / ".github", "copilot-instructions.md"), tier)
    for directory, tier in ((top, "repository"), (start, "working-directory")):
        for name in MODEL_NAMES:
            tagged(_named(directory, name), tier)
    for directory in between:
        tagged(_named(directory / ".github", "copilot-instructions.md"), "inherited")
        for name in MODEL_NAMES:
            tagged(_named(directory, name), "inherited")
    found += _scoped(home / "instructions", ".instructions.md", "applyTo", "user", None, top, warnings)
    found += _instructions_of(top, "repository", top, top, warnings)
    if start != top:
        found += _instructions_of(start, "working-directory", start, start, warnings)
    nested = []
    for directory in custom_dirs(start, environ):
        found += _instructions_of(directory, "custom", None, top, warnings)
        found += _scoped(directory, ".instructions.md", "applyTo", "custom", None, top, warnings, hidden=False)
        agents = _named(directory, "AGENTS.md")
        if agents is not None:
            shown = os.path.relpath(directory, top).replace(os.sep, "/")
            source, text = _read(agents, "custom", warnings)
            nested.append(Found(source, text, "nested", f"{shown}/**/*", shown=shown, base=top))
    return root, found + nested


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|")


def compose(found: list[Found]) -> str:
    """The text Copilot CLI puts in its system message: the tagged blocks, then the plain files,
    the table of nested AGENTS.md files and the table of scoped files, each part after a blank
    line (and one newline more at the end when both the blocks and the rest are there)."""
    tagged = "\n\n".join(f"<custom_instruction>\n{f.text}\n</custom_instruction>" for f in found
                         if f.block == "tagged" and f.source.loaded)
    rest = [f.text for f in found if f.block == "plain"]
    nested = [f"| {f.shown}/ | '{f.shown}/AGENTS.md' | Agent instructions for {f.pattern} |"
              for f in found if f.block == "nested"]
    table = [f"| {_escape(f.pattern)} | '{f.shown}' | {_escape(f.description)} |" for f in found if f.block == "table"]
    if nested:
        rest.append("\n".join([NESTED_HEAD, *nested]))
    if table:
        rest.append("\n".join([INSTRUCTIONS_HEAD, *table]))
    others = "\n\n".join(rest)
    if tagged and rest:
        return f"{tagged}\n\n{others}\n"
    return tagged or others


def compile_glob(glob: str) -> re.Pattern[str]:
    """One glob of an `applyTo` as Memory Lens reads it (Copilot CLI leaves the matching to its
    model): the shared brace dialect (core/agents/scoped.py), where a `**` inside a name spans
    directories too; a glob without a `/` (bar a trailing one) matches the file's name at any
    depth, a leading `/` anchors it at the base, a trailing `/` means all below. GlobError past
    the shared bounds (its braces expand to over 1,024 patterns, ...): it matches nothing."""
    anchored = glob.startswith("/") or "/" in glob.rstrip("/")
    body = glob.lstrip("/")
    body = body.rstrip("/") + "/**" if body.endswith("/") else body
    return scoped.compile_glob(body, star_star_in_names=True, prefix="" if anchored else "(?:.*/)?")


@lru_cache(maxsize=1024)
def _compiled(glob: str) -> re.Pattern[str] | None:
    """GLOB compiled (None: it matches nothing); kept: explain matches the same patterns for
    every file the editor opens."""
    try:
        return compile_glob(glob)
    except scoped.GlobError:
        return None


def pattern_match(pattern: str, rel: str) -> str | None:
    """The first glob of PATTERN (split on commas outside braces) matching REL, a `/` path
    relative to the pattern's base; None when none does."""
    for glob in scoped.split_commas(pattern):
        regex = _compiled(glob)
        if regex is not None and regex.fullmatch(rel):
            return glob
    return None


def scoped_rule(path: Path, text: str) -> tuple[scoped.ScopedRule | None, str]:
    """Instructions file PATH (TEXT) as a scoped rule for core/agents/scoped.py (None: it applies
    at start, or `excludeAgent` leaves it out), and its front matter problem, if any: front matter
    never closed (none, so the file applies at start), an `applyTo` that is no string or list
    (so too), a list or a quote opened and never closed (the pattern is read as written)."""
    text = text[1:] if text.startswith("\ufeff") else text
    opened = _OPEN.match(text)
    closed = _CLOSE.search(text, opened.end()) if opened else None
    if opened and not closed:
        return None, ("the front matter opened by --- on line 1 is never closed: Copilot CLI reads no applyTo "
                      "and attaches the whole file at start")
    head = text[opened.end():closed.start()].splitlines() if opened and closed else []
    line, raw = next(((i, m.group(1).strip()) for i, ln in enumerate(head, 2)
                      if (m := re.match(r"applyTo[ \t]*:(.*)$", ln))), (1, ""))
    fm = front_matter(text, "applyTo")
    problem = ""
    if raw.startswith("[") and not raw.endswith("]"):
        problem = f"applyTo {raw} opens a list it never closes: Copilot CLI reads it as one pattern, [ included"
    elif raw[:1] and raw[:1] in "\"'" and (len(raw) < 2 or raw[-1] != raw[0]):
        problem = f"applyTo {raw} opens a quote it never closes: the pattern is read with the quote in it"
    elif raw and fm.pattern is None:
        problem = f"applyTo is {raw}, not a string or list: Copilot CLI attaches this file at start"
    if problem or fm.excluded or fm.pattern is None or fm.pattern.strip() in ALWAYS:
        return None, problem  # one finding for broken front matter, not one more per glob
    good, bad = [], []
    for glob in scoped.split_commas(fm.pattern):
        try:
            good.append((glob, compile_glob(glob).fullmatch))
        except scoped.GlobError as err:
            bad.append((glob, str(err)))
    where = scoped.rule_folder(path)
    return scoped.ScopedRule(path, AGENT, "Copilot CLI", "applyTo", line, where[0] if where else path.parent,
                             tuple(good), tuple(bad)), problem


def _status(item: Found, file: Path | None) -> AgentSource:
    """ITEM's source: loaded at start, or requestable with the glob that matches FILE, or why not."""
    s = item.source
    if item.block in ("tagged", "plain") or not s.loaded:
        return s
    what = ("its AGENTS.md table" if item.block == "nested" else "its table of instruction files")
    glob = rel = None
    if file is not None and item.base is not None:
        rel = os.path.relpath(file, item.base).replace(os.sep, "/")
        if not rel.startswith("../") and rel != "..":
            glob = pattern_match(item.pattern, rel)
        elif item.block == "nested":
            glob = pattern_match(item.pattern, rel) if rel.startswith(item.shown + "/") else None
    if glob is not None:
        reason = ""
    elif file is None:
        reason = f"Copilot CLI names it in {what} for `{item.pattern}`: the model may open it"
    elif item.block == "nested":
        reason = f"{file} is not under {item.shown}/, the directory of this AGENTS.md"
    else:
        reason = f"{item.key} `{item.pattern}` does not match {file}"
    return AgentSource(s.path, s.tier, s.bytes, False, reason=reason, when="requestable", matched_by=glob or "")


def load_view(target_dir: Path, environ: Mapping[str, str] | None = None, file: Path | None = None) -> AgentView:
    """What Copilot CLI loads when started in TARGET_DIR (an existing, resolved directory); with
    FILE, whether each scoped file's pattern matches it (`matchedBy`), or why not."""
    warnings: list[str] = []
    root, found = collect(target_dir, environ, warnings)
    sources = tuple(_status(f, None if file is None else Path(os.path.abspath(file))) for f in found)
    trace = [f"COPILOT_HOME: {copilot_home(environ)}",
             f"git root: {root if root else '(none: the working directory alone)'}"]
    trace += [f"{s.when or 'skipped'} {s.tier} {s.path}" + (f" ({s.reason})" if s.reason else "") for s in sources]
    return AgentView(AGENT, target_dir, root, sources, compose(found), tuple(warnings), tuple(trace))
