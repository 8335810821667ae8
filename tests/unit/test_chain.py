"""memory_lens.core.discovery and memory_lens.core.settings: target, project root, chain, settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.discovery import (
    Scope,
    TargetError,
    chain_for_root,
    find_project_root,
    local_dirs,
    plan_chain,
    resolve_target,
)
from memory_lens.core.settings import (
    DEFAULT_BUDGET_BYTES,
    Settings,
    SettingsError,
    resolve_settings,
    validate_filenames,
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = Path(os.path.realpath(tmp_path))
    monkeypatch.setenv("HOME", str(base / "home"))
    (base / "home").mkdir()
    return base


# resolve_target ----------------------------------------------------------------------------------


def test_target_of_a_directory_is_itself(root: Path) -> None:
    assert resolve_target(root) == root


def test_target_of_a_file_is_its_directory(root: Path) -> None:
    (root / "f.txt").write_text("")
    assert resolve_target(root / "f.txt") == root
    assert resolve_target(str(root / "f.txt")) == root


def test_target_resolves_symlinks(root: Path) -> None:
    (root / "real" / "deep").mkdir(parents=True)
    (root / "real" / "deep" / "f").write_text("")
    os.symlink(root / "real", root / "alias")
    assert resolve_target(root / "alias" / "deep") == root / "real" / "deep"
    os.symlink(root / "real" / "deep" / "f", root / "flink")
    assert resolve_target(root / "flink") == root  # a linked file counts where the link is
    assert resolve_target(root / "alias" / "deep" / "f") == root / "real" / "deep"


def test_target_defaults_to_the_cwd(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root / "home")
    assert resolve_target(None) == root / "home"
    assert resolve_target("") == root / "home"


@pytest.mark.parametrize(("name", "message"), [("missing", "no such file or directory"),
                                               ("missing/deeper", "no such file or directory"),
                                               ("dangling", "a symlink to a missing target"),
                                               ("bad\0name", "not a valid path"),
                                               ("x" * 300, "File name too long")])
def test_missing_target_raises(root: Path, name: str, message: str) -> None:
    os.symlink("nowhere", root / "dangling")
    with pytest.raises(TargetError, match=message):
        resolve_target(os.fspath(root) + "/" + name)


def test_nearest_existing_takes_the_directory_above_a_missing_path(root: Path) -> None:
    """The language server's form (a document not saved yet): the same rule, no error for a
    path that is not there; one the system cannot take is still an error."""
    os.symlink("nowhere", root / "dangling")
    (root / "real").mkdir()
    os.symlink("real", root / "alias")
    assert resolve_target(root / "missing.md", nearest_existing=True) == root
    assert resolve_target(root / "new" / "deeper" / "x.md", nearest_existing=True) == root
    assert resolve_target(root / "dangling", nearest_existing=True) == root
    assert resolve_target(root / "alias" / "new" / "x.md", nearest_existing=True) == root / "real"
    assert resolve_target(root / "alias", nearest_existing=True) == root / "real"
    for bad in (os.fspath(root) + "/bad\0name", root / ("x" * 300)):
        with pytest.raises(TargetError):
            resolve_target(bad, nearest_existing=True)


# find_project_root -------------------------------------------------------------------------------


def test_project_root_by_git_directory_or_file(root: Path) -> None:
    (root / "a" / ".git").mkdir(parents=True)
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / ".git").write_text("gitdir: elsewhere\n")
    assert find_project_root(root / "a" / "b" / "c") == root / "a" / "b"
    assert find_project_root(root / "a") == root / "a"
    assert find_project_root(root / "home") is None


def test_project_root_with_a_custom_predicate(root: Path) -> None:
    target = root / "x" / "y"
    assert find_project_root(target, lambda d: d == str(root / "x")) == root / "x"
    assert find_project_root(target, lambda d: False) is None


# local_dirs and plan_chain -------------------------------------------------------------------------


def test_local_dirs_from_the_project_root_down(root: Path) -> None:
    project = root / "p"
    target = project / "a" / "b"
    assert local_dirs(target, project) == [project, project / "a", target]
    assert local_dirs(project, project) == [project]


def test_local_dirs_without_a_project_are_the_target_alone(root: Path) -> None:
    # Gemini CLI 0.61.0: no root found, so the working directory is its own ceiling.
    home = root / "home"
    assert local_dirs(home / "a" / "b", None) == [home / "a" / "b"]
    assert local_dirs(home, None) == [home]
    assert local_dirs(root / "outside" / "x", None) == [root / "outside" / "x"]


def test_local_dirs_stop_at_the_global_dir(root: Path) -> None:
    home = root / "home"
    gdir = home / ".gemini"
    assert local_dirs(gdir / "sub" / "x", home, gdir) == [gdir / "sub", gdir / "sub" / "x"]
    assert local_dirs(gdir, home, gdir) == []
    assert local_dirs(gdir, None, gdir) == []
    assert local_dirs(home / "a", home, gdir) == [home, home / "a"]


def test_a_root_not_above_the_target_means_the_target_alone(root: Path) -> None:
    assert local_dirs(root / "a" / "b", root / "elsewhere") == [root / "a" / "b"]


def test_plan_chain_orders_general_to_specific(root: Path) -> None:
    project = root / "p"
    (project / ".git").mkdir(parents=True)
    target = project / "src"
    target.mkdir()
    settings = Settings(filenames=("GEMINI.md", "AGENTS.md"), global_dir=root / "g")
    plan = plan_chain(target, settings)
    assert plan.project_root == project and plan.target_dir == target
    assert [(c.path, c.scope) for c in plan.candidates] == [
        (root / "g" / "GEMINI.md", Scope.GLOBAL), (root / "g" / "AGENTS.md", Scope.GLOBAL),
        (project / "GEMINI.md", Scope.PROJECT), (project / "AGENTS.md", Scope.PROJECT),
        (target / "GEMINI.md", Scope.PROJECT), (target / "AGENTS.md", Scope.PROJECT)]


def test_project_roots_found_with_known_answers_equal_roots_found_alone(root: Path) -> None:
    """`find_project_root` with a dict of answers (a pass over a tree) gives every directory the
    root it gets alone, in any order, nested roots included, and asks each directory once."""
    (root / "outer" / ".git").mkdir(parents=True)
    (root / "outer" / "inner" / ".git").mkdir(parents=True)
    dirs = [root / "outer" / "inner" / "a" / "b", root / "outer" / "x" / "y", root / "outer" / "inner",
            root / "outer", root / "outer" / "x", root / "none" / "deep", root / "outer" / "inner" / "a"]
    alone = [find_project_root(d) for d in dirs]
    assert alone[0] == alone[2] == root / "outer" / "inner" and alone[1] == alone[3] == root / "outer"
    for order in (dirs, dirs[::-1]):
        asked: list[str] = []

        def is_root(d: str) -> bool:
            asked.append(d)
            return (Path(d) / ".git").exists()

        known: dict = {}
        found = {d: find_project_root(d, is_root, known) for d in order}
        assert [found[d] for d in dirs] == alone
        assert len(asked) == len(set(asked))  # no directory asked twice


def test_plans_made_from_their_parents_equal_plans_made_from_scratch(root: Path) -> None:
    """`chain_for_root` with a dict of plans (a pass over a tree) gives each directory the plan
    it gives alone, in any order: below the root, at the root, under and at the global
    directory inside the project, with two name lists, and for roots not above the target."""
    home = root / "home"
    gdir = home / ".gemini"
    dirs = [home / "a" / "b" / "c", home / "a", home, home / "a" / "b", gdir / "sub" / "x", gdir / "sub", gdir,
            home / "z" / "y", root / "elsewhere" / "q"]
    for names in (("GEMINI.md",), ("AGENTS.md", "GEMINI.md")):
        settings = Settings(filenames=names, global_dir=gdir)
        for project_root in (home, None, home / "a", root / "unrelated"):
            alone = [chain_for_root(d, project_root, settings) for d in dirs]
            for order in (dirs, dirs[::-1]):
                plans: dict = {}
                made = {d: chain_for_root(d, project_root, settings, plans) for d in order}
                assert [made[d] for d in dirs] == alone, (names, project_root)
    # Plans of other names or another global directory are kept apart in the same dict.
    plans = {}
    one = chain_for_root(home / "a", home, Settings(filenames=("GEMINI.md",), global_dir=gdir), plans)
    two = chain_for_root(home / "a", home, Settings(filenames=("AGENTS.md",), global_dir=root / "g2"), plans)
    assert one != two and two == chain_for_root(home / "a", home, Settings(filenames=("AGENTS.md",),
                                                                           global_dir=root / "g2"))


# settings ------------------------------------------------------------------------------------------


def test_settings_defaults(root: Path) -> None:
    s = resolve_settings(environ={})
    assert s.filenames == ("GEMINI.md",)
    assert s.global_dir == root / "home" / ".gemini"
    assert s.budget_bytes == DEFAULT_BUDGET_BYTES == 32768 and s.budget_tokens is None
    assert s.primary_filename == "GEMINI.md"
    assert s.global_file() == root / "home" / ".gemini" / "GEMINI.md"


def test_settings_from_the_environment(root: Path) -> None:
    env = {"MEMORY_LENS_FILENAMES": " AGENTS.md ,, GEMINI.md ", "MEMORY_LENS_GLOBAL_DIR": str(root / "g")}
    s = resolve_settings(environ=env)
    assert s.filenames == ("AGENTS.md", "GEMINI.md")
    assert s.global_files() == [root / "g" / "AGENTS.md", root / "g" / "GEMINI.md"]


def test_explicit_values_beat_the_environment(root: Path) -> None:
    env = {"MEMORY_LENS_FILENAMES": "AGENTS.md", "MEMORY_LENS_GLOBAL_DIR": str(root / "g")}
    s = resolve_settings(["CONTEXT.md"], root / "h", environ=env)
    assert (s.filenames, s.global_dir) == (("CONTEXT.md",), root / "h")


def test_global_dir_expands_user_and_becomes_absolute(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_settings(global_dir="~/cfg", environ={}).global_dir == root / "home" / "cfg"
    monkeypatch.chdir(root)
    assert resolve_settings(global_dir="rel", environ={}).global_dir == root / "rel"


def test_budgets() -> None:
    assert resolve_settings(budget_bytes=10, environ={}).budget_bytes == 10
    token_only = resolve_settings(budget_tokens=5, environ={})
    assert (token_only.budget_bytes, token_only.budget_tokens) == (None, 5)
    both = resolve_settings(budget_bytes=10, budget_tokens=5, environ={})
    assert (both.budget_bytes, both.budget_tokens) == (10, 5)
    with pytest.raises(SettingsError):
        resolve_settings(budget_bytes=-1, environ={})


def test_validate_filenames() -> None:
    assert validate_filenames(["A.md", "B.md", "A.md"]) == ("A.md", "B.md")
    for bad in (["a/b.md"], [".."], ["."], [""], ["a\\b"], [], ["x\0"]):
        with pytest.raises(SettingsError):
            validate_filenames(bad)
