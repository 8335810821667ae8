"""Finding every memory file under a directory tree, the way agents' downward discovery does.

Ignored directories are pruned: nested `.gitignore` files (inside a git repository, like git
itself), `.git/info/exclude`, and `.geminiignore` files (anywhere). The `.git` directory is never
entered and symlinked directories are not followed. The walk uses the Rust `ignore` crate through
`rignore` when it is installed, and a pure-Python walker with `pathspec` otherwise; both give the
same answer.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

if TYPE_CHECKING:
    import pathspec

GEMINI_IGNORE = ".geminiignore"
GIT_IGNORE = ".gitignore"


def _spec(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    import pathspec  # here, not at the top: it takes a while to import and is rarely needed

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(lines)
    except Exception:  # a malformed pattern: ignore the file rather than fail the scan
        return None
    return spec if spec.patterns else None


def _excluded(spec: pathspec.GitIgnoreSpec, rel_parts: Sequence[str], is_dir: bool) -> bool:
    """Git semantics: a path is excluded when any parent directory is, or it matches itself."""
    for i in range(1, len(rel_parts)):
        if spec.check_file("/".join(rel_parts[:i]) + "/").include:
            return True
    rel = "/".join(rel_parts) + ("/" if is_dir else "")
    return bool(spec.check_file(rel).include)


def _in_git_repo(directory: Path) -> bool:
    return any(os.path.exists(os.path.join(d, ".git")) for d in (directory, *directory.parents))


def _walk_python(root: Path, names: frozenset[str]) -> list[Path]:
    """Depth-first scandir walk with gitignore-style pruning (the fallback engine)."""
    found: list[Path] = []
    in_git = _in_git_repo(root)
    # Each frame: (directory, list of (base dir, spec) in effect, whether inside a git repo)
    stack: list[tuple[Path, list[tuple[Path, pathspec.GitIgnoreSpec]], bool]] = [(root, [], in_git)]
    while stack:
        directory, specs, git = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        entry_names = {e.name for e in entries}
        git = git or ".git" in entry_names
        local = list(specs)
        if git and GIT_IGNORE in entry_names:
            spec = _spec(directory / GIT_IGNORE)
            if spec:
                local.append((directory, spec))
        if ".git" in entry_names:
            spec = _spec(directory / ".git" / "info" / "exclude")
            if spec:
                local.append((directory, spec))
        if GEMINI_IGNORE in entry_names:
            spec = _spec(directory / GEMINI_IGNORE)
            if spec:
                local.append((directory, spec))
        for entry in entries:
            if entry.name == ".git":
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir and entry.name not in names:
                continue
            path = Path(entry.path)
            if any(_excluded(spec, path.relative_to(base).parts, is_dir) for base, spec in local):
                continue
            if entry.name in names:
                found.append(path)  # a directory so named is reported too: it is an unusable memory file
            if is_dir:
                stack.append((path, local, git))
    return found


def _walk_rignore(root: Path, names: frozenset[str]) -> list[Path]:
    import rignore

    overrides = sorted(names) + [GEMINI_IGNORE, "!.git/"]
    found: list[Path] = []
    gemini_ignores: list[Path] = []
    for raw in rignore.walk(root, ignore_hidden=False, overrides=overrides, follow_links=False):
        path = raw if isinstance(raw, Path) else Path(raw)
        name = path.name
        if name == GEMINI_IGNORE:
            gemini_ignores.append(path)
        elif name in names:
            found.append(path)
    if not gemini_ignores:
        return found
    specs: dict[Path, list[pathspec.GitIgnoreSpec]] = {}
    for p in gemini_ignores:
        if spec := _spec(p):
            specs.setdefault(p.parent, []).append(spec)
    # Only the .geminiignore files of a path's own ancestors can exclude it.
    return [p for p in found
            if not any(_excluded(spec, p.relative_to(base).parts, False)
                       for base in p.parents if base in specs for spec in specs[base])]


def rignore_available() -> bool:
    try:
        import rignore  # noqa: F401
    except ImportError:
        return False
    return True


def find_memory_files(root: Path, filenames: Iterable[str], engine: str = "auto") -> list[Path]:
    """Every file named like a memory file under ROOT (ignored paths pruned), sorted."""
    names = frozenset(filenames)
    if not os.path.isdir(root):
        return []
    use_rignore = engine == "rignore" or (engine == "auto" and rignore_available())
    found = _walk_rignore(root, names) if use_rignore else _walk_python(root, names)
    return sorted(found)
