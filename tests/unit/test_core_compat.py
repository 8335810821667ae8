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
