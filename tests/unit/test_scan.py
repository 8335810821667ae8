"""The workspace walk (`core/scan.py`): both engines, and rignore's parallel split, find exactly
the memory files an agent's discovery would, on a tree with every kind of ignore rule."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from memory_lens.core import cpus, scan
from memory_lens.core.scan import find_memory_files

NAMES = ["GEMINI.md"]


def write(path: Path, text: str = "- x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, set[Path]]:
    """A repository with memory files that count, and others that every rule must drop."""
    root = tmp_path / "repo"
    (root / ".git" / "info").mkdir(parents=True)
    write(root / ".git" / "info" / "exclude", "scratch/\n")
    write(root / ".git" / "GEMINI.md")  # inside .git: never
    write(root / ".gitignore", "build/\nnode_modules/\n*.tmp\n")
    write(root / ".geminiignore", "drafts/\n")
    expected = {write(root / "GEMINI.md")}
    for top in ("api", "web", "lib", "docs", "tools"):
        for sub in range(6):
            d = root / top / f"mod{sub}"
            expected.add(write(d / "GEMINI.md"))
            expected.add(write(d / "deep" / "er" / "GEMINI.md"))
            write(d / "node_modules" / "pkg" / "GEMINI.md")  # .gitignore'd at any depth
            write(d / "drafts" / "GEMINI.md")  # the root .geminiignore
            write(d / "file.tmp" / "GEMINI.md")  # an ignored directory name
    write(root / "api" / "mod1" / ".gitignore", "generated/\n")
    write(root / "api" / "mod1" / "generated" / "GEMINI.md")
    expected.add(write(root / "api" / "mod2" / "generated" / "GEMINI.md"))  # only mod1 ignores it
    write(root / "web" / "mod3" / ".geminiignore", "private/\ndeep/er/GEMINI.md\n")  # a directory, a file
    write(root / "web" / "mod3" / "private" / "x" / "GEMINI.md")
    expected.remove(root / "web" / "mod3" / "deep" / "er" / "GEMINI.md")
    write(root / "tools" / ".ignore", "mod0/\n")  # not an ignore file agents read: mod0 counts
    expected.add(write(root / "web" / "mod4" / "private" / "GEMINI.md"))
    write(root / "build" / "GEMINI.md")
    write(root / "scratch" / "GEMINI.md")
    write(root / "lib" / "scratch" / "GEMINI.md")  # info/exclude's `scratch/` matches at any depth
    (root / "docs" / "mod5" / "GEMINI.md").unlink()
    (root / "docs" / "mod5" / "GEMINI.md").mkdir()  # a directory so named: reported (unusable)
    expected.add(root / "docs" / "mod5" / "GEMINI.md")
    (root / "lib" / "GEMINI.md").mkdir()  # the same, right at the split depth
    expected.add(root / "lib" / "GEMINI.md")
    os.symlink(root / "api", root / "tools" / "link")  # not followed
    return root, expected


@pytest.fixture
def always_parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "MANY_SUBTREES", 1)
    monkeypatch.setattr(scan, "helper_count", lambda: 2)
    monkeypatch.setattr(scan, "busy_cpus", lambda: 0)  # as on macOS and Windows: every other core idle


def test_python_engine(tree: tuple[Path, set[Path]]) -> None:
    root, expected = tree
    assert set(find_memory_files(root, NAMES, engine="python")) == expected


def test_rignore_in_one_walk(tree: tuple[Path, set[Path]]) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    assert find_memory_files(root, NAMES, engine="rignore", parallel=False) == sorted(expected)


def test_rignore_split_over_helper_processes(tree: tuple[Path, set[Path]], always_parallel: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    spawned: list[list[str]] = []
    real_popen = scan.subprocess.Popen

    def popen(args: list[str], **kwargs):
        spawned.append(args)
        return real_popen(args, **kwargs)

    monkeypatch.setattr(scan.subprocess, "Popen", popen)
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)
    assert len(spawned) == 2  # the helpers did start
    assert all(args[1:6] == ["-E", "-s", "-S", "-m", "memory_lens.core.scan_worker"] for args in spawned)


@pytest.mark.parametrize("engine,parallel", [("python", False), ("rignore", False), ("rignore", True)])
def test_the_same_walk_reports_directories_of_other_names(tree: tuple[Path, set[Path]], always_parallel: None,
                                                          engine: str, parallel: bool) -> None:
    """`scan_tree`'s ALSO names (the rules folders' holders, for `check`): found in the memory
    scan's own walk, helpers included; an ignored one pruned, not whitelisted (nothing under it is
    found either); with rignore, one a .geminiignore excludes is kept (that file is Gemini's alone),
    as the walk of every file (`walk_everything`) keeps it."""
    if engine == "rignore":
        pytest.importorskip("rignore")
    root, expected = tree
    holders = {root / ".claude", root / "api" / "mod3" / "x" / "y" / ".cursor",
               root / "web" / "mod4" / "drafts" / ".claude"}  # under a .geminiignore'd directory
    for holder in holders:
        write(holder / "rules" / "a.md")
    write(root / "build" / ".claude" / "rules" / "a.md")  # .gitignore'd
    write(root / "build" / ".claude" / "GEMINI.md")
    memory, extra = scan.scan_tree(root, NAMES, (".claude", ".cursor"), engine=engine, parallel=parallel)
    assert set(memory) == expected
    kept = holders if engine == "rignore" else holders - {root / "web" / "mod4" / "drafts" / ".claude"}
    assert set(extra) == kept


def test_small_trees_start_no_helper(tree: tuple[Path, set[Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rignore")
    root, expected = tree

    def popen(*args, **kwargs):
        raise AssertionError("a helper process was started for a small tree")

    monkeypatch.setattr(scan.subprocess, "Popen", popen)
    monkeypatch.setattr(scan, "SERIAL_SECONDS", 60.0)  # however slow the machine running the test
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)


def test_helpers_that_cannot_start(tree: tuple[Path, set[Path]], always_parallel: None,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    monkeypatch.setattr(sys, "executable", str(root / "no-such-python"))
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)


@pytest.mark.parametrize("helper", [
    "import os; os.read(0, 1); os._exit(3)",  # dies on its first subtree
    "import os, sys; os.read(0, 4096); sys.stdout.buffer.write(b'\\x01boom\\0\\0'); sys.stdout.flush()",  # fails one
])
def test_helpers_that_fail_leave_their_subtrees_to_the_caller(tree: tuple[Path, set[Path]], always_parallel: None,
                                                             monkeypatch: pytest.MonkeyPatch, helper: str) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    monkeypatch.setattr(scan, "helper_command", lambda names: ([sys.executable, "-c", helper], None))
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> list:
    """The helper processes a walk starts."""
    started: list = []
    real_popen = scan.subprocess.Popen

    def popen(args: list[str], **kwargs):
        started.append(real_popen(args, **kwargs))
        return started[-1]

    monkeypatch.setattr(scan.subprocess, "Popen", popen)
    return started


def test_helpers_end_with_the_walk(tree: tuple[Path, set[Path]], always_parallel: None, helpers: list) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)
    assert len(helpers) == 2 and all(proc.returncode is not None for proc in helpers)


def test_a_helper_that_stops_answering_is_given_up(tree: tuple[Path, set[Path]], always_parallel: None,
                                                  helpers: list, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    monkeypatch.setattr(scan, "HELPER_TIMEOUT_SECONDS", 0.5)
    hang = "import os, time; os.read(0, 1); time.sleep(600)"
    monkeypatch.setattr(scan, "helper_command", lambda names: ([sys.executable, "-c", hang], None))
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)
    assert len(helpers) == 2 and all(proc.returncode is not None for proc in helpers)  # ended, not left behind


def test_a_helper_still_walking_at_the_end_is_not_waited_for(tree: tuple[Path, set[Path]], always_parallel: None,
                                                            helpers: list, monkeypatch: pytest.MonkeyPatch) -> None:
    """A helper slowed down (its core busy with other work) on the last subtrees: once nothing
    is left to hand out, the walk does those subtrees itself and stops the helper, however long
    the helper would take (here: forever, with an hour's timeout)."""
    pytest.importorskip("rignore")
    root, expected = tree
    monkeypatch.setattr(scan, "HELPER_TIMEOUT_SECONDS", 3600.0)
    straggler = ("import os, sys, time; task = os.read(0, 1024); "  # takes one subtree, says so, never ends it
                 "sys.stdout.buffer.write(b'\\x03' + task.split(b'\\0')[0] + b'\\0'); sys.stdout.flush(); time.sleep(600)")
    monkeypatch.setattr(scan, "helper_command", lambda names: ([sys.executable, "-c", straggler], None))
    got: list = []
    walk = threading.Thread(target=lambda: got.append(find_memory_files(root, NAMES, engine="rignore")), daemon=True)
    walk.start()
    walk.join(60)  # a bound against a hang (the helpers' hour), not a measure of speed
    assert not walk.is_alive(), "the walk waited for a helper that never ends"
    assert got == [sorted(expected)]
    assert len(helpers) == 2 and all(proc.returncode is not None for proc in helpers)  # stopped, not left behind


@pytest.mark.parametrize("busy_for", [0.0, 60.0])
def test_with_the_other_cores_busy_helpers_wait_for_a_long_walk(tree: tuple[Path, set[Path]], always_parallel: None,
                                                               helpers: list, monkeypatch: pytest.MonkeyPatch,
                                                               busy_for: float) -> None:
    """Other work on every other core (`busy_cpus`): no helper starts before the walk here has
    taken BUSY_SERIAL_SECONDS (a small tree is walked alone), then they do; the same files either way."""
    pytest.importorskip("rignore")
    root, expected = tree
    monkeypatch.setattr(scan, "busy_cpus", lambda: 2)
    monkeypatch.setattr(scan, "BUSY_SERIAL_SECONDS", busy_for)
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)
    assert len(helpers) == (2 if busy_for == 0.0 else 0)


@pytest.mark.parametrize("loadavg,busy", [
    ("0.52 0.58 0.59 1/80 4321\n", 0),  # the reader alone
    ("1.02 0.70 0.61 3/81 4322\n", 2),  # two others running or waiting for a CPU
    ("garbage\n", 0),
    (None, 0),  # no /proc (macOS, Windows): nothing known to be busy
])
def test_busy_cpus_reads_the_runnable_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            loadavg: str | None, busy: int) -> None:
    monkeypatch.setattr(cpus, "usable_cpus", lambda: os.cpu_count() or 1)
    path = tmp_path / "loadavg"
    if loadavg is not None:
        path.write_text(loadavg)
    assert cpus.busy_cpus(str(path), gap=0) == busy


def test_busy_cpus_is_not_read_for_a_process_held_to_some_cpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The count is the machine's: with a cpuset or `taskset`, it says nothing of this process's CPUs."""
    monkeypatch.setattr(cpus, "usable_cpus", lambda: 1)
    monkeypatch.setattr(cpus.os, "cpu_count", lambda: 8)
    (tmp_path / "loadavg").write_text("7.0 7.0 7.0 9/300 1\n")
    assert cpus.busy_cpus(str(tmp_path / "loadavg"), gap=0) == 0


@pytest.mark.parametrize("parallel", [False, True])
def test_the_users_global_git_excludes_are_not_read(tree: tuple[Path, set[Path]], always_parallel: None,
                                                    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                    parallel: bool) -> None:
    """Like `.ignore` files (in the tree), git's global excludes are not what agents read."""
    pytest.importorskip("rignore")
    root, expected = tree
    write(tmp_path / "config" / "git" / "ignore", "mod1/\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert any(p.parent.name == "mod1" for p in expected)
    assert find_memory_files(root, NAMES, engine="rignore", parallel=parallel) == sorted(expected)


def test_a_helper_that_writes_nonsense_leaves_its_subtrees_to_the_caller(
        tree: tuple[Path, set[Path]], always_parallel: None, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rignore")
    root, expected = tree
    nonsense = ("import os, sys; os.read(0, 1024); "
                "sys.stdout.buffer.write(b'\\x03x\\0/GEMINI.md\\0\\0\\x0399999\\0/GEMINI.md\\0\\0'); sys.stdout.flush()")
    monkeypatch.setattr(scan, "helper_command", lambda names: ([sys.executable, "-c", nonsense], None))
    assert find_memory_files(root, NAMES, engine="rignore") == sorted(expected)
