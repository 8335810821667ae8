"""Settings shared by every front end: memory filenames, the global directory, the size budget.

The size budget is 32768 UTF-8 bytes of merged text unless a token budget is given alone, in
which case that many estimated tokens is the budget instead (both apply when both are given).

The size limit of one memory file is 16 MiB: a bigger file is reported `too-large` and never
read whole (never parsed, checked or edited).

Resolution order for each value: an explicit argument (CLI flag, LSP setting), then the
environment (`MEMORY_LENS_FILENAMES`, `MEMORY_LENS_GLOBAL_DIR`, `MEMORY_LENS_MAX_FILE_SIZE`), then
the default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from memory_lens.core.files import DEFAULT_MAX_FILE_BYTES, max_file_bytes_from_env

DEFAULT_FILENAME = "GEMINI.md"
DEFAULT_BUDGET_BYTES = 32 * 1024  # the limit Codex applies to its merged instructions
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


def resolve_settings(
    filenames: Iterable[str] | None = None,
    global_dir: str | os.PathLike[str] | None = None,
    budget_bytes: int | None = None,
    budget_tokens: int | None = None,
    environ: Mapping[str, str] | None = None,
    max_file_bytes: int | None = None,
) -> Settings:
    """Build Settings from explicit values, falling back to the environment, then defaults."""
    env = os.environ if environ is None else environ
    names: Iterable[str]
    if filenames:
        names = filenames
    elif env.get(ENV_FILENAMES, "").strip():
        names = [part for part in env[ENV_FILENAMES].split(",") if part.strip()]
    else:
        names = (DEFAULT_FILENAME,)
    if global_dir is not None and str(global_dir) != "":
        gdir = Path(os.path.expanduser(os.fspath(global_dir)))
    elif env.get(ENV_GLOBAL_DIR, "").strip():
        gdir = Path(os.path.expanduser(env[ENV_GLOBAL_DIR].strip()))
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
    return Settings(
        filenames=validate_filenames(names),
        global_dir=Path(os.path.abspath(gdir)),
        budget_bytes=budget,
        budget_tokens=budget_tokens,
        max_file_bytes=max_file_bytes,
    )
