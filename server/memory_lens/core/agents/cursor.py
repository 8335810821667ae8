"""What Cursor's agent reads: project rules, `AGENTS.md`, the legacy `.cursorrules`.

Cursor cannot run here, so these rules come from Cursor's documentation (its Rules page; pinned
in docs/agents.md, each a unit case in tests/unit/test_cursor.py):

- the workspace is the project root (the nearest directory holding `.git`, else the start
  directory); project rules are the `.md` and `.mdc` files of `.cursor/rules/` (subfolders too),
  each with optional front matter: `description`, `globs`, `alwaysApply`;
- `alwaysApply: true`: always applied; else `globs` (a comma-separated string or a list, relative
  to the folder holding `.cursor/`): attached when the file asked about matches; else a
  `description`: listed for the agent, which may request it; else manual: only when @-mentioned;
- a `.cursor/rules` folder in a subdirectory (nested rules) and a subdirectory's `AGENTS.md` apply
  when a file in that subdirectory is read; the root `AGENTS.md` and `.cursorrules` always apply;
- front matter that cannot be read makes Cursor skip the rule; `alwaysApply: "true"` (a string)
  is not `true`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from memory_lens.core.agents.common import AgentSource, AgentView, decode_lossy, git_root, look, read_raw
from memory_lens.core.agents.scoped import GlobError, ScopedRule, brace_glob, split_commas

AGENT = "cursor"
LABEL = "Cursor"
RULES_DIR = Path(".cursor") / "rules"
RULE_EXTENSIONS = (".mdc", ".md")
AGENTS_MD = "AGENTS.md"
LEGACY = ".cursorrules"
READ_LIMIT = 16 * 1024 * 1024
MANUAL = "manual: only when @-mentioned"
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.M)
_KEY = re.compile(r"(description|globs|alwaysApply)[ \t]*:(.*)$")


@dataclass(frozen=True)
class CursorRule:
    """A rules file's front matter as Cursor reads it."""

    body: str
    description: str = ""
    globs: tuple[str, ...] = ()
    always: bool = False
    problem: str = ""  # why the front matter cannot be read (Cursor skips the rule) or is not meant
    skipped: bool = False  # the front matter cannot be read: Cursor skips the rule
    globs_line: int = 1


def parse_rule(text: str) -> CursorRule:
    """TEXT's front matter, read as Cursor reads it (not strict YAML: `globs: **/*.ts` is fine)."""
    opened = _OPEN.match(text)
    if not opened:
        return CursorRule(text)
    closed = _CLOSE.search(text, opened.end())
    if not closed:
        return CursorRule(text, problem="the front matter opened by --- on line 1 is never closed: Cursor reads "
                                        "no description, globs or alwaysApply, and applies the rule only when "
                                        "@-mentioned", skipped=False)
    head, body = text[opened.end():closed.start()], text[closed.end():]
    lines = head.splitlines()
    fields: dict[str, object] = {}
    globs_line = 1
    try:
        for i, line in enumerate(lines):
            m = _KEY.match(line)
            if not m:
                continue
            key, value = m.group(1), m.group(2).strip()
            if key == "globs":
                globs_line = i + 2
                fields[key] = _globs(value, lines[i + 1:])
            elif key == "alwaysApply":
                fields[key] = _scalar(value, keep_quotes=True)
            else:
                fields[key] = _scalar(value)
    except ValueError as err:
        return CursorRule(body, problem=f"front matter cannot be read ({err}): Cursor skips this rule",
                          skipped=True)
    always, problem = fields.get("alwaysApply", "false"), ""
    if always in ("true", "True", "TRUE"):
        always = True
    elif always in ("false", "False", "FALSE", ""):
        always = False
    else:
        problem = (f"alwaysApply is {always}, not the boolean true or false: Cursor does not apply this rule "
                   "always (write alwaysApply: true)")
        always = False
    globs = tuple(fields.get("globs", ()))  # type: ignore[arg-type]
    return CursorRule(body, str(fields.get("description", "")), globs, always, problem, False, globs_line)


def _scalar(value: str, keep_quotes: bool = False) -> str:
    if value[:1] in "\"'":
        if len(value) < 2 or not value.endswith(value[0]):
            raise ValueError(f"the string {value} is not closed")
        return value if keep_quotes else value[1:-1]
    return value.split(" #", 1)[0].strip()


def _globs(value: str, rest: list[str]) -> list[str]:
    """`globs`: a flow list, a block list below the key, or a comma-separated string (commas
    inside braces belong to the glob)."""
    if value.startswith("["):
        if not value.endswith("]"):
            raise ValueError("the list opened with [ is not closed")
        return [g for g in (_scalar(v.strip()) for v in split_commas(value[1:-1])) if g]
    if value:
        return [g for g in (_scalar(v.strip()) for v in split_commas(value)) if g]
    items = []
    for line in rest:
        m = re.match(r"[ \t]*-[ \t]+(.*)$", line)
        if not m:
            break
        items.append(_scalar(m.group(1).strip()))
    return [g for g in items if g]


def compile_globs(globs: tuple[str, ...]) -> tuple[list[tuple[str, re.Pattern[str]]], list[tuple[str, str]]]:
    """GLOBS compiled in Cursor's dialect, and those it rejects (with why)."""
    good, bad = [], []
    for glob in globs:
        try:
            good.append((glob, brace_glob(glob)))
        except GlobError as err:
            bad.append((glob, str(err)))
    return good, bad


def scoped_rule(path: Path, text: str) -> tuple[ScopedRule | None, str]:
    """Rules file PATH (TEXT) as a scoped rule for core/agents/scoped.py (None: not scoped by
    globs: always applied, requested, manual or skipped), and its front matter problem."""
    rule = parse_rule(text)
    if rule.skipped or rule.always or not rule.globs:
        return None, rule.problem
    good, bad = compile_globs(rule.globs)
    base = _base_of(path)
    return ScopedRule(path, AGENT, LABEL, "globs", rule.globs_line, base,
                      tuple((g, r.fullmatch) for g, r in good), tuple(bad)), rule.problem


def _base_of(path: Path) -> Path:
    text = str(path)
    at = text.rfind(f"{os.sep}.cursor{os.sep}")
    return Path(text[:at]) if at > 0 else path.parent


def rule_files(folder: Path) -> list[Path]:
    """The rules files of FOLDER (`.cursor/rules`), subfolders included, in path order."""
    found = []
    look(folder)
    for dirpath, dirnames, filenames in os.walk(folder):
        look(dirpath)
        dirnames.sort()
        found += [Path(dirpath) / n for n in filenames if n.endswith(RULE_EXTENSIONS)]
    return sorted(found, key=lambda p: p.as_posix())


def _read(path: Path) -> tuple[str | None, int, str]:
    """PATH's text, its size, and why it cannot be used (text None)."""
    got = read_raw(path, READ_LIMIT + 1)
    if got.missing:
        return None, 0, ""
    if got.reason:
        return None, got.size, got.reason
    if got.size > READ_LIMIT:
        return None, got.size, f"too large ({got.size} bytes): Memory Lens reads rules files of at most {READ_LIMIT}"
    if b"\0" in got.data:
        return None, got.size, "a binary file (NUL bytes), not text"
    return decode_lossy(got.data), got.size, ""


def _relative(file: Path, base: Path) -> str | None:
    try:
        rel = Path(os.path.relpath(file, base)).as_posix()
    except ValueError:
        return None
    return None if rel == ".." or rel.startswith("../") else rel


def rule_source(path: Path, base: Path, file: Path | None, nested: bool, tier: str) -> tuple[AgentSource, str]:
    """What Cursor does with rules file PATH (globs relative to BASE) for FILE (None: no file
    asked about); NESTED: a subdirectory's rule, applied only for files in that subdirectory.
    The source, and the text it adds (empty unless loaded)."""
    text, size, why = _read(path)
    if text is None:
        return AgentSource(path, tier, size, False, reason=why), ""
    rule = parse_rule(text)
    body = rule.body.strip()
    under = f"{_relative(base, git_root(base) or base) or '.'}/"
    if rule.skipped:
        return AgentSource(path, tier, size, False, reason=rule.problem), ""
    if rule.always:
        if nested:
            return AgentSource(path, tier, size, True, when="on-read", matched_by=under), body
        return AgentSource(path, tier, size, True, when="start"), body
    good, _ = compile_globs(rule.globs)
    if good:
        rel = _relative(file, base) if file is not None else None
        hit = next((g for g, r in good if rel is not None and r.fullmatch(rel)), None)
        if hit is not None:
            return AgentSource(path, tier, size, True, when="on-read", matched_by=hit), body
        shown = ", ".join(f"`{g}`" for g in rule.globs)
        why = (f"globs {shown} do not match {rel}" if rel is not None else
               f"globs {shown}: attached when Cursor reads a matching file")
    elif rule.globs:
        why = "globs " + ", ".join(f"`{g}`" for g in rule.globs) + ": none is a glob Cursor can use"
    else:
        why = MANUAL
    if rule.description:
        return AgentSource(path, tier, size, False, reason=f"the agent may request it: {rule.description}",
                           when="requestable"), ""
    return AgentSource(path, tier, size, False, reason=why), ""


def plain_source(path: Path, tier: str, when: str, matched_by: str = "") -> tuple[AgentSource, str] | None:
    """`AGENTS.md` or `.cursorrules` at PATH, applied whole (None: no such file)."""
    text, size, why = _read(path)
    if text is None:
        return (AgentSource(path, tier, size, False, reason=why), "") if why else None
    body = text.strip()
    return AgentSource(path, tier, size, bool(body), reason="" if body else "empty",
                       when=when if body else "", matched_by=matched_by if body else ""), body


def load_view(target_dir: Path, environ: Mapping[str, str] | None = None, file: Path | None = None) -> AgentView:
    """What Cursor's agent reads in the workspace of TARGET_DIR (its project root), and when it
    reads FILE: the subdirectories' rules and `AGENTS.md` on the way to FILE (else to TARGET_DIR)."""
    root = git_root(target_dir) or target_dir
    here = Path(os.path.abspath(file)).parent if file is not None else target_dir
    if _relative(here, root) is None:
        here = root
    out: list[tuple[AgentSource, str]] = []
    out += [rule_source(p, root, file, False, "project") for p in rule_files(root / RULES_DIR)]
    for path, tier in ((root / LEGACY, "legacy"), (root / AGENTS_MD, "project")):
        got = plain_source(path, tier, "start")
        if got is not None:
            out.append(got)
    rel = _relative(here, root)
    parts = [] if rel in (None, ".") else rel.split("/")
    for depth in range(1, len(parts) + 1):
        directory = root.joinpath(*parts[:depth])
        out += [rule_source(p, directory, file, True, "nested") for p in rule_files(directory / RULES_DIR)]
        got = plain_source(directory / AGENTS_MD, "nested", "on-read", "/".join(parts[:depth]) + "/")
        if got is not None:
            out.append(got)
    warnings = [f"{s.path}: {s.reason}" for s, _ in out if not s.loaded and s.reason.startswith(("a binary", "too large",
                                                                                                   "front matter",
                                                                                                   "cannot"))]
    text = "\n\n".join(t for s, t in out if s.loaded and t)
    return AgentView(AGENT, target_dir, root, tuple(s for s, _ in out), text, tuple(warnings),
                     tuple(f"{s.when or '-'} {s.tier} {s.path}" for s, _ in out))
