"""What Codex CLI loads: AGENTS.md files, cut to `project_doc_max_bytes`.

The rules follow Codex's own source (openai/codex, `codex-rs/core/src/agents_md.rs` and the user
instructions loader of its config; pinned in docs/agents.md):

- user instructions: `$CODEX_HOME/AGENTS.override.md`, else `$CODEX_HOME/AGENTS.md` (the first
  that reads as UTF-8 and is not blank), trimmed; `$CODEX_HOME` defaults to `~/.codex`;
- the project root: the nearest directory at or above the working directory holding one of
  `project_root_markers` (default `.git`); with none found, or an empty marker list, the working
  directory alone;
- per directory from the root down to the working directory, the first regular file (links
  followed) of `AGENTS.override.md`, `AGENTS.md`, then `project_doc_fallback_filenames`;
- `project_doc_max_bytes` (default 32 KiB; 0 turns project docs off) is one budget for all of
  them, root first: a file bigger than what is left is cut at that byte (mid-character if need be,
  then decoded with U+FFFD), and once it is used up the rest are not read; a blank file costs
  nothing; the user instructions are outside the budget;
- no imports; project files are not trimmed; pieces are joined with a blank line, and
  `\\n\\n--- project-doc ---\\n\\n` where the user instructions end and the project files begin;
- a project file that exists but cannot be read makes Codex drop every project file (it logs
  the error and goes on with the user instructions alone).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

from memory_lens.core.agents.common import (
    AgentSource,
    AgentView,
    RawRead,
    decode_lossy,
    kind,
    look,
    line_of_byte,
    read_raw,
    rust_trim,
)

AGENT = "codex"
OVERRIDE_FILENAME = "AGENTS.override.md"
DEFAULT_FILENAME = "AGENTS.md"
DEFAULT_MAX_BYTES = 32 * 1024
DEFAULT_ROOT_MARKERS = (".git",)
PROJECT_DOC_SEPARATOR = "\n\n--- project-doc ---\n\n"
ENV_CODEX_HOME = "CODEX_HOME"
USER_READ_LIMIT = 16 * 1024 * 1024  # the user file is read whole; past this Memory Lens stops


@dataclass(frozen=True)
class CodexConfig:
    """The settings of `$CODEX_HOME/config.toml` that decide which files load."""

    home: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    fallback_filenames: tuple[str, ...] = ()
    root_markers: tuple[str, ...] = DEFAULT_ROOT_MARKERS
    problem: str = ""  # why config.toml could not be used (the defaults apply)


def codex_home(environ: Mapping[str, str] | None = None) -> Path:
    """`$CODEX_HOME`, else `~/.codex`."""
    env = os.environ if environ is None else environ
    raw = env.get(ENV_CODEX_HOME, "")
    return Path(os.path.expanduser(raw)) if raw else Path.home() / ".codex"


def read_config(home: Path) -> CodexConfig:
    """The budget, fallback names and root markers from HOME/config.toml; defaults when absent."""
    path = home / "config.toml"
    got = read_raw(path, 4 * 1024 * 1024, confine=False)
    if got.missing:
        return CodexConfig(home)
    try:
        if got.reason:
            raise ValueError(got.reason)
        data = tomllib.loads(got.data.decode("utf-8"))
        max_bytes = data.get("project_doc_max_bytes", DEFAULT_MAX_BYTES)
        fallbacks = data.get("project_doc_fallback_filenames", [])
        markers = data.get("project_root_markers", list(DEFAULT_ROOT_MARKERS))
        if not isinstance(max_bytes, int) or isinstance(max_bytes, bool) or max_bytes < 0:
            raise ValueError("project_doc_max_bytes is not a whole number of bytes")
        if not isinstance(fallbacks, list) or not all(isinstance(n, str) for n in fallbacks):
            raise ValueError("project_doc_fallback_filenames is not a list of names")
        if not isinstance(markers, list) or not all(isinstance(n, str) for n in markers):
            raise ValueError("project_root_markers is not a list of names")
    except (ValueError, UnicodeDecodeError) as err:
        return CodexConfig(home, problem=f"{path}: {err}; Memory Lens used Codex's defaults")
    return CodexConfig(home, max_bytes, tuple(fallbacks), tuple(markers))


def candidate_filenames(config: CodexConfig) -> list[str]:
    """The names tried in each directory, in order (Codex's `candidate_filenames`)."""
    names = [OVERRIDE_FILENAME, DEFAULT_FILENAME]
    for name in config.fallback_filenames:
        if name and name not in names:
            names.append(name)
    return names


def project_root(target_dir: Path, markers: tuple[str, ...]) -> Path | None:
    """The nearest ancestor-or-self of TARGET_DIR holding one of MARKERS (any kind of file)."""
    if not markers:
        return None
    for directory in (target_dir, *target_dir.parents):
        for m in markers:
            look(directory / m, kind)
        if any(os.path.lexists(directory / m) or os.path.exists(directory / m) for m in markers):
            return directory
    return None


def search_dirs(target_dir: Path, root: Path | None) -> list[Path]:
    """The directories searched, root first, the working directory last."""
    if root is None:
        return [target_dir]
    dirs = [target_dir]
    for parent in target_dir.parents:
        if dirs[-1] == root:
            break
        dirs.append(parent)
    return list(reversed(dirs))


def project_doc_paths(target_dir: Path, config: CodexConfig) -> tuple[Path | None, list[Path]]:
    """The project root and, per directory, the first candidate that is a regular file."""
    root = project_root(target_dir, config.root_markers)
    found = []
    for directory in search_dirs(target_dir, root):
        for name in candidate_filenames(config):
            look(directory / name, kind)
            if os.path.isfile(directory / name):
                found.append(directory / name)
                break
    return root, found


def user_instructions(home: Path) -> tuple[AgentSource | None, str, list[AgentSource]]:
    """The user file Codex loads (or None), its trimmed text, and the files passed over."""
    passed = []
    for name in (OVERRIDE_FILENAME, DEFAULT_FILENAME):
        got = read_raw(home / name, USER_READ_LIMIT)
        if got.missing:
            continue
        try:
            text = rust_trim(got.data.decode("utf-8")) if got.ok else ""
            why = got.reason or "blank"
        except UnicodeDecodeError:
            text, why = "", "not valid UTF-8, so Codex does not read it"
        if text:
            return AgentSource(got.path, "user", got.size, True), text, passed
        passed.append(AgentSource(got.path, "user", got.size, False, reason=why))
    return None, "", passed


def load_view(target_dir: Path, environ: Mapping[str, str] | None = None) -> AgentView:
    """What Codex loads when started in TARGET_DIR (an existing, resolved directory)."""
    config = read_config(codex_home(environ))
    warnings = [config.problem] if config.problem else []
    trace = [f"CODEX_HOME: {config.home}", f"project_doc_max_bytes: {config.max_bytes}",
             f"names tried per directory: {', '.join(candidate_filenames(config))}"]
    user, user_text, sources = user_instructions(config.home)
    if user is not None:
        sources.append(user)
    root, paths = project_doc_paths(target_dir, config) if config.max_bytes else (None, [])
    trace.append(f"project root: {root if root else '(none: the working directory alone)'}")
    if not config.max_bytes:
        trace.append("project_doc_max_bytes is 0: project docs are off")
    project, failed = read_project_docs(paths, config.max_bytes)
    if failed is not None:
        warnings.append(f"{failed.path}: {failed.reason}: Codex stops there and loads none of the "
                        "project's AGENTS.md files")
        project = [(AgentSource(s.path, s.tier, s.bytes, False, reason="dropped: another project file could "
                                "not be read") if s.loaded else s, "") for s, _ in project]
    text, previous_was_project = user_text, False
    for src, piece in project:
        sources.append(src)
        if src.loaded:
            # The marker says where the workspace's files begin: only after the user instructions.
            text += (("\n\n" if previous_was_project else PROJECT_DOC_SEPARATOR) if text else "") + piece
            previous_was_project = True
        if src.cut_at is not None:
            warnings.append(f"{src.path}:{src.cut_line}: Codex cuts this file at byte {src.cut_at} of "
                            f"{src.bytes} (project_doc_max_bytes is {config.max_bytes}); it never sees the rest")
        elif src.reason.startswith("not read"):
            warnings.append(f"{src.path}: {src.reason}")
    trace.extend(f"{s.tier} {s.path}: " + ("loaded" if s.loaded else s.reason or "not loaded")
                 + (f", cut at byte {s.cut_at}" if s.cut_at is not None else "") for s in sources)
    return AgentView(AGENT, target_dir, root, tuple(sources), text, tuple(warnings), tuple(trace))


def read_project_docs(paths: list[Path], max_bytes: int
                      ) -> tuple[list[tuple[AgentSource, str]], RawRead | None]:
    """Each project file with the text Codex keeps of it, root first; and the read that failed."""
    remaining = max_bytes
    out: list[tuple[AgentSource, str]] = []
    for path in paths:
        if remaining == 0:
            look(path)
            size = os.stat(path).st_size if os.path.exists(path) else 0
            out.append((AgentSource(path, "project", size, False, reason=f"not read: the {max_bytes}-byte "
                                    "project_doc_max_bytes budget is used up"), ""))
            continue
        got = read_raw(path, remaining)
        if got.missing:
            continue
        if got.withheld:  # Codex loads it (its bytes count against the budget); its text is not shown
            out.append((AgentSource(path, "project", got.size, False, reason=got.reason), ""))
            remaining -= min(got.size, remaining)
            continue
        if got.reason:
            out.append((AgentSource(path, "project", got.size, False, reason=got.reason), ""))
            return out, got
        data = got.data
        cut = len(data) if got.size > remaining else None
        text = decode_lossy(data)
        if not rust_trim(text):
            out.append((AgentSource(path, "project", got.size, False, reason="blank"), ""))
            continue
        out.append((AgentSource(path, "project", got.size, True, cut_at=cut,
                                cut_line=None if cut is None else line_of_byte(data, cut)), text))
        remaining -= len(data)
    return out, None
