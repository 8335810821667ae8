"""memory_lens.core.compat: what the core relies on inside rignore still holds with the version
installed. A rignore release that builds its paths another way fails here (the scan would still
be right, only slower: its helper process would fail every subtree and leave it to the caller)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_the_installed_rignore_is_one_pyproject_allows() -> None:
    deps = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    requirement = next(r for r in map(Requirement, deps) if r.name == "rignore")
    assert requirement.specifier.contains(version("rignore")), version("rignore")


def run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout


def test_rignore_yields_text_once_asked(tmp_path: Path) -> None:
    pytest.importorskip("rignore")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "GEMINI.md").write_text("- x\n", encoding="utf-8")
    out = run("from memory_lens.core import compat\n"
              "assert compat.rignore_yields_text()\n"
              "import rignore, sys\n"
              f"paths = list(rignore.walk({str(tmp_path)!r}))\n"
              "print(sorted({type(p).__name__ for p in paths}), sorted(paths))\n"
              "print('pathlib' in sys.modules and sys.modules['pathlib'].Path is str)\n")
    assert out.splitlines() == [
        f"['str'] {sorted([str(tmp_path), str(tmp_path / 'sub'), str(tmp_path / 'sub' / 'GEMINI.md')])}",
        "True",
    ]


def test_too_late_once_pathlib_or_rignore_is_imported() -> None:
    pytest.importorskip("rignore")
    out = run("import pathlib\n"
              "from memory_lens.core import compat\n"
              "print(compat.rignore_yields_text(), pathlib.Path is not str)\n")
    assert out.split() == ["False", "True"]
    out = run("import sys, rignore\n"
              "from memory_lens.core import compat\n"
              "print(compat.rignore_yields_text(), 'pathlib' in sys.modules)\n")
    assert out.split()[0] == "False"


# detect-secrets -------------------------------------------------------------------------------------


def test_the_installed_detect_secrets_is_one_pyproject_allows() -> None:
    deps = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    requirement = next(r for r in map(Requirement, deps) if r.name == "detect-secrets")
    assert requirement.specifier.contains(version("detect-secrets")), version("detect-secrets")


def test_the_plugins_load_without_requests_which_comes_when_first_used() -> None:
    out = run("import sys\n"
              "from memory_lens.core.secrets import find_secrets\n"
              "key = 'AKIA' + 'Z7QWERTYUIOPASDF'\n"
              "print([s.kind for s in find_secrets(f'- deploy key {key}')], 'requests' in sys.modules)\n"
              "import detect_secrets.plugins.base as base\n"
              "error = base.requests.exceptions.RequestException\n"
              "import requests\n"
              "print(error is requests.exceptions.RequestException, requests.Response.__module__)\n")
    assert out.splitlines() == ["['AWS Access Key'] False", "True requests.models"]


def test_a_plugin_that_does_not_run_on_a_line_would_have_found_nothing_there() -> None:
    """core/secrets.py starts a `regex_only` plugin only on a line one of its expressions matches
    in: on every sample, look-alike and known miss, and each of their lines, with backticks as
    quotes, every plugin run everywhere finds exactly that."""
    import re

    from secret_samples import LOOK_ALIKES, MISSES, SECRETS

    from memory_lens.core import secrets
    from memory_lens.core.compat import regex_only

    texts = [*SECRETS.values(), *LOOK_ALIKES.values(), *MISSES.values()]
    lines = [line.replace("`", '"') for text in texts for line in [text, *text.splitlines()]]
    plugins = [p for p in secrets._detectors() if regex_only(p)]
    assert len(plugins) >= 20
    hits = 0
    for line in lines:
        for plugin in plugins:
            found = list(plugin.analyze_string(line))
            hits += bool(found)
            assert not found or any(isinstance(r, re.Pattern) and r.search(line) for r in plugin.denylist)
    assert hits >= 30
