"""The sandbox: an isolated workspace in `tmp_path` and a runner for the real `memory-lens`.

Both layers build their workspaces with `Workspace`: the CLI tests directly, the end-to-end tests
through `tests/e2e/harness.py`, which adds the default tree and the server session.

Every CLI run gets its own HOME, working directory, lock directory and cache directory under
`tmp_path`, and an environment without any `MEMORY_LENS_*` variable from the outside, so no test
can read or write a real user's memory files.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import pytest


RUN_TIMEOUT_SECONDS = 60  # a safety net against hangs (FIFOs, locks), not a timing assertion
PROJECT_MARKERS = (".git", "GEMINI.md", "AGENTS.md", "CONTEXT.md")  # what chains search upward for


def isolated_root(path: Path) -> Path:
    """PATH resolved, for a sandbox root. Fails the test if its ancestors hold memory files or
    a `.git`, since those would leak into chains that search upward."""
    root = Path(os.path.realpath(path))
    stray = [d / name for d in root.parents for name in PROJECT_MARKERS if os.path.lexists(d / name)]
    if stray:
        pytest.fail(f"the temp directory's ancestors hold {stray}; set --basetemp to a clean place")
    return root


def memory_lens_command() -> list[str]:
    """The installed `memory-lens` console script next to this interpreter, else `python -m`."""
    bin_dir = Path(sys.executable).parent
    script = shutil.which("memory-lens", path=str(bin_dir))
    return [script] if script else [sys.executable, "-m", "memory_lens"]


MEMORY_LENS = memory_lens_command()


@dataclass(frozen=True)
class Result:
    """What one run of `memory-lens` did."""

    rc: int
    stdout: str
    stderr: str
    args: tuple[str, ...] = ()

    def json(self) -> Any:
        return json.loads(self.stdout)

    def __str__(self) -> str:  # shown by pytest when an assertion about a result fails
        return f"memory-lens {' '.join(self.args)} -> rc={self.rc}\n--stdout--\n{self.stdout}--stderr--\n{self.stderr}"


class Workspace:
    """A sandbox under `tmp_path`: a home directory, project trees, and a way to run the CLI."""

    def __init__(self, root: Path, bytecode_cache: Path | None = None) -> None:
        self.root = root
        self.bytecode_cache = bytecode_cache
        self.home = root / "home"
        self.global_dir = self.home / ".gemini"
        self.lock_dir = root / "locks"
        self.cache_dir = root / "cache"
        self.config_dir = self.home / ".config"  # notes, approvals: never the real user's
        self.data_dir = root / "data"
        self.command = list(MEMORY_LENS)  # how to start the installed CLI
        for d in (self.home, self.lock_dir, self.cache_dir):
            d.mkdir(parents=True, exist_ok=True)

    # Building trees ------------------------------------------------------------------------

    def path(self, rel: str | os.PathLike[str]) -> Path:
        return self.root / rel

    def write(self, rel: str | os.PathLike[str], content: str | bytes) -> Path:
        """Write CONTENT (bytes exactly; str as UTF-8 with no newline translation) to ROOT/REL."""
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        return p

    def read(self, rel: str | os.PathLike[str]) -> str:
        return (self.root / rel).read_bytes().decode("utf-8")

    def mkdir(self, rel: str | os.PathLike[str]) -> Path:
        p = self.root / rel
        p.mkdir(parents=True, exist_ok=True)
        return p

    def project(self, rel: str | os.PathLike[str], git_file: bool = False) -> Path:
        """A project root at ROOT/REL: `.git` as a directory, or as a file (worktree style)."""
        p = self.mkdir(rel)
        if git_file:
            (p / ".git").write_text("gitdir: /nonexistent/worktrees/x\n", encoding="utf-8")
        else:
            (p / ".git").mkdir(exist_ok=True)
        return p

    def write_global(self, content: str | bytes, name: str = "GEMINI.md") -> Path:
        return self.write(self.global_dir.relative_to(self.root) / name, content)

    def symlink(self, rel: str, target: str | os.PathLike[str]) -> Path:
        """Make ROOT/REL a symbolic link to TARGET (kept exactly as given, relative or not)."""
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, p)
        return p

    def snapshot(self, skip: Sequence[Path] = ()) -> dict[str, bytes | str]:
        """Every file and link under the sandbox (locks, caches and the directories in SKIP
        aside), for "nothing changed"."""
        skipped = {self.lock_dir, self.cache_dir, *skip}
        out: dict[str, bytes | str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            base = Path(dirpath)
            if base in skipped or not skipped.isdisjoint(base.parents):
                dirnames[:] = []
                continue
            for name in sorted(dirnames + filenames):
                p = base / name
                rel = str(p.relative_to(self.root))
                if p.is_symlink():
                    out[rel] = "-> " + os.readlink(p)
                elif p.is_dir():
                    out[rel] = "<dir>"
                elif p.is_file():
                    try:
                        out[rel] = p.read_bytes()
                    except PermissionError:
                        out[rel] = "<unreadable>"
                else:
                    out[rel] = "<special>"
        return out

    # Running -------------------------------------------------------------------------------

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("MEMORY_LENS_") or k == "MEMORY_LENS_PORTABLE_WRITES"}  # the writes tested
        env.update(
            HOME=str(self.home),
            MEMORY_LENS_LOCK_DIR=str(self.lock_dir),
            XDG_CACHE_HOME=str(self.cache_dir),
            XDG_CONFIG_HOME=str(self.config_dir),
            XDG_DATA_HOME=str(self.data_dir),
            PYTHONIOENCODING="utf-8",
        )
        env.pop("PYTHONPATH", None)
        if self.bytecode_cache is not None:
            # Compile Memory Lens once per session, outside the source tree, instead of on every run.
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(self.bytecode_cache)
        if extra:
            env.update(extra)
        return env

    def run(
        self,
        *args: str,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        prefix: Sequence[str] = (),
        timeout: float = RUN_TIMEOUT_SECONDS,
    ) -> Result:
        """Run `memory-lens ARGS` in CWD (default: the home directory) and capture everything."""
        proc = subprocess.run(
            [*prefix, *MEMORY_LENS, *args],
            cwd=str(cwd if cwd is not None else self.home),
            env=self.env(env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
        )
        return Result(proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"),
                      tuple(args))

    def ok(self, *args: str, **kwargs: Any) -> Result:
        """Run and assert exit status 0."""
        result = self.run(*args, **kwargs)
        assert result.rc == 0, str(result)
        return result

    def json(self, *args: str, **kwargs: Any) -> Any:
        """Run with `--format json`, assert exit status 0, and parse stdout."""
        return self.ok(*args, "--format", "json", **kwargs).json()
