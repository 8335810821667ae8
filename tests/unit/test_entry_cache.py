"""memory_lens.core.entry_cache: parsed entries kept on disk between server runs, never in the way
and never the source of a wrong finding."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from memory_lens.core import entry_cache
from memory_lens.core.checks import index_entries
from memory_lens.core.entry_cache import EntryCache, digest, encode
from memory_lens.core.settings import Settings
from memory_lens.lsp import diagnostics, store as store_module
from memory_lens.lsp.store import MemoryStore

REPO = Path(__file__).resolve().parents[2]

TEXT = ("# Rules\n- Use pnpm\n- use PNPM.\n- Tabs  for\n  indentation\n\n  still the entry\n-\n- Café ﬁle\n"
        "```\n- not an entry\n```\n* Second marker\n+ - nested marker\n- Use pnpm\n- \ud800 lone surrogate\n")


def same_index(a, b) -> bool:
    return (a.path, a.keys, list(a.lines), list(a.end_lines), a.first_line, a.text) == \
        (b.path, b.keys, list(b.lines), list(b.end_lines), b.first_line, b.text)


def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make parsing, the secret search and the near-copy search in the cache fail the test: what
    follows must come from the database."""
    def parse(*args: object):
        raise AssertionError("worked out although cached")
    for name in ("entry_keys", "find_secrets", "near_pairs"):
        monkeypatch.setattr(entry_cache, name, parse)


@pytest.mark.parametrize("text", [TEXT, "", "no entries at all\n", "- one\n", "- \n-\n", "- a\r\n- A.\r\n"])
def test_cached_entries_are_what_parsing_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    path = tmp_path / "GEMINI.md"
    cache = EntryCache(tmp_path / "cache" / "entries.sqlite3")
    assert cache.persistent
    first = cache.entries(path, text)
    assert same_index(first, index_entries(path, text))
    cache.close()
    reopened = EntryCache(tmp_path / "cache" / "entries.sqlite3")  # a restarted server
    no_parsing(monkeypatch)
    assert same_index(reopened.entries(path, text), index_entries(path, text))
    assert reopened.count() == 1


def test_a_changed_text_is_parsed_again_even_with_size_and_mtime_restored(tmp_path: Path) -> None:
    """What a key made of the file's identity would miss: same inode, same size, modification
    time set back. The cache is keyed by the text, so a restarted store sees the new entries."""
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    memory = root / "GEMINI.md"
    memory.write_text("- Alpha rule\n- Alpha rule\n", encoding="utf-8")
    settings = Settings(global_dir=tmp_path / "global")
    cache_path = tmp_path / "cache" / "entries.sqlite3"
    first_run = EntryCache(cache_path)
    before = MemoryStore(settings, first_run).check(memory)
    assert [f.code for f in before] == ["duplicate"]
    first_run.close()  # the server exits: its rows are written
    st = os.stat(memory)
    with open(memory, "r+", encoding="utf-8") as fh:  # in place: same inode
        fh.write("- Omega rule\n- Other rule\n")
    os.utime(memory, ns=(st.st_atime_ns, st.st_mtime_ns))
    after_st = os.stat(memory)
    assert (after_st.st_ino, after_st.st_size, after_st.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)
    assert MemoryStore(settings, EntryCache(cache_path)).check(memory) == []


def test_a_damaged_database_file_is_built_again(tmp_path: Path) -> None:
    path = tmp_path / "entries.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    cache = EntryCache(path)
    assert cache.persistent
    assert same_index(cache.entries(tmp_path / "G.md", TEXT), index_entries(tmp_path / "G.md", TEXT))
    cache.close()
    with sqlite3.connect(path) as con:
        assert con.execute("SELECT count(*) FROM entries").fetchone()[0] == 1


def test_a_damaged_row_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "entries.sqlite3"
    cache = EntryCache(path)
    cache.entries(tmp_path / "G.md", TEXT)
    cache.close()
    wrong = encode(["use yarn"], [0], [0])  # a well-formed payload, but not the one the checksum is of
    with sqlite3.connect(path) as con:
        con.execute("UPDATE entries SET payload = ?", (wrong,))
    reopened = EntryCache(path)
    assert same_index(reopened.entries(tmp_path / "G.md", TEXT), index_entries(tmp_path / "G.md", TEXT))
    with sqlite3.connect(path) as con:
        con.execute("UPDATE entries SET payload = ?, checksum = ?", (b"\x00garbage", entry_cache.checksum(b"\x00garbage")))
    again = EntryCache(path)
    assert same_index(again.entries(tmp_path / "G.md", TEXT), index_entries(tmp_path / "G.md", TEXT))


def test_a_database_of_another_layout_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "entries.sqlite3"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE entries (something TEXT)")
        con.execute("INSERT INTO entries VALUES ('from another version')")
        con.execute("PRAGMA user_version = 99")
    cache = EntryCache(path)
    assert cache.persistent
    assert same_index(cache.entries(tmp_path / "G.md", TEXT), index_entries(tmp_path / "G.md", TEXT))
    cache.close()
    assert EntryCache(path).count() == 1


def test_an_unusable_location_keeps_entries_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    cache = EntryCache(blocker / "entries.sqlite3")
    assert not cache.persistent
    assert same_index(cache.entries(tmp_path / "G.md", TEXT), index_entries(tmp_path / "G.md", TEXT))
    assert cache.count() == 0  # waiting for its batch, in memory
    cache.flush()
    assert cache.count() == 1


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes to read-only files")
def test_a_read_only_database_is_not_written(tmp_path: Path) -> None:
    path = tmp_path / "ro" / "entries.sqlite3"
    EntryCache(path).close()
    os.chmod(path, 0o444)
    os.chmod(path.parent, 0o555)
    try:
        cache = EntryCache(path)
        assert same_index(cache.entries(tmp_path / "G.md", TEXT), index_entries(tmp_path / "G.md", TEXT))
        cache.flush()
    finally:
        os.chmod(path.parent, 0o755)
        os.chmod(path, 0o644)


def test_a_locked_database_makes_misses_not_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "entries.sqlite3"
    monkeypatch.setattr(entry_cache, "BUSY_SECONDS", 0.05)
    cache = EntryCache(path)
    cache.entries(tmp_path / "G.md", "- stored before\n")
    cache.flush()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another program holding the write lock
    try:
        for i in range(entry_cache.FLUSH_AT + 3):  # a whole batch to write, which cannot be
            text = f"- rule {i}\n"
            assert same_index(cache.entries(tmp_path / "G.md", text), index_entries(tmp_path / "G.md", text))
        cache.flush()
        assert same_index(cache.entries(tmp_path / "G.md", "- stored before\n"),
                          index_entries(tmp_path / "G.md", "- stored before\n"))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert cache.persistent
    cache.entries(tmp_path / "G.md", "- after the lock\n")
    cache.flush()
    assert cache.get(digest("- after the lock\n")) is not None


def test_two_servers_share_one_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes (two editors' servers) writing and reading the same cache at once."""
    path = tmp_path / "entries.sqlite3"
    script = (
        "import sys\nfrom pathlib import Path\nfrom memory_lens.core.entry_cache import EntryCache\n"
        "from memory_lens.core.checks import index_entries\n"
        "cache = EntryCache(Path(sys.argv[1]))\nassert cache.persistent\n"
        "for round in range(3):\n"
        "    for i in range(150):\n"
        "        text = f'- rule {i % 100}\\n- shared {i}\\n- rule {i % 100}\\n'\n"
        "        got = cache.entries(Path('G.md'), text)\n"
        "        want = index_entries(Path('G.md'), text)\n"
        "        assert (got.keys, list(got.lines), list(got.end_lines)) == "
        "(want.keys, list(want.lines), list(want.end_lines))\n"
        "    cache.flush()\n"
        "cache.close()\nprint('ok')\n")
    env = dict(os.environ, PYTHONPATH=str(REPO / "server"))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, text=True) for _ in range(2)]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and out.strip() == "ok", err
    assert EntryCache(path).count() == 150


def test_threads_share_one_cache(tmp_path: Path) -> None:
    cache = EntryCache(tmp_path / "entries.sqlite3")
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for i in range(200):
                text = f"- item {(i + offset) % 120}\n- again\n- again\n"
                got = cache.entries(tmp_path / "G.md", text)
                assert same_index(got, index_entries(tmp_path / "G.md", text))
        except BaseException as err:  # reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(n * 37,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    cache.flush()
    assert cache.count() == 120


def test_the_cache_stays_within_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "entries.sqlite3"
    monkeypatch.setattr(entry_cache, "MAX_BYTES", 4000)
    monkeypatch.setattr(entry_cache, "EVICT_EVERY", 10)
    cache = EntryCache(path)
    for i in range(300):
        cache.entries(tmp_path / "G.md", "".join(f"- entry {i} number {j} with some words\n" for j in range(20)))
    cache.flush()
    with sqlite3.connect(path) as con:
        total, rows = con.execute("SELECT sum(size), count(*) FROM entries").fetchone()
    assert rows < 300 and total <= 4000 + 10 * 400  # evicted at most EVICT_EVERY rows ago
    last = "".join(f"- entry 299 number {j} with some words\n" for j in range(20))
    assert cache.get(digest(last)) is not None  # the most recent stay


def test_rows_unused_for_long_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "entries.sqlite3"
    cache = EntryCache(path)
    cache.entries(tmp_path / "G.md", "- old\n")
    cache.close()
    monkeypatch.setattr(entry_cache, "_today", lambda: int(__import__("time").time() // 86400) + 31)
    cache = EntryCache(path)
    cache.entries(tmp_path / "G.md", "- new\n")
    cache.flush()
    assert cache.get(digest("- old\n")) is None and cache.get(digest("- new\n")) is not None


def test_a_full_check_gives_the_same_diagnostics_with_and_without_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a generated tree (the benchmark's small one): no cache, an empty cache, a filled one
    after a restart, and tiny in-memory caches (every read and index dropped and found again)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from generate import ensure_tree
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    root, manifest = ensure_tree("small", root=tmp_path / "tree", quiet=True)
    settings = Settings(filenames=("GEMINI.md",), global_dir=tmp_path / "global")
    paths = sorted(root / p for p in manifest["expected"])

    def full(cache: EntryCache) -> dict:
        return diagnostics.compute(MemoryStore(settings, cache), paths, {}, "utf-16")

    reference = full(EntryCache(None))
    assert sum(len(d) for d in reference.values()) > 0
    # One file at a time, outside any pass (`MemoryStore.one_pass`): the same.
    alone = MemoryStore(settings, EntryCache(None))
    assert {p: diagnostics.diagnostics_for(alone, p, None, "utf-16") for p in paths} == reference
    disk = tmp_path / "cache" / "entries.sqlite3"
    cold = EntryCache(disk)
    assert full(cold) == reference
    cold.close()
    # Each text's entries and secrets, and the near copies of each file but the root one (no
    # file loads before it: nothing to compare with, nothing stored).
    assert EntryCache(disk).count() == 3 * len(paths) - 1
    no_parsing(monkeypatch)
    assert full(EntryCache(disk)) == reference  # a restart: every index from the database
    monkeypatch.setattr(store_module, "READ_CACHE_SIZE", 2)
    monkeypatch.setattr(store_module, "ENTRIES_CACHE_SIZE", 2)
    assert full(EntryCache(disk)) == reference


def test_contains_answers_from_the_stored_keys(tmp_path: Path) -> None:
    cache = EntryCache(tmp_path / "entries.sqlite3")
    cache.entries(tmp_path / "G.md", TEXT)
    key = digest(TEXT)
    keys = index_entries(tmp_path / "G.md", TEXT).keys
    for wanted in ("use pnpm", "pnpm", "café file", "tabs for indentation still", "", "second marker"):
        assert cache.contains(key, wanted) is any(wanted in k for k in keys), wanted
    assert cache.contains(key, "pnpm\nuse") is False
    assert cache.contains(key, "nowhere at all") is False
    assert cache.contains(digest("- never stored\n"), "x") is None
    cache.entries(tmp_path / "E.md", "no entries\n")
    assert cache.contains(digest("no entries\n"), "") is False


NEAR_GENERAL = "- Always run the unit tests before pushing to main\n- Format the code with black before every commit\n"
NEAR_OWN = ("- Always run all of the unit tests before pushing to main\n- Format the code with black before every commit\n"
            "- Deploy only from the release branch on Fridays\n")


def test_near_copies_read_back_as_found_and_a_changed_text_is_searched_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    disk = tmp_path / "cache" / "entries.sqlite3"
    general = [index_entries(tmp_path / "GEMINI.md", NEAR_GENERAL)]
    own = index_entries(tmp_path / "sub" / "GEMINI.md", NEAR_OWN)
    exact = own.first_line.keys() & general[0].first_line.keys()
    expected = entry_cache.near_pairs(own, general, exact)
    assert [v[:2] for v in expected.values()] == [(0, "always run the unit tests before pushing to main")]
    cache = EntryCache(disk)
    assert cache.near(own, general, exact) == expected
    assert cache.near(own, [], ()) == {}
    cache.close()
    restarted = EntryCache(disk)
    no_parsing(monkeypatch)
    assert restarted.near(own, general, exact) == expected
    edited = [index_entries(tmp_path / "GEMINI.md", NEAR_GENERAL + "- one more\n")]
    with pytest.raises(AssertionError, match="worked out although cached"):
        restarted.near(own, edited, exact)  # another general text: another row



def test_the_symbol_search_test_of_a_file_follows_the_disk(tmp_path: Path) -> None:
    """`MemoryStore.entries_contain` skips reading a file whose identity is unchanged, and sees
    every change that alters it, even a rewrite of the same size."""
    memory = tmp_path / "GEMINI.md"
    memory.write_text("- Use pnpm\n", encoding="utf-8")
    store = MemoryStore(Settings(global_dir=tmp_path / "global"), EntryCache(tmp_path / "entries.sqlite3"))
    assert store.entries_contain(memory, "pnpm") and not store.entries_contain(memory, "yarn")
    memory.write_text("- Use yarn\n", encoding="utf-8")
    assert store.entries_contain(memory, "yarn") and not store.entries_contain(memory, "pnpm")
    memory.write_bytes(b"- caf\xe9\n")  # not UTF-8: unusable, not searched (as `current_text` says)
    assert not store.entries_contain(memory, "caf")
    memory.write_text("- Café\n", encoding="utf-8")
    assert store.entries_contain(memory, "café")
    memory.unlink()
    assert not store.entries_contain(memory, "caf")


def test_secret_findings_come_back_from_the_cache_as_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_lens.core import entry_cache as ec
    from memory_lens.core.secrets import find_secrets

    text = "# Notes\n- deploy key: `AKIAIOSFODNN7EXAMPLF`\n- fine\n- token = 'ghp_" + "a1B2" * 9 + "'\n"
    expected = find_secrets(text)
    assert expected
    cache = ec.EntryCache(tmp_path / "c.sqlite3")
    assert cache.secrets(text) == expected
    cache.flush()
    cache.close()
    again = ec.EntryCache(tmp_path / "c.sqlite3")

    def not_again(_: str) -> list:
        raise AssertionError("found again, not read from the cache")

    monkeypatch.setattr(ec, "find_secrets", not_again)
    assert again.secrets(text) == expected
    # Another detector version is another key: the findings are not taken for its.
    monkeypatch.setattr(ec, "_secrets_format", lambda: b"memory-lens secrets 2\n")
    with pytest.raises(AssertionError, match="found again"):
        again.secrets(text)
    again.close()
