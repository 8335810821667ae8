"""memory_lens.lsp.store: the language server's cached, LSP-free view of memory on disk."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

import pytest

from memory_lens.core.checks import check_file
from memory_lens.core.file_identity import file_identity
from memory_lens.core.files import FileStatus
from memory_lens.core.merge import load_memory
from memory_lens.core.settings import Settings
from memory_lens.lsp.store import Hit, MemoryStore


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """home/.gemini/GEMINI.md, proj (a git project) with GEMINI.md, pkg/GEMINI.md, sibling/GEMINI.md."""
    root = Path(os.path.realpath(tmp_path))
    (root / "home" / ".gemini").mkdir(parents=True)
    (root / "home" / ".gemini" / "GEMINI.md").write_text("- Use pnpm\n- Global rule\n", encoding="utf-8")
    (root / "proj" / ".git").mkdir(parents=True)
    (root / "proj" / "GEMINI.md").write_text("# P\n- Tabs\n- use PNPM.\n- tabs!\n", encoding="utf-8")
    (root / "proj" / "pkg").mkdir()
    (root / "proj" / "pkg" / "GEMINI.md").write_text("- Tabs\n- Own\n", encoding="utf-8")
    (root / "proj" / "sibling").mkdir()
    (root / "proj" / "sibling" / "GEMINI.md").write_text("- Sibling\n", encoding="utf-8")
    return root


@pytest.fixture
def store(tree: Path) -> MemoryStore:
    return MemoryStore(Settings(global_dir=tree / "home" / ".gemini"))


def rewrite(path: Path, text: str) -> None:
    """Write TEXT so that the file's identity surely changes (a different size)."""
    before = file_identity(path)
    path.write_text(text, encoding="utf-8")
    assert file_identity(path) != before


def test_read_is_cached_while_the_file_is_unchanged(store: MemoryStore, tree: Path) -> None:
    path = tree / "proj" / "GEMINI.md"
    first = store.read(path)
    assert first.status is FileStatus.OK and first.text.startswith("# P")
    assert store.read(path) is first
    rewrite(path, "- Changed by an agent\n")
    second = store.read(path)
    assert second is not first and second.text == "- Changed by an agent\n"
    path.unlink()
    assert store.read(path).status is FileStatus.MISSING


def test_read_reports_unusable_files(store: MemoryStore, tree: Path) -> None:
    bad = tree / "proj" / "bad.md"
    bad.write_bytes(b"- caf\xe9\n")
    assert store.read(bad).status is FileStatus.UNUSABLE and "UTF-8" in store.read(bad).reason
    assert store.read(tree / "proj").status is FileStatus.UNUSABLE  # a directory
    assert store.read(tree / "nowhere.md").status is FileStatus.MISSING


def test_invalidate_forgets_reads(store: MemoryStore, tree: Path) -> None:
    a, b = tree / "proj" / "GEMINI.md", tree / "proj" / "pkg" / "GEMINI.md"
    first_a, first_b = store.read(a), store.read(b)
    store.invalidate([a])
    assert store.read(a) is not first_a and store.read(a) == first_a
    assert store.read(b) is first_b
    store.invalidate()
    assert store.read(b) is not first_b


def test_entries_are_cached_per_text(store: MemoryStore, tree: Path) -> None:
    path = tree / "proj" / "GEMINI.md"
    text = path.read_text(encoding="utf-8")
    parsed = store.entries(path, text)
    assert [(e.text, e.line) for e in parsed.entries] == [("Tabs", 1), ("use PNPM.", 2), ("tabs!", 3)]
    assert store.entries(path, text) is parsed
    assert store.entries(path, text + "- more\n") is not parsed


def test_memory_for_is_the_core_merge(store: MemoryStore, tree: Path) -> None:
    directory = tree / "proj" / "pkg"
    memory = store.memory_for(directory)
    expected = load_memory(directory, store.settings)
    assert memory.text == expected.text
    assert memory.project_root == expected.project_root == tree / "proj"
    assert [(s.path, s.scope, s.readable) for s in memory.sources] == [
        (s.path, s.scope, s.readable) for s in expected.sources]
    rewrite(tree / "proj" / "GEMINI.md", "- Fresh\n")
    assert "- Fresh" in store.memory_for(directory).text  # always what is on disk now


def test_check_from_disk_equals_the_core_check(store: MemoryStore, tree: Path) -> None:
    for path in (tree / "proj" / "GEMINI.md", tree / "proj" / "pkg" / "GEMINI.md", tree / "home" / ".gemini" / "GEMINI.md"):
        findings = [(f.line, f.code, f.message) for f in store.check(path)]
        assert findings == [(f.line, f.code, f.message) for f in check_file(path, store.settings)]
    codes = [(f.line, f.code) for f in store.check(tree / "proj" / "GEMINI.md")]
    assert codes == [(3, "redundant"), (4, "duplicate")]


def test_check_of_a_buffer_missing_and_unreadable_files(store: MemoryStore, tree: Path) -> None:
    path = tree / "proj" / "pkg" / "GEMINI.md"
    assert [f.code for f in store.check(path)] == ["redundant"]  # "Tabs" is in proj/GEMINI.md
    assert [(f.line, f.code) for f in store.check(path, "- Own\n- own\n")] == [(2, "duplicate")]
    assert store.check(tree / "proj" / "new" / "GEMINI.md") == []
    bad = tree / "proj" / "bad" / "GEMINI.md"
    bad.parent.mkdir()
    bad.write_bytes(b"\x00binary")
    (finding,) = store.check(bad)  # loaded as the agent loads it, with a warning at the NUL
    assert (finding.code, finding.line, finding.column) == ("encoding", 1, 1)
    bad.unlink()
    bad.symlink_to("gone.md")
    (finding,) = store.check(bad)
    assert (finding.code, finding.line) == ("unreadable", 1)


def test_check_remembers_the_identity_it_checked(store: MemoryStore, tree: Path) -> None:
    path = tree / "proj" / "pkg" / "GEMINI.md"
    assert store.checked_identity(path) == (False, None)
    store.check(path, "- a buffer is not the disk\n")
    assert store.checked_identity(path) == (False, None)
    store.check(path)
    assert store.checked_identity(path) == (True, file_identity(path))
    rewrite(path, "- Changed since\n")
    assert store.checked_identity(path)[1] != file_identity(path)
    store.add_known(path)
    store.drop_known(path)
    assert store.checked_identity(path) == (False, None)


def test_scan_and_known_files(store: MemoryStore, tree: Path) -> None:
    (tree / "proj" / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    (tree / "proj" / "ignored").mkdir()
    (tree / "proj" / "ignored" / "GEMINI.md").write_text("- x\n", encoding="utf-8")
    found = store.scan([tree / "proj"])
    expected = {tree / "home" / ".gemini" / "GEMINI.md", tree / "proj" / "GEMINI.md",
                tree / "proj" / "pkg" / "GEMINI.md", tree / "proj" / "sibling" / "GEMINI.md"}
    assert found == expected == store.known()
    found.clear()
    assert store.known() == expected  # a copy was returned

    extra = tree / "proj" / "ignored" / "GEMINI.md"
    assert store.add_known(extra) is True and store.add_known(extra) is False
    assert store.drop_known(extra) is True and store.drop_known(extra) is False
    assert store.known() == expected


def test_global_files_exist_or_are_links(tree: Path) -> None:
    gdir = tree / "g"
    gdir.mkdir()
    store = MemoryStore(Settings(filenames=("AGENTS.md", "GEMINI.md"), global_dir=gdir))
    assert store.global_files() == set()
    os.symlink("nowhere.md", gdir / "GEMINI.md")  # dangling, but there: it must be reported
    (gdir / "AGENTS.md").write_text("- a\n", encoding="utf-8")
    assert store.global_files() == {gdir / "AGENTS.md", gdir / "GEMINI.md"}


def test_affected_by(store: MemoryStore, tree: Path) -> None:
    pool = store.scan([tree / "proj"])
    root_file, pkg, sibling = tree / "proj" / "GEMINI.md", tree / "proj" / "pkg" / "GEMINI.md", tree / "proj" / "sibling" / "GEMINI.md"
    global_file = tree / "home" / ".gemini" / "GEMINI.md"
    assert store.affected_by(global_file, pool) == pool
    assert store.affected_by(root_file, pool) == {root_file, pkg, sibling}
    assert store.affected_by(pkg, pool) == {pkg}
    new = tree / "proj" / "pkg" / "deeper" / "GEMINI.md"
    assert store.affected_by(new, pool) == set()  # unknown and missing: nothing to recheck
    pkg.unlink()
    assert store.affected_by(pkg, pool) == {pkg}  # its diagnostics must be withdrawn


def test_find_hits(store: MemoryStore, tree: Path) -> None:
    bad = tree / "proj" / "bad.md"
    bad.write_bytes(b"\xff")
    paths = [tree / "proj" / "GEMINI.md", tree / "proj" / "pkg" / "GEMINI.md", bad, tree / "missing.md"]
    assert store.find_hits("tabs", paths) == [
        Hit(tree / "proj" / "GEMINI.md", 1), Hit(tree / "proj" / "GEMINI.md", 3), Hit(tree / "proj" / "pkg" / "GEMINI.md", 0)]
    assert store.find_hits("not anywhere", paths) == []


def test_reads_from_many_threads(store: MemoryStore, tree: Path) -> None:
    paths = sorted(tree.rglob("GEMINI.md"))
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                for p in paths:
                    store.read(p)
                    store.check(p)
                store.invalidate()
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_cached_memory_follows_the_files_it_imports(store: MemoryStore, tree: Path) -> None:
    """A file imported with @path is not a memory file, yet the merged memory depends on it: a
    change to it, or a missing import appearing, is seen on the next request."""
    sibling = tree / "proj" / "sibling"
    rewrite(sibling / "GEMINI.md", "@./rules.md\n@./later.md\n")
    (sibling / "rules.md").write_text("- Rule one\n", encoding="utf-8")
    first = store.memory_for(sibling)
    assert "- Rule one" in first.text and "Import failed: ./later.md" in first.text
    assert store.memory_for(sibling) is first  # nothing changed: the cached answer
    rewrite(sibling / "rules.md", "- Rule two, longer\n")
    second = store.memory_for(sibling)
    assert "- Rule two, longer" in second.text and "- Rule one" not in second.text
    (sibling / "later.md").write_text("- Later\n", encoding="utf-8")
    assert "- Later" in store.memory_for(sibling).text


# One view of the disk per pass ------------------------------------------------------------------


def test_a_pass_reads_each_file_as_it_first_found_it(store: MemoryStore, tree: Path) -> None:
    """Within a pass a file changed after it was read is still read as it was (one view of the
    disk; the watcher starts the next pass); outside it, and in a new pass, the change shows."""
    path = tree / "proj" / "GEMINI.md"
    with store.one_pass():
        before = store.read(path)
        rewrite(path, "- Changed during the pass\n")
        assert store.read(path) is before
    assert store.read(path).text == "- Changed during the pass\n"
    with store.one_pass():
        assert store.read(path).text == "- Changed during the pass\n"


def test_a_pass_is_its_own_threads_view(store: MemoryStore, tree: Path) -> None:
    path = tree / "proj" / "GEMINI.md"
    seen: list[str] = []
    with store.one_pass():
        store.read(path)
        rewrite(path, "- Changed meanwhile\n")
        reader = threading.Thread(target=lambda: seen.append(store.read(path).text))
        reader.start()
        reader.join(10)
    assert seen == ["- Changed meanwhile\n"]


def test_a_pass_finds_the_nearest_project_root_of_nested_projects(tree: Path) -> None:
    """Project roots remembered in a pass: a nested repository's directories keep their own
    root, whatever order the directories come in, as without a pass."""
    inner = tree / "proj" / "pkg" / "vendor" / "lib"
    (inner / ".git").mkdir(parents=True)
    (inner / "deep").mkdir()
    (tree / "proj" / "pkg" / "vendor" / "other").mkdir()
    (tree / "outside").mkdir()
    dirs = [inner / "deep", tree / "proj" / "pkg" / "vendor" / "other", inner, tree / "proj" / "pkg",
            tree / "proj", tree / "outside", tree / "proj" / "pkg" / "vendor"]
    settings = Settings(global_dir=tree / "home" / ".gemini")
    alone = [MemoryStore(settings).chain(d).project_root for d in dirs]
    assert alone == [inner, tree / "proj", inner, tree / "proj", tree / "proj", None, tree / "proj"]
    for order in (dirs, dirs[::-1]):
        passing = MemoryStore(settings)
        with passing.one_pass():
            roots = {d: passing.chain(d).project_root for d in order}
        assert [roots[d] for d in dirs] == alone


def test_a_check_in_a_pass_equals_the_core_check(store: MemoryStore, tree: Path) -> None:
    files = [tree / "proj" / "GEMINI.md", tree / "proj" / "pkg" / "GEMINI.md", tree / "proj" / "sibling" / "GEMINI.md"]
    with store.one_pass():
        findings = [store.check(p) for p in files]
    assert findings == [check_file(p, store.settings) for p in files]
    assert any(findings)


def test_a_pass_checks_each_file_as_it_is_now(store: MemoryStore, tree: Path) -> None:
    """A file read earlier in a pass (as the general file of another) and changed since is
    checked as it is now: the identity `checked_identity` keeps is that of the text checked."""
    general = tree / "proj" / "GEMINI.md"
    with store.one_pass():
        store.check(tree / "proj" / "pkg" / "GEMINI.md")
        rewrite(general, "- Same\n- same\n")
        findings = store.check(general)
    assert [f.code for f in findings] == ["duplicate"]
    assert store.checked_identity(general) == (True, file_identity(general))


def test_an_open_files_not_loaded_is_worked_out_again_for_each_watcher_generation(tmp_path: Path) -> None:
    """`not-loaded` depends on the disk alone: an edit (the same generation) reuses it, a change
    the watcher reports (the next generation) works it out again."""
    from memory_lens.lsp.diagnostics import not_loaded_since

    (tmp_path / ".git").mkdir()
    agents_md = tmp_path / "AGENTS.md"
    agents_md.write_text("- one\n")
    store = MemoryStore(Settings(global_dir=tmp_path / "home", agents=("codex",)))
    assert not_loaded_since(store, agents_md, 1) == []
    (tmp_path / "AGENTS.override.md").write_text("- the override\n")  # Codex now reads this instead
    assert not_loaded_since(store, agents_md, 1) == []
    [found] = not_loaded_since(store, agents_md, 2)
    assert found.code == "not-loaded" and "AGENTS.override.md" in found.message
    assert not_loaded_since(store, agents_md, None) == [found]


def test_an_open_files_not_loaded_follows_the_editors_chat_settings_within_a_generation(tmp_path: Path) -> None:
    """The editor's chat settings and folders change without a disk change (no new generation)
    and without a new store: the next edit's `not-loaded` follows them."""
    from memory_lens.lsp.diagnostics import not_loaded_since
    from memory_lens.lsp.store import Editor

    (tmp_path / ".git").mkdir()
    copilot = tmp_path / ".github" / "copilot-instructions.md"
    copilot.parent.mkdir()
    copilot.write_text("- one\n")
    editor = Editor(lambda: [tmp_path], {})
    store = MemoryStore(Settings(global_dir=tmp_path / "home", agents=("copilot-vscode",)), editor=editor)
    assert not_loaded_since(store, copilot, 1) == []
    editor.chat_settings = {"github.copilot.chat.codeGeneration.useInstructionFiles": False}
    [found] = not_loaded_since(store, copilot, 1)
    assert found.code == "not-loaded"


def test_kept_answer_holds_until_something_its_memory_depends_on_changes(store: MemoryStore, tree: Path) -> None:
    """`MemoryStore.answer` gives what `keep` was given for a directory's memory while every path
    that memory depends on is as it was: each change below makes it None (and the memory new)."""
    pkg = tree / "proj" / "pkg" / "deep"
    pkg.mkdir()

    def kept_then(change: Callable[[], object]) -> None:
        memory = store.memory_for(pkg)
        store.keep(pkg, memory, "kept")
        assert store.answer(pkg) == "kept" and store.memory_for(pkg) is memory
        change()
        assert store.answer(pkg) is None and store.memory_for(pkg) != memory

    kept_then(lambda: (tree / "proj" / "pkg" / "GEMINI.md").write_text("- Changed\n"))  # a candidate edited
    kept_then(lambda: (pkg / "GEMINI.md").write_text("- New\n"))  # a candidate created
    kept_then(lambda: (tree / "proj" / "pkg" / ".git").mkdir())  # a marker between: a new project root
    kept_then(lambda: (tree / "proj" / "pkg" / "GEMINI.md").write_text("@style.md\n"))
    kept_then(lambda: (tree / "proj" / "pkg" / "style.md").write_text("- Imported\n"))  # an import that was missing
    kept_then(lambda: (tree / "proj" / "pkg" / "style.md").write_text("- Imported, edited\n"))
    memory = store.memory_for(pkg)
    store.keep(pkg, memory, "kept")
    (tree / "proj" / "GEMINI.md").write_text("- Above the root now\n")
    (tree / "proj" / "sibling" / "GEMINI.md").write_text("- Elsewhere\n")
    assert store.answer(pkg) == "kept" and store.memory_for(pkg) is memory
