"""The kept answers of memory/effective (lsp/effective_cache.py): an answer is reused while
nothing it depends on changed, and every change on disk shows in the very next answer.

Each case lets the tree settle first (its files' change times older than `SETTLE_NS`), checks
that the answer was kept, changes one thing, and compares the next answer with the answer of a
server that never saw the tree before."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from memory_lens.core.file_identity import file_identity
from memory_lens.core.settings import Settings
from memory_lens.lsp import effective_cache
from memory_lens.lsp.convert import path_to_uri
from memory_lens.lsp.effective import answers, effective_result
from memory_lens.lsp.effective_cache import COARSE_SETTLE_NS, SETTLE_NS, lexically_inside, settled
from memory_lens.lsp.app import build_server


@dataclass
class Tree:
    root: Path
    settings: Settings

    @property
    def proj(self) -> Path:
        return self.root / "work" / "proj"

    @property
    def global_dir(self) -> Path:
        return self.root / "home" / ".gemini"

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    """home/.gemini/GEMINI.md; work/proj (a git project): GEMINI.md importing docs/style.md and
    the missing docs/notes.md, pkg/GEMINI.md a link to shared/pkg.md, pkg/sub/deep/mod.py."""
    t = Tree(Path(os.path.realpath(tmp_path)), Settings())
    t.settings = Settings(global_dir=t.global_dir)
    t.write("home/.gemini/GEMINI.md", "# Global\n- Global rule\n")
    (t.proj / ".git").mkdir(parents=True)
    t.write("work/proj/GEMINI.md", "# Project\n- Project rule\n@./docs/style.md\n@./docs/notes.md\n")
    t.write("work/proj/docs/style.md", "Use tabs.\n")
    t.write("work/proj/shared/pkg.md", "- Package rule\n")
    (t.proj / "pkg").mkdir()
    (t.proj / "pkg" / "GEMINI.md").symlink_to("../shared/pkg.md")
    t.write("work/proj/pkg/sub/deep/mod.py", "x = 1\n")
    (t.root / "gemini-home").mkdir()
    t.write("work/proj/spare.md", "- Renamed into place\n")
    return t


@pytest.fixture(autouse=True)
def gemini_home(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gemini's user files in the tree, apart from the global memory: gemini-home/.gemini/."""
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tree.root / "gemini-home"))


def settle() -> None:
    """Wait until what was just written counts as settled (a kept answer is then possible)."""
    time.sleep(SETTLE_NS / 1e9 + 0.03)


def fresh(tree: Tree, uri: str) -> dict:
    """The answer of a server that never answered before."""
    return effective_result(build_server(tree.settings), uri)


def write_same_size(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(old) == len(new) and old in text
    before = file_identity(path)
    with open(path, "r+", encoding="utf-8") as fh:  # in place, as an editor saving over it
        fh.write(text.replace(old, new))
    assert file_identity(path)[2] == before[2]  # the size is the same


def make_root_link(t: Tree) -> None:
    real = t.root / "elsewhere" / "gitdir"
    real.mkdir(parents=True)
    shutil.rmtree(t.proj / ".git")
    (t.proj / ".git").symlink_to(real)


def move_and_link(directory: Path) -> None:
    """DIRECTORY renamed, and a link to it put where it was: the same files, another real path."""
    moved = directory.with_name(directory.name + "-real")
    directory.rename(moved)
    directory.symlink_to(moved)


def link_outside(t: Tree) -> None:
    """work/proj/linked: a link to outside/one; outside/other has a memory file. outside/ is a
    git project: without a root, every directory up to /tmp would count (and /tmp never rests)."""
    (t.root / "outside" / ".git").mkdir(parents=True)
    t.write("outside/one/GEMINI.md", "- One\n")
    t.write("outside/other/GEMINI.md", "- Other\n")
    (t.proj / "linked").symlink_to(t.root / "outside" / "one")


AGENTS_FIRST = '{"context": {"fileName": "AGENTS.md"}}'


def trust(t: Tree) -> None:
    """Gemini trusts every folder of the tree (so it reads their .gemini/settings.json)."""
    t.write("gemini-home/.gemini/trustedFolders.json", json.dumps({str(t.root): "TRUST_FOLDER"}))


@dataclass
class Change:
    name: str
    document: str  # relative to the project
    change: Callable[[Tree], object]
    prepare: Callable[[Tree], object] = lambda t: None


CHANGES = [
    Change("memory file rewritten in place, same size", "pkg/sub/deep/mod.py",
           lambda t: write_same_size(t.proj / "GEMINI.md", "Project rule", "Changed rule")),
    Change("memory file rewritten", "pkg/sub/deep/mod.py", lambda t: t.write("work/proj/GEMINI.md", "- Short\n")),
    Change("memory file replaced by a rename", "pkg/sub/deep/mod.py",
           lambda t: os.replace(t.proj / "spare.md", t.proj / "GEMINI.md")),
    Change("memory file deleted", "pkg/sub/deep/mod.py", lambda t: (t.proj / "GEMINI.md").unlink()),
    Change("memory file created in the document's directory", "pkg/sub/deep/mod.py",
           lambda t: t.write("work/proj/pkg/sub/deep/GEMINI.md", "- Deep rule\n")),
    Change("memory file created in a directory between", "pkg/sub/deep/mod.py",
           lambda t: t.write("work/proj/pkg/sub/GEMINI.md", "- Sub rule\n")),
    Change(".git created between the document and the root", "pkg/sub/deep/mod.py",
           lambda t: (t.proj / "pkg" / "sub" / ".git").mkdir()),
    Change(".git removed from the root", "pkg/sub/deep/mod.py", lambda t: shutil.rmtree(t.proj / ".git")),
    Change("a linked .git whose target goes away", "pkg/sub/deep/mod.py",
           lambda t: (t.root / "elsewhere" / "gitdir").rmdir(), prepare=make_root_link),
    Change("linked memory file's target rewritten", "pkg/sub/deep/mod.py",
           lambda t: t.write("work/proj/shared/pkg.md", "- Package rule, changed\n")),
    Change("memory file link pointed elsewhere", "pkg/sub/deep/mod.py",
           lambda t: ((t.proj / "pkg" / "GEMINI.md").unlink(),
                      (t.proj / "pkg" / "GEMINI.md").symlink_to("../docs/style.md"))),
    Change("global file rewritten", "pkg/sub/deep/mod.py",
           lambda t: t.write("home/.gemini/GEMINI.md", "- Global, changed\n")),
    Change("global file deleted", "pkg/sub/deep/mod.py", lambda t: (t.global_dir / "GEMINI.md").unlink()),
    Change("global directory created", "pkg/sub/deep/mod.py",
           lambda t: t.write("home/.gemini/GEMINI.md", "- Global, new\n"),
           prepare=lambda t: shutil.rmtree(t.global_dir)),
    Change("imported file rewritten", "pkg/sub/deep/mod.py",
           lambda t: t.write("work/proj/docs/style.md", "Use spaces.\n")),
    Change("missing import created", "pkg/sub/deep/mod.py",
           lambda t: t.write("work/proj/docs/notes.md", "Notes.\n")),
    Change("missing directory of the document created", "pkg/sub/deep/new/more/file.py",
           lambda t: t.write("work/proj/pkg/sub/deep/new/GEMINI.md", "- New rule\n")),
    Change("document's path made a directory", "pkg/sub/deep/thing",
           lambda t: t.write("work/proj/pkg/sub/deep/thing/GEMINI.md", "- Thing rule\n")),
    Change("directory on the way moved and linked", "pkg/sub/deep/mod.py",
           lambda t: move_and_link(t.proj / "pkg" / "sub")),
    Change("directory above the root moved and linked", "pkg/sub/deep/mod.py",
           lambda t: move_and_link(t.root / "work")),
    Change("project's Gemini settings.json created", "pkg/sub/deep/mod.py",
           lambda t: t.write("work/proj/pkg/sub/deep/.gemini/settings.json", AGENTS_FIRST),
           prepare=lambda t: (t.write("work/proj/AGENTS.md", "- Agents rule\n"), trust(t))),
    Change("the folder trusted in Gemini's trustedFolders.json", "pkg/sub/deep/mod.py", trust,
           prepare=lambda t: (t.write("work/proj/AGENTS.md", "- Agents rule\n"),
                              t.write("work/proj/pkg/sub/deep/.gemini/settings.json", AGENTS_FIRST))),
    Change("user's Gemini settings.json edited", "pkg/sub/deep/mod.py",
           lambda t: t.write("gemini-home/.gemini/settings.json", '{"context": {"importFormat": "flat"}}'),
           prepare=lambda t: t.write("gemini-home/.gemini/settings.json", '{"context": {"importFormat": "tree"}}')),
    Change("user's Gemini settings.json created", "pkg/sub/deep/mod.py",
           lambda t: t.write("gemini-home/.gemini/settings.json", '{"context": {"importFormat": "flat"}}')),
    Change("link to a directory elsewhere pointed elsewhere", "linked/file.py",
           lambda t: ((t.proj / "linked").unlink(), (t.proj / "linked").symlink_to(t.root / "outside" / "other")),
           prepare=link_outside),
]


@pytest.mark.parametrize("case", CHANGES, ids=[c.name for c in CHANGES])
def test_every_change_shows_in_the_next_answer(tree: Tree, case: Change) -> None:
    case.prepare(tree)
    server = build_server(tree.settings)
    uri = path_to_uri(tree.proj / case.document)
    settle()
    before = effective_result(server, uri)
    assert answers(server).lookup_dir(before["targetDir"]) is not None  # kept: unchanged, answered again as is
    assert before == fresh(tree, uri)

    case.change(tree)
    after = effective_result(server, uri)
    assert after == fresh(tree, uri)
    assert after != before


def test_an_unchanged_answer_is_reused(tree: Tree) -> None:
    server = build_server(tree.settings)
    uris = [path_to_uri(tree.proj / "pkg" / "sub" / "deep" / name) for name in ("mod.py", "other.py")]
    settle()
    first = effective_result(server, uris[0])
    assert effective_result(server, uris[0]) is first
    assert effective_result(server, uris[1]) is first  # the same directory: the same entry
    assert first == fresh(tree, uris[0])


def test_answers_made_from_fresh_files_are_not_kept(tree: Tree) -> None:
    """A file changed less than SETTLE_NS before the answer could change again within the same
    clock tick without its times changing: such an answer is made anew each time."""
    server = build_server(tree.settings)
    uri = path_to_uri(tree.proj / "pkg" / "sub" / "deep" / "mod.py")
    tree.write("work/proj/pkg/sub/deep/GEMINI.md", "- Just written\n")
    assert effective_result(server, uri)["text"].endswith("- Just written")
    assert answers(server).lookup(uri) is None
    settle()
    effective_result(server, uri)
    assert answers(server).lookup(uri) is not None


def test_refresh_command_drops_kept_answers(tree: Tree) -> None:
    """memoryLens.server.refresh re-reads everything: no answer kept before it is reused after it."""
    import asyncio

    server = build_server(tree.settings)
    uri = path_to_uri(tree.proj / "pkg" / "sub" / "deep" / "mod.py")
    settle()
    effective_result(server, uri)
    assert answers(server).lookup(uri) is not None
    refresh = server.protocol.fm.commands["memoryLens.server.refresh"]

    async def run() -> dict:
        server.loop = asyncio.get_running_loop()
        return await refresh(server)

    assert asyncio.run(run())["files"] >= 0
    assert answers(server).lookup(uri) is None


def test_times_in_whole_milliseconds_settle_later() -> None:
    now = 10_000_000_000_000
    fine = (1, 1, 1, 0, now - SETTLE_NS - 7)
    coarse = (1, 1, 1, 0, now - SETTLE_NS - 1_000_000)  # a multiple of 1 ms: a coarse file system
    assert settled(fine, now) and not settled(coarse, now)
    assert settled((1, 1, 1, 0, now - COARSE_SETTLE_NS - 1_000_000), now)
    assert settled(None, now)
    assert not settled((1, 1, 1, 0, now + 5), now)  # a change time ahead of the clock
    assert not settled((1, 1, 1, now - 5, now - SETTLE_NS - 7), now)  # modified since (Windows: ctime = creation)


def test_new_settings_start_afresh(tree: Tree) -> None:
    tree.write("work/proj/AGENTS.md", "- Agents rule\n")
    server = build_server(tree.settings)
    uri = path_to_uri(tree.proj / "pkg" / "sub" / "deep" / "mod.py")
    settle()
    before = effective_result(server, uri)
    assert answers(server).lookup(uri) is not None
    assert server.update_config({"memoryLens": {"filenames": ["AGENTS.md", "GEMINI.md"]}})
    after = effective_result(server, uri)
    assert str(tree.proj / "AGENTS.md") in [s["path"] for s in after["sources"]]
    assert str(tree.proj / "AGENTS.md") not in [s["path"] for s in before["sources"]]


def test_annotated_and_other_agents_match_a_fresh_server(tree: Tree) -> None:
    server = build_server(tree.settings)
    uri = path_to_uri(tree.proj / "pkg" / "sub" / "deep" / "mod.py")
    settle()
    effective_result(server, uri)
    tree.write("work/proj/GEMINI.md", "- Rewritten\n")
    for extra in ({"annotated": True}, {"agent": "claude"}, {"agent": "codex"}):
        assert effective_result(server, uri, **extra) == effective_result(build_server(tree.settings), uri, **extra)


def test_kept_entries_are_bounded(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(effective_cache, "ENTRIES_KEPT", 2)
    monkeypatch.setattr(effective_cache, "RESULTS_KEPT", 1)
    dirs = [tree.proj / "pkg" / "sub" / "deep", tree.proj / "pkg" / "sub", tree.proj / "pkg"]
    server = build_server(tree.settings)
    settle()
    for d in dirs:
        assert effective_result(server, path_to_uri(d / "f.py")) == fresh(tree, path_to_uri(d / "f.py"))
    cache = answers(server)
    assert cache.lookup(path_to_uri(dirs[0] / "f.py")) is None  # the oldest went
    assert cache.lookup(path_to_uri(dirs[2] / "f.py")) is not None
    assert effective_result(server, path_to_uri(dirs[1] / "f.py")) == fresh(tree, path_to_uri(dirs[1] / "f.py"))


def test_lexically_inside(tmp_path: Path) -> None:
    assert lexically_inside(Path("/a/b/c.py"), "/a/b")
    assert lexically_inside(Path("/a/b"), "/a/b")
    assert lexically_inside(Path("/a/b/c.py"), "/")
    assert not lexically_inside(Path("/a/bc/d.py"), "/a/b")
    assert not lexically_inside(Path("/a/x/../b/c.py"), "/a/b")
    assert not lexically_inside(Path("/real/b/c.py"), "/a/b")
