"""Gemini CLI's own `settings.json`: the `context` settings that change what it loads as memory.

Read as Gemini CLI 0.61.0 reads them (`loadSettings` in `@google/gemini-cli`, pinned in
docs/agents.md): the user file `~/.gemini/settings.json` (`~` being `$GEMINI_CLI_HOME` when
set), then the workspace file
`.gemini/settings.json` in the working directory (not searched upward, and not read when the
working directory is the home directory, nor when Gemini would not trust the folder). The
workspace file wins key by key; a list replaces the list before it (no merge strategy is
declared for these keys). Comments are allowed; `$VAR`, `${VAR}` and `${VAR:-default}` in
strings are replaced from the environment.

- `context.fileName` (a string or a list of strings): those names first, then `GEMINI.md` kept
  after them, as `setGeminiMdFilename` does.
- `context.memoryBoundaryMarkers` (a list of strings, default `[".git"]`): what marks the
  project root.
- `context.importFormat` (`"tree"` or `"flat"`).

A file that is not JSON, not an object, or gives one of these keys the wrong type is ignored
with one warning naming it (Gemini CLI refuses to start on bad JSON, and uses wrongly typed
values after a warning).
"""

from __future__ import annotations

import errno
import functools
import json
import os
import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

GEMINI_DIR = ".gemini"
SETTINGS_FILE = "settings.json"
TRUSTED_FOLDERS_FILE = "trustedFolders.json"
DEFAULT_CONTEXT_FILENAME = "GEMINI.md"
IMPORT_FORMATS = ("tree", "flat")
MAX_SETTINGS_BYTES = 1 << 20  # Memory Lens's bound: a bigger settings file is ignored with a warning

_ENV_VAR = re.compile(r"\$(?:(\w+)|{([^}]+?)(?::-([^}]*))?})")
_JSON_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*[\s\S]*?(?:\*/|$)', re.S)


@dataclass(frozen=True)
class GeminiSettings:
    """The memory settings Gemini CLI would use; None where no settings file gives one."""

    filenames: tuple[str, ...] | None = None  # context.fileName as applied: configured names, then GEMINI.md
    boundary_markers: tuple[str, ...] | None = None
    import_format: str | None = None
    files: tuple[Path, ...] = ()  # the settings files read, user first
    warnings: tuple[str, ...] = ()


def strip_json_comments(text: str) -> str:
    """TEXT with `//` and `/* */` comments outside strings replaced by spaces."""
    return _JSON_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else " ", text)


def expand_env(value: str, environ: Mapping[str, str]) -> str:
    """`$VAR`, `${VAR}`, `${VAR:-default}` replaced as Gemini's resolveEnvVarsInString does."""
    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2) or ""
        if name in environ:
            return environ[name]
        return m.group(3) if m.group(3) is not None else m.group(0)
    return _ENV_VAR.sub(sub, value)


def read_small_file(path: Path) -> bytes:
    """The bytes of regular file PATH; OSError when it is missing or unreadable, and when it is
    not a regular file (a FIFO would block) or is over MAX_SETTINGS_BYTES."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if st.st_size > MAX_SETTINGS_BYTES:
            raise OSError(errno.EFBIG, f"over {MAX_SETTINGS_BYTES} bytes")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if sum(map(len, chunks)) > MAX_SETTINGS_BYTES:
                raise OSError(errno.EFBIG, f"over {MAX_SETTINGS_BYTES} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _context_of(path: Path, environ: Mapping[str, str]) -> tuple[dict[str, Any] | None, str | None]:
    """The checked `context` values of settings file PATH, or None and a warning (None, None: no file)."""
    try:
        raw = read_small_file(path)
    except FileNotFoundError:
        return None, None
    except OSError as err:
        return None, f"ignoring {path}: cannot read it ({err.strerror or err})"
    try:
        data = json.loads(strip_json_comments(raw.decode("utf-8", errors="replace")))
    except ValueError as err:
        return None, f"ignoring {path}: not valid JSON ({err}); fix the file (Gemini CLI refuses to start with it)"
    if not isinstance(data, dict):
        return None, f"ignoring {path}: expected a JSON object"
    context = data.get("context", {})
    if not isinstance(context, dict):
        return None, f"ignoring {path}: \"context\" must be an object"
    out: dict[str, Any] = {}
    name = context.get("fileName")
    if name is not None:
        if isinstance(name, str):
            out["fileName"] = [expand_env(name, environ)]
        elif isinstance(name, list) and all(isinstance(n, str) for n in name):
            out["fileName"] = [expand_env(n, environ) for n in name]
        else:
            return None, f"ignoring {path}: context.fileName must be a string or a list of strings"
    markers = context.get("memoryBoundaryMarkers")
    if markers is not None:
        if not isinstance(markers, list) or not all(isinstance(m, str) for m in markers):
            return None, f"ignoring {path}: context.memoryBoundaryMarkers must be a list of strings"
        out["memoryBoundaryMarkers"] = [expand_env(m, environ) for m in markers]
    fmt = context.get("importFormat")
    if fmt is not None:
        if not isinstance(fmt, str):
            return None, f"ignoring {path}: context.importFormat must be \"tree\" or \"flat\""
        out["importFormat"] = expand_env(fmt, environ)
    return out, None


def context_filenames(configured: list[str]) -> tuple[str, ...]:
    """Gemini's setGeminiMdFilename: the configured names (trimmed, normalised, once each), then
    GEMINI.md after them. Empty names are dropped; no name at all leaves GEMINI.md alone."""
    names: list[str] = []
    for raw in configured:
        name = raw.strip()
        if name:
            name = posixpath.normpath(name)
            if name not in names:
                names.append(name)
    if DEFAULT_CONTEXT_FILENAME not in names:
        names.append(DEFAULT_CONTEXT_FILENAME)
    return tuple(names)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _inside(parent: str, child: str) -> bool:
    rel = os.path.relpath(child, parent)
    return rel == "." or not (rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel))


def workspace_trusted(working_dir: Path, home: Path, user: Mapping[str, Any] | None,
                      environ: Mapping[str, str]) -> bool:
    """Whether Gemini CLI 0.61.0 trusts WORKING_DIR, so reads its `.gemini/settings.json`: the
    GEMINI_CLI_TRUST_WORKSPACE / GEMINI_RESTRICTED_MODE variables, then folder trust turned off
    in the user settings, then the longest matching rule of `~/.gemini/trustedFolders.json`
    (TRUST_FOLDER, TRUST_PARENT, DO_NOT_TRUST). A folder no rule names is not trusted."""
    if environ.get("GEMINI_RESTRICTED_MODE") == "true" or environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "false":
        return False
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return True
    security = user.get("security") if isinstance(user, dict) else None
    folder_trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(folder_trust, dict) and folder_trust.get("enabled") is False:
        return True
    try:
        rules = json.loads(strip_json_comments(read_small_file(home / GEMINI_DIR / TRUSTED_FOLDERS_FILE).decode(
            "utf-8", errors="replace")))
    except (OSError, ValueError):
        return False
    if not isinstance(rules, dict):
        return False
    here = _real(str(working_dir))
    best, level = -1, None
    for rule, trust in rules.items():
        where = os.path.dirname(rule) if trust == "TRUST_PARENT" else rule
        if _inside(_real(where), here) and len(rule) > best:
            best, level = len(rule), trust
    return level in ("TRUST_FOLDER", "TRUST_PARENT")


def _raw_user(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(strip_json_comments(read_small_file(path).decode("utf-8", errors="replace")))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def gemini_home(environ: Mapping[str, str]) -> Path:
    """Gemini's homedir(): `$GEMINI_CLI_HOME` when set, else the home directory."""
    return _home(environ.get("GEMINI_CLI_HOME") or "", environ.get("HOME") or "")


@functools.lru_cache(maxsize=8)
def _home(gemini_cli_home: str, home: str) -> Path:  # asked for every directory a check visits
    return Path(gemini_cli_home) if gemini_cli_home else Path.home()


def settings_paths(working_dir: Path | None, environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """Every file `read_gemini_settings(WORKING_DIR)` reads: the user file, the folder trust rules
    and the workspace file. What it returns changes only when one of them does (or the
    environment), so a caller that keeps the answer checks these files' identities."""
    user = _user_files(gemini_home(os.environ if environ is None else environ))
    return user if working_dir is None else (*user, Path(working_dir, GEMINI_DIR, SETTINGS_FILE))


@functools.lru_cache(maxsize=8)
def _user_files(home: Path) -> tuple[Path, Path]:
    return home / GEMINI_DIR / SETTINGS_FILE, home / GEMINI_DIR / TRUSTED_FOLDERS_FILE


def read_gemini_settings(working_dir: Path | None, home: Path | None = None,
                         environ: Mapping[str, str] | None = None) -> GeminiSettings:
    """The `context` memory settings Gemini CLI would use for a session in WORKING_DIR (None:
    the user file alone). Never raises: an unusable file is left out with a warning."""
    env = os.environ if environ is None else environ
    if home is None:
        home = gemini_home(env)
    user_file = home / GEMINI_DIR / SETTINGS_FILE
    files = [user_file]
    if working_dir is not None and _real(str(working_dir)) != _real(str(home)):
        if workspace_trusted(working_dir, home, _raw_user(user_file), env):
            files.append(Path(working_dir) / GEMINI_DIR / SETTINGS_FILE)
    merged: dict[str, Any] = {}
    read: list[Path] = []
    warnings: list[str] = []
    for path in files:
        context, warning = _context_of(path, env)
        if warning:
            warnings.append(warning)
        if context is not None:
            read.append(path)
            merged.update(context)
    fmt = merged.get("importFormat")
    if fmt is not None and fmt not in IMPORT_FORMATS:
        warnings.append(f"context.importFormat {fmt!r} is neither \"tree\" nor \"flat\": using \"tree\" "
                        "as Gemini CLI does")
        fmt = "tree"
    return GeminiSettings(
        filenames=context_filenames(merged["fileName"]) if "fileName" in merged else None,
        boundary_markers=tuple(merged["memoryBoundaryMarkers"]) if "memoryBoundaryMarkers" in merged else None,
        import_format=fmt,
        files=tuple(read),
        warnings=tuple(warnings),
    )



def with_context_filename(text: str, name: str, inherited: tuple[str, ...]) -> str | None:
    """Settings file TEXT ("" for a missing file) with NAME put first in `context.fileName`, before
    the names it lists (INHERITED, the names Gemini uses now, when it lists none); None when NAME is
    there already. Every other key is kept. ValueError (one line saying what to do) when TEXT is
    not a JSON object, gives `context` or `context.fileName` another type, or holds comments, which
    a rewrite would lose."""
    if strip_json_comments(text) != text:
        raise ValueError("holds comments, which rewriting it would lose; add the name to context.fileName by hand")
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as err:
        raise ValueError(f"is not valid JSON ({err}); fix it first") from None
    context = data.get("context", {}) if isinstance(data, dict) else None
    if not isinstance(context, dict):
        raise ValueError("is not a JSON object with an object \"context\"; fix it first")
    names = context.get("fileName", list(inherited))
    names = [names] if isinstance(names, str) else names
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError("context.fileName must be a string or a list of strings; fix it first")
    if name in names:
        return None
    data["context"] = {**context, "fileName": [name, *names]}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
