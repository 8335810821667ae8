"""Every setting of Memory Lens, resolved in one place (`resolve_settings`) into one `Settings`.

Each front end (the CLI, the language server, the MCP server) builds its `Settings` here and
passes it down: to the scanner and the merge (file names, global directory, size limit), the
checks (budgets), the writer (size limit, following links out of the project) and the notes store
(notes layout and directory). Nothing else reads the environment.

Resolution order for each value: an explicit value (a CLI flag, an LSP setting), then the
environment, then the agent's own settings files (Gemini CLI's `settings.json`: `context.fileName`,
`context.memoryBoundaryMarkers`, `context.importFormat`; see core/gemini_settings.py), then the
default. docs/settings.md lists every setting and its environment variable.

The size budget is 32768 UTF-8 bytes of merged text unless a token budget is given alone, in
which case that many estimated tokens is the budget instead (both apply when both are given).
The size limit of one memory file is 16 MiB: a bigger file is reported `too-large` and never
read whole (never parsed, checked or edited).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from memory_lens.core.files import DEFAULT_MAX_FILE_BYTES, ENV_MAX_FILE_SIZE
from memory_lens.core.gemini_settings import GeminiSettings
from memory_lens.core.write_policy import ENV_FOLLOW_OUTSIDE_LINKS

DEFAULT_FILENAME = "GEMINI.md"
DEFAULT_BUDGET_BYTES = 32 * 1024  # the limit Codex applies to its merged instructions
DEFAULT_BOUNDARY_MARKERS = (".git",)
DEFAULT_IMPORT_FORMAT = "tree"
NOTES_LAYOUTS = ("memory-lens", "aicoder")  # core/notes/locations.py: what each means
ENV_FILENAMES = "MEMORY_LENS_FILENAMES"
ENV_GLOBAL_DIR = "MEMORY_LENS_GLOBAL_DIR"
ENV_BUDGET = "MEMORY_LENS_BUDGET"
ENV_NOTES_DIR = "MEMORY_LENS_NOTES_DIR"
ENV_NOTES_LAYOUT = "MEMORY_LENS_NOTES_LAYOUT"
ENV_WATCHER = "MEMORY_LENS_WATCHER"  # "poll": the language server polls, no system notifications
ENV_PROGRESS_DELAY = "MEMORY_LENS_PROGRESS_DELAY"  # seconds a server scan runs before showing progress
DEFAULT_PROGRESS_DELAY = 1.0
_TRUE = {"1", "true", "yes", "on"}


class SettingsError(ValueError):
    """A setting has a value Memory Lens cannot use (the message says which and why)."""


@dataclass(frozen=True)
class Settings:
    """Every setting of one process (docs/settings.md): which files are memory, where the global
    ones live, how big merged memory and one file may grow, where writes may go, where notes live."""

    filenames: tuple[str, ...] = (DEFAULT_FILENAME,)
    global_dir: Path = field(default_factory=lambda: Path.home() / ".gemini")
    budget_bytes: int | None = DEFAULT_BUDGET_BYTES  # None: no byte limit (a token budget is set)
    budget_tokens: int | None = None
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES  # a bigger memory file is reported, not read
    boundary_markers: tuple[str, ...] = DEFAULT_BOUNDARY_MARKERS  # what marks a project root
    import_format: str = DEFAULT_IMPORT_FORMAT  # "tree" or "flat", as Gemini CLI writes imports
    warnings: tuple[str, ...] = field(default=(), compare=False)  # unusable agent settings files
    agents: tuple[str, ...] | None = None  # checked per agent (core/agents/budget.py); None: the default
    filenames_explicit: bool = False  # filenames from a flag, the environment or an editor setting
    follow_outside_links: bool = False  # writes may go through links that leave their area (write_policy)
    notes_layout: str = NOTES_LAYOUTS[0]  # "memory-lens" or "aicoder" (core/notes/locations.py)
    notes_dir: Path | None = None  # the global notes directory; None: the layout's own
    trusted: bool = True  # False: the workspace may lower limits, never raise them (lsp/config.py)
    poll_watcher: bool = False  # the language server polls instead of using the system's notifications
    progress_delay: float = DEFAULT_PROGRESS_DELAY  # seconds a language server scan runs before progress shows

    @property
    def primary_filename(self) -> str:
        """The name new entries are written to."""
        return self.filenames[0]

    def global_files(self) -> list[Path]:
        """The global memory files, in filename order."""
        return [self.global_dir / name for name in self.filenames]

    def global_file(self) -> Path:
        """The global file that new global entries are written to."""
        return self.global_dir / self.primary_filename


def validate_filenames(names: Iterable[str]) -> tuple[str, ...]:
    """Return the names as a tuple without repeats; raise SettingsError on an unusable one."""
    result: list[str] = []
    for raw in names:
        name = raw.strip()
        if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
            raise SettingsError(
                f"invalid memory filename {raw!r}: give a plain file name such as GEMINI.md"
            )
        if name not in result:
            result.append(name)
    if not result:
        raise SettingsError("no memory filename given: give at least one, such as GEMINI.md")
    return tuple(result)


def parse_filenames(value: Any) -> tuple[str, ...]:
    """A comma list ("AGENTS.md,GEMINI.md") or a list of names, checked; SettingsError if unusable."""
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise SettingsError("expected a list of file names such as [\"GEMINI.md\"]")
    return validate_filenames(value)


def parse_dir(value: Any) -> Path:
    """A directory setting: `~` expanded, made absolute; SettingsError if it is not a path."""
    if not isinstance(value, (str, os.PathLike)) or "\0" in os.fspath(value) or not os.fspath(value).strip():
        raise SettingsError("expected a directory path")
    return Path(os.path.abspath(os.path.expanduser(os.fspath(value).strip())))


def parse_count(value: Any, minimum: int, unit: str) -> int:
    """A whole number of UNIT, MINIMUM or more (a bool is not a number); SettingsError if not."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
        return value
    raise SettingsError(f"expected a whole number of {unit}, {minimum} or more")


def resolve_settings(
    filenames: Iterable[str] | None = None,
    global_dir: str | os.PathLike[str] | None = None,
    budget_bytes: int | None = None,
    budget_tokens: int | None = None,
    environ: Mapping[str, str] | None = None,
    max_file_bytes: int | None = None,
    agent: GeminiSettings | None = None,
    follow_outside_links: bool | None = None,
    notes_layout: str | None = None,
    notes_dir: str | os.PathLike[str] | None = None,
    lenient: bool = False,
) -> Settings:
    """Build Settings from explicit values, falling back to the environment (ENVIRON, default
    `os.environ`: the one place it is read), then to AGENT (Gemini CLI's settings.json, from
    `read_gemini_settings`), then defaults. Raises SettingsError for an unusable value; with
    LENIENT (the servers), an unusable environment value is a warning and its default is used."""
    env = os.environ if environ is None else environ
    warnings: list[str] = []

    def from_env(name: str, parse: Any, default: Any, server_only: bool = False) -> Any:
        raw = env.get(name, "").strip()
        if not raw:
            return default
        try:
            return parse(raw)
        except SettingsError as err:
            if not (lenient or server_only):
                raise SettingsError(f"{name}={raw!r}: {err}") from None
            warnings.append(f"ignoring {name}={raw!r}: {err}; using the default")
            return default

    names: Iterable[str] = filenames or from_env(ENV_FILENAMES, parse_filenames, ())
    if global_dir is not None and str(global_dir) != "":
        gdir = Path(os.path.expanduser(os.fspath(global_dir)))
    else:
        gdir = from_env(ENV_GLOBAL_DIR, parse_dir, None) or Path.home() / ".gemini"
    if budget_bytes is None:
        budget_bytes = from_env(ENV_BUDGET, lambda v: parse_count(_whole(v), 0, "bytes"), None)
    if budget_bytes is not None:
        budget: int | None = budget_bytes
    elif budget_tokens is not None:
        budget = None  # a token budget given alone replaces the default byte budget
    else:
        budget = DEFAULT_BUDGET_BYTES
    if budget is not None and budget < 0:
        raise SettingsError(f"invalid budget {budget}: give a number of bytes, 0 or more")
    if budget_tokens is not None and budget_tokens < 0:
        raise SettingsError(f"invalid token budget {budget_tokens}: give a number of tokens, 0 or more")
    if max_file_bytes is None:
        max_file_bytes = from_env(ENV_MAX_FILE_SIZE, lambda v: parse_count(_whole(v), 1, "bytes"),
                                  DEFAULT_MAX_FILE_BYTES)
    elif max_file_bytes < 1:
        raise SettingsError(f"invalid file size limit {max_file_bytes}: give a number of bytes, 1 or more")
    if follow_outside_links is None:
        follow_outside_links = env.get(ENV_FOLLOW_OUTSIDE_LINKS, "").strip().lower() in _TRUE
    if notes_layout:
        layout = parse_notes_layout(notes_layout)
    else:
        layout = from_env(ENV_NOTES_LAYOUT, parse_notes_layout, NOTES_LAYOUTS[0])
    if notes_dir is not None and os.fspath(notes_dir) != "":
        ndir: Path | None = parse_dir(notes_dir)
    else:
        ndir = from_env(ENV_NOTES_DIR, parse_absolute_dir, None)
    settings = Settings(
        poll_watcher=env.get(ENV_WATCHER, "").strip().lower() == "poll",
        progress_delay=from_env(ENV_PROGRESS_DELAY, parse_seconds, DEFAULT_PROGRESS_DELAY, server_only=True),
        filenames=validate_filenames(names) if names else (DEFAULT_FILENAME,),
        global_dir=Path(os.path.abspath(gdir)),
        budget_bytes=budget,
        budget_tokens=budget_tokens,
        max_file_bytes=max_file_bytes,
        filenames_explicit=bool(names),
        follow_outside_links=follow_outside_links,
        notes_layout=layout,
        notes_dir=ndir,
    )
    resolved = with_agent_settings(settings, agent or GeminiSettings())
    return replace(resolved, warnings=(*warnings, *resolved.warnings)) if warnings else resolved


def _whole(value: str) -> Any:
    """VALUE as an int when it is written as a whole number, else VALUE (which `parse_count` refuses)."""
    try:
        return int(value)
    except ValueError:
        return value


def parse_seconds(value: str) -> float:
    """A number of seconds, 0 or more; SettingsError if not."""
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also NaN
        raise SettingsError("expected a number of seconds, 0 or more")
    return seconds


def parse_notes_layout(value: Any) -> str:
    """A notes layout name; SettingsError if it is not one."""
    if value not in NOTES_LAYOUTS:
        raise SettingsError(f"unknown notes layout {value!r}: use one of {', '.join(NOTES_LAYOUTS)}")
    return value


def parse_absolute_dir(value: Any) -> Path:
    """A directory given in the environment: it must be absolute (or start with `~`), since every
    process would otherwise resolve it against its own working directory."""
    path = parse_dir(value)
    if not os.path.isabs(os.path.expanduser(os.fspath(value).strip())):
        raise SettingsError("expected an absolute directory path (a relative one means a different "
                            "directory in each process)")
    return path


def with_agent_settings(settings: Settings, agent: GeminiSettings) -> Settings:
    """SETTINGS with the layer of Gemini's settings.json replaced by AGENT's (`read_gemini_settings`
    for one working directory): the file names unless they were given explicitly (a flag, the
    environment, an editor setting), the project root markers and the import format. The language
    server applies each project's own layer this way over the same explicit values."""
    warnings = list(agent.warnings)
    names = settings.filenames
    if not settings.filenames_explicit:
        names = (DEFAULT_FILENAME,)
        if agent.filenames:
            try:
                names = validate_filenames(agent.filenames)
            except SettingsError as err:
                warnings.append(f"ignoring context.fileName from Gemini's settings.json: {err}")
    return replace(
        settings,
        filenames=names,
        boundary_markers=DEFAULT_BOUNDARY_MARKERS if agent.boundary_markers is None else agent.boundary_markers,
        import_format=agent.import_format or DEFAULT_IMPORT_FORMAT,
        warnings=tuple(warnings),
    )


ENV_PORTABLE_WRITES = "MEMORY_LENS_PORTABLE_WRITES"


def portable_writes_only(environ: Mapping[str, str] | None = None) -> bool:
    """`MEMORY_LENS_PORTABLE_WRITES=1`: writes leave out the Linux-only calls (file leases,
    `renameat2`) and take the path every system has, as on macOS and Windows. Meant for tests:
    the write suite runs once each way (`guarded_replace.LINUX_CALLS`, docs/reliability.md)."""
    return (os.environ if environ is None else environ).get(ENV_PORTABLE_WRITES) == "1"


ENV_LOCK_DIR = "MEMORY_LENS_LOCK_DIR"


def lock_dir_override(environ: Mapping[str, str] | None = None) -> Path | None:
    """`MEMORY_LENS_LOCK_DIR`: where the writers' cross-process lock files go (`writer.lock_dir`)."""
    value = (os.environ if environ is None else environ).get(ENV_LOCK_DIR, "")
    return Path(value) if value else None
