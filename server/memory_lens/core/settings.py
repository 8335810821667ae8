"""Settings shared by every front end: memory filenames, the global directory, the size budget.

The size budget is 32768 UTF-8 bytes of merged text unless a token budget is given alone, in
which case that many estimated tokens is the budget instead (both apply when both are given).

The size limit of one memory file is 16 MiB: a bigger file is reported `too-large` and never
read whole (never parsed, checked or edited).

Resolution order for each value, in `resolve_settings` alone: an explicit argument (CLI flag,
LSP setting), then the environment (`MEMORY_LENS_FILENAMES`, `MEMORY_LENS_GLOBAL_DIR`,
`MEMORY_LENS_MAX_FILE_SIZE`), then Gemini CLI's own `settings.json` (`context.fileName`,
`context.memoryBoundaryMarkers`, `context.importFormat`; see core/gemini_settings.py), then the
default. The parsing every front end shares (comma lists, `~`, counts) is here too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from memory_lens.core.files import DEFAULT_MAX_FILE_BYTES, max_file_bytes_from_env
from memory_lens.core.gemini_settings import GeminiSettings

DEFAULT_FILENAME = "GEMINI.md"
DEFAULT_BUDGET_BYTES = 32 * 1024  # the limit Codex applies to its merged instructions
DEFAULT_BOUNDARY_MARKERS = (".git",)
DEFAULT_IMPORT_FORMAT = "tree"
ENV_FILENAMES = "MEMORY_LENS_FILENAMES"
ENV_GLOBAL_DIR = "MEMORY_LENS_GLOBAL_DIR"


class SettingsError(ValueError):
    """A setting has a value Memory Lens cannot use (the message says which and why)."""


@dataclass(frozen=True)
class Settings:
    """Which files are memory, where the global ones live, and how big merged memory may grow."""

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
) -> Settings:
    """Build Settings from explicit values, falling back to the environment, then to AGENT
    (Gemini CLI's settings.json, from `read_gemini_settings`), then defaults."""
    env = os.environ if environ is None else environ
    names: Iterable[str] = ()
    if filenames:
        names = filenames
    elif env.get(ENV_FILENAMES, "").strip():
        names = parse_filenames(env[ENV_FILENAMES])
    if global_dir is not None and str(global_dir) != "":
        gdir = Path(os.path.expanduser(os.fspath(global_dir)))
    elif env.get(ENV_GLOBAL_DIR, "").strip():
        gdir = parse_dir(env[ENV_GLOBAL_DIR])
    else:
        gdir = Path.home() / ".gemini"
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
        try:
            max_file_bytes = max_file_bytes_from_env(env)
        except ValueError as err:
            raise SettingsError(str(err)) from None
    elif max_file_bytes < 1:
        raise SettingsError(f"invalid file size limit {max_file_bytes}: give a number of bytes, 1 or more")
    settings = Settings(
        filenames=validate_filenames(names) if names else (DEFAULT_FILENAME,),
        global_dir=Path(os.path.abspath(gdir)),
        budget_bytes=budget,
        budget_tokens=budget_tokens,
        max_file_bytes=max_file_bytes,
        filenames_explicit=bool(names),
    )
    return with_agent_settings(settings, agent or GeminiSettings())


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
