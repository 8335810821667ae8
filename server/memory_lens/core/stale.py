"""`stale` findings: what a memory file says about the project that the project no longer holds.

Three kinds, each with its evidence in the message:

- a path (in a code span, or path-shaped in plain text: `./x`, `../x`, `dir/file.ext`, `dir/`)
  that exists neither relative to the memory file's directory nor to the project root, while
  its first named part does there (`tests/unit` with a `tests` directory): a path whose first
  directory is nowhere in the project names something elsewhere (another repository, a URL's
  path, a protocol method such as `textDocument/hover`), so it is not reported, nor is a path
  of one part (`./docs/`, `build/`);
- a script (`npm|pnpm|yarn run X`, `make X`, `just X`, `tox -e X`, `nox -s X`) that the nearest
  `package.json`, `Makefile`, `justfile`, `tox.ini` or `noxfile.py` (from the memory file's
  directory up to the project root) does not define;
- a package manager ("use pnpm", `pnpm install`) that the lock files of the nearest directory
  holding one contradict ("use pnpm" with only package-lock.json).

Only files inside a project (a `.git` above them) are checked: a global file's paths mean
nothing in particular. Never flagged, being examples rather than claims: fenced code, URLs,
globs, placeholders (`<name>`, `{x}`, `$VAR`, `...`), absolute and home paths, `@imports` (the
`import-*` codes check those). Nothing is reported when the defining file is absent (no evidence)
or cannot be parsed, nor for a make or just target when the file includes others or has pattern
rules (targets this reader cannot see: see `make_targets`).
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from memory_lens.core.discovery import find_project_root
from memory_lens.core.markdown import stretches

STALE = "stale"

# The project files the scripts and package managers are checked against (the language server
# re-checks memory files when one of them changes).
PACKAGE_JSON, MAKEFILES, JUSTFILES = "package.json", ("GNUmakefile", "makefile", "Makefile"), ("justfile", "Justfile", ".justfile")
TOX_INI, NOXFILE = "tox.ini", "noxfile.py"
LOCKS = {"package-lock.json": "npm", "npm-shrinkwrap.json": "npm", "pnpm-lock.yaml": "pnpm",
         "yarn.lock": "yarn", "bun.lockb": "bun", "bun.lock": "bun"}
PROJECT_FILES = frozenset((PACKAGE_JSON, *MAKEFILES, *JUSTFILES, TOX_INI, NOXFILE, *LOCKS))

_FENCE = re.compile(r"^ *(`{3,}|~{3,})")
_HINT = re.compile(r"[`/]|\b(?:npm|pnpm|yarn|bun|tox|nox)\b", re.I)  # a line with none claims nothing
# What `_prose_lines` looks for: a `_HINT` or a `~` (a fence), written to start with a set of
# characters, which the regex engine scans for fast (~4 times faster than `_HINT` on the large tree).
_LOOK = re.compile(r"[`/~nNpPyYbBtT](?:(?<=[`/~])|(?<=\b[nNpPyYbBtT])(?i:(?<=n)pm|(?<=p)npm|(?<=y)arn|(?<=b)un|(?<=[tn])ox)\b)")
_SPAN = re.compile(r"(`+)(.+?)\1")
_SCRIPT = re.compile(r"\b(?:(npm|pnpm|yarn) run|(tox) -e|(nox) -s)\s+([\w:.,@/-]+)")
_TARGET = re.compile(r"^(make|just)\s+(.*)$")  # code spans only: "make sure" is prose
_MANAGER = re.compile(r"\b(?:use|using|prefer)\s+`?(npm|pnpm|yarn|bun)\b|`(npm|pnpm|yarn|bun) (?:install|i|add|ci)\b", re.I)
_BARE_PATH = re.compile(r"(?<![\w/.:@~$-])(\.{1,2}/[\w./-]+|[A-Za-z_][\w.-]*/(?:[\w.-]+/)*(?:[\w-][\w.-]*\.[A-Za-z]\w{0,5}|[\w.-]*/))"
                        r"(?![\w/])")
_PLACEHOLDER = re.compile(r"[<>{}\[\]*?$%|=\s]|\.\.\.|^[~/\\@]|^\w+:|^-|\\")


def stale_findings(path: Path, text: str) -> list[tuple[int, int, str]]:
    """(1-based line, 1-based column, message) of each stale reference in memory file PATH with
    TEXT. Cheap when TEXT holds no code span and no command: a few plain string searches."""
    lines = _prose_lines(text)
    first = next(lines, None)
    if first is None:  # no line of it could claim anything
        return []
    here = Path(os.path.abspath(path)).parent
    root = find_project_root(here)
    if root is None:
        return []
    found: list[tuple[int, int, str]] = []
    for number, line in [first, *lines]:
        for col, claim in _claims(line):
            message = _judge(claim, here, root)
            if message:
                found.append((number, col + 1, f"stale: {message}"))
    return found


def _prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The 1-based number and text of each line of TEXT outside fenced code that could claim
    something (`_HINT`). Only lines with a hint or a `~` are looked at (`_look_lines`): a line with
    neither opens, closes and claims nothing."""
    fence = ""
    number, counted = 1, 0
    for start, end in _look_lines(text):
        number += text.count("\n", counted, start)
        counted = start
        line = text[start:end]
        f = _FENCE.match(line.lstrip(" \t-*+>0123456789.") if not fence else line.lstrip())
        if fence:
            if f and f.group(1)[0] == fence[0] and len(f.group(1)) >= len(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if f:
            fence = f.group(1)
            continue
        if _HINT.search(line) is not None:
            yield number, line


# What every match of `_LOOK` holds, in the text or (the words) in its lower case: a line holding
# none has no match. ("pnpm" holds "npm".)
_LOOK_CHARS, _LOOK_WORDS = ("`", "/", "~"), ("npm", "yarn", "bun", "tox", "nox")


def _look_lines(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each line of TEXT in which `_LOOK` matches, in order, a stretch of lines at
    a time (`markdown.stretches`). In ASCII text the lines holding one of `_LOOK_CHARS` or
    `_LOOK_WORDS` (plain string searches, which skip the rest at C speed) are searched one by one;
    elsewhere `_LOOK` searches the stretch (its letters are common ones: it stops often)."""
    for s0, e0 in stretches(text):
        chunk = text[s0:e0]
        if not chunk.isascii():  # lower() could change lengths; case-insensitive matches beyond ASCII
            pos = s0
            while (m := _LOOK.search(text, pos, e0)) is not None:
                start = text.rfind("\n", 0, m.start()) + 1
                end = text.find("\n", m.end())
                end = len(text) if end < 0 else end
                yield start, end
                pos = end + 1
            continue
        lower = chunk.lower()
        lines = set()
        for needles, hay in ((_LOOK_CHARS, chunk), (_LOOK_WORDS, lower)):
            for needle in needles:
                i = hay.find(needle)
                while i >= 0:
                    end = chunk.find("\n", i)
                    end = len(chunk) if end < 0 else end
                    lines.add((chunk.rfind("\n", 0, i) + 1, end))
                    i = hay.find(needle, end)
        for start, end in sorted(lines):
            if _LOOK.search(text, s0 + start, s0 + end) is not None:
                yield s0 + start, s0 + end


def _claims(line: str) -> Iterator[tuple[int, tuple[str, str]]]:
    """(0-based column, (kind, value)) of what LINE claims: paths, scripts, package managers."""
    spans = [(m.start(2), m.group(2).strip()) for m in _SPAN.finditer(line)]
    plain = _SPAN.sub(lambda m: " " * len(m.group(0)), line)
    for col, code in spans:
        if (m := _TARGET.match(code)) is not None:
            words = [w for w in m.group(2).split() if not w.startswith("-") and "=" not in w]
            if words:
                yield col, (m.group(1), words[0])
        elif _SCRIPT.search(code) is None and _MANAGER.search(f"`{code}") is None and _looks_like_path(code):
            yield col, ("path", code)
    for m in _SCRIPT.finditer(line):
        tool = m.group(1) or m.group(2) or m.group(3)
        col = m.start(4)
        for name in m.group(4).split(",") if tool == "tox" else [m.group(4)]:
            yield col, (tool, name.rstrip(".,:;"))
            col += len(name) + 1
    for m in _MANAGER.finditer(line):
        yield m.start(), ("manager", (m.group(1) or m.group(2)).lower())
    for m in _BARE_PATH.finditer(plain):
        if "://" not in plain[max(0, m.start() - 12):m.end()] and _looks_like_path(m.group(1)):
            yield m.start(), ("path", m.group(1).rstrip("."))


def _looks_like_path(code: str) -> bool:
    """Whether code span CODE names a path in the project: relative, with a directory part or
    a `./`, and nothing that makes it a pattern, a placeholder, a URL or an option."""
    return "/" in code and "://" not in code and _PLACEHOLDER.search(code) is None


def _judge(claim: tuple[str, str], here: Path, root: Path) -> str | None:
    kind, value = claim
    if kind == "path":
        rel = re.sub(r"::.*$|:\d+(?::\d+)?$", "", value).rstrip("/")  # a test's id, a line number
        parts = rel.split("/")
        dots = next((i for i, part in enumerate(parts) if part not in (".", "..")), len(parts))
        first = "/".join(parts[:dots + 1])  # the first named part, with the `./` or `../` before it
        bases = [b for b in dict.fromkeys((here, root)) if os.path.lexists(b / first)]
        if first == rel or not bases or parts[dots] == ".git" or any(os.path.lexists(b / rel) for b in bases):
            return None  # found, in git's own files, or naming nothing of this project (elsewhere)
        if _ignored(root, rel):
            return None  # a build output or the like: made by a build, not committed
        return f"`{value}` does not exist in {here}" + (f" nor in the project root {root}" if here != root else "")
    if kind == "manager":
        return _manager(value, here, root)
    defining = {"npm": (PACKAGE_JSON,), "pnpm": (PACKAGE_JSON,), "yarn": (PACKAGE_JSON,), "make": MAKEFILES,
                "just": JUSTFILES, "tox": (TOX_INI,), "nox": (NOXFILE,)}[kind]
    found = _nearest(here, root, defining)
    if found is None:
        return None
    names = _defined(kind, str(found), *_stamp(found))
    if (names is None or value in names or (kind == "tox" and _implicit_tox_env(value))
            or (kind == "nox" and re.split(r"[-(]", value)[0] in names)):  # a parametrised session
        return None
    shown = {"npm": "npm run", "pnpm": "pnpm run", "yarn": "yarn run", "tox": "tox -e", "nox": "nox -s"}.get(kind, kind)
    what = {"make": "target", "just": "recipe", "tox": "environment", "nox": "session"}.get(kind, "script")
    listed = ", ".join(sorted(names)[:8]) + (", ..." if len(names) > 8 else "")
    return f"`{shown} {value}`: {found} defines no {what} '{value}' ({listed or 'none defined'})"


def _manager(name: str, here: Path, root: Path) -> str | None:
    """The contradiction between package manager NAME and the nearest lock files, if any."""
    for directory in _upward(here, root):
        locks = sorted(n for n in LOCKS if os.path.isfile(directory / n))
        if locks:
            if any(LOCKS[n] == name for n in locks):
                return None
            return (f"says {name}, but {directory} has {', '.join(locks)} "
                    f"({'/'.join(sorted({LOCKS[n] for n in locks}))}'s lock file) and no lock file of {name}")
    return None


def _ignored(root: Path, rel: str) -> bool:
    """Whether the project root's .gitignore excludes REL (a file the build makes)."""
    stamp = _stamp_or_none(root / ".gitignore")
    spec = _gitignore(root / ".gitignore", *stamp) if stamp[1] else None
    return spec is not None and spec.match_file(rel)


@lru_cache(maxsize=16)
def _gitignore(path: Path, mtime: int, size: int):  # -> pathspec.GitIgnoreSpec | None
    import pathspec  # only when a path is missing: it takes a while to import

    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
    except (OSError, ValueError):
        return None


def _stamp_or_none(path: Path) -> tuple[int, int]:
    try:
        return _stamp(path)
    except OSError:
        return 0, 0


def _upward(here: Path, root: Path) -> Iterator[Path]:
    """HERE and its parents up to ROOT (HERE alone when it is not below ROOT)."""
    directory = here
    while True:
        yield directory
        if directory == root or directory.parent == directory:
            return
        directory = directory.parent


def _nearest(here: Path, root: Path, names: tuple[str, ...]) -> Path | None:
    for directory in _upward(here, root):
        for name in names:
            if os.path.isfile(directory / name):
                return directory / name
    return None


def _stamp(path: Path) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_mtime_ns, st.st_size


def _implicit_tox_env(name: str) -> bool:
    """tox's default environments need no section: py, py3, py312, pypy3, 3.12."""
    return re.fullmatch(r"(?:py|pypy)(?:\d+(?:\.\d+)?)?|\d\.\d+", name) is not None


@lru_cache(maxsize=256)
def _defined(kind: str, path: str, mtime: int, size: int) -> frozenset[str] | None:
    """The scripts, targets, environments or sessions the project file at PATH defines (one
    parse per version of the file); None when it cannot be read or parsed, or may define more
    than this reader sees."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if kind in ("npm", "pnpm", "yarn"):
            scripts = json.loads(text).get("scripts", {})
            return frozenset(scripts) if isinstance(scripts, dict) else None
        if kind == "make":
            return make_targets(text)
        if kind == "just":
            return just_recipes(text)
        if kind == "tox":
            return tox_envs(text)
        return nox_sessions(text)
    except (OSError, ValueError, SyntaxError, configparser.Error, AttributeError):
        return None


_MAKE_RULE = re.compile(r"^([^\s:#=][^:#=]*?)\s*::?(?!=)", re.M)


def make_targets(text: str) -> frozenset[str] | None:
    """The explicit targets of a Makefile: the names before `:` at the start of a rule line.
    A regex, not make: targets made by `include`d files, pattern rules (`%`), variables or
    `$(eval)` are not seen, so such a Makefile gives None (nothing reported)."""
    if re.search(r"^\s*-?(?:include|sinclude)\b|^[^\t#]*%[^=]*:|\$\(eval", text, re.M):
        return None
    return frozenset(t for m in _MAKE_RULE.finditer(text) for t in m.group(1).split() if "$" not in t)


_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)(?:\s+[^:=]*)?:(?!=)", re.M)
_JUST_ALIAS = re.compile(r"^alias\s+([A-Za-z_][\w-]*)\s*:=", re.M)


def just_recipes(text: str) -> frozenset[str] | None:
    """The recipes and aliases of a justfile (a regex over just's grammar; None with `import` or `mod`)."""
    if re.search(r"^(?:import|mod)\b", text, re.M):
        return None
    return frozenset([*_JUST_RECIPE.findall(text), *_JUST_ALIAS.findall(text)])


def tox_envs(text: str) -> frozenset[str]:
    """The environments of a tox.ini (configparser): its `envlist`, brace factors expanded, and
    its `[testenv:NAME]` sections."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    parser.read_string(text)
    names = {s.split(":", 1)[1].strip() for s in parser.sections() if s.startswith("testenv:")}
    raw = parser.get("tox", "envlist", fallback="")
    for item in re.split(r"[\s,]+(?![^{]*})", raw):
        names.update(_expand(item.strip()))
    names.discard("")
    return frozenset(n for name in names for n in (name, *name.split(":")[:1]))


def _expand(item: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", item)
    if m is None:
        return [item]
    return [e for part in m.group(1).split(",") for e in _expand(item[:m.start()] + part.strip() + item[m.end():])]


def nox_sessions(text: str) -> frozenset[str]:
    """The sessions of a noxfile (its syntax tree): functions decorated with `nox.session` or
    `session`, under their `name=` when given (a parametrised session `tests` also answers to
    `tests-3.12`: `_judge`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name != "session":
                continue
            given = [k.value.value for k in (call.keywords if call else [])
                     if k.arg == "name" and isinstance(k.value, ast.Constant)]
            names.add(str(given[0]) if given else node.name)
    return frozenset(names)
