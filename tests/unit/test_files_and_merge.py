"""memory_lens.core.files and memory_lens.core.merge: reading one file safely, merging a chain."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_lens.core.discovery import Candidate, ChainPlan, Scope
from memory_lens.core.files import (FileRead, FileStatus, RunReads, decode_as_agent, decode_memory_bytes,
                                   read_memory_file)
from memory_lens.core.merge import concatenate, estimate_tokens, load_memory, merge_plan
from memory_lens.core.settings import Settings

# read_memory_file -------------------------------------------------------------------------------


def test_run_reads_reads_a_file_once_while_it_is_unchanged_and_again_once_it_changes(tmp_path: Path) -> None:
    p = tmp_path / "GEMINI.md"
    p.write_text("- one\n")
    read = RunReads()
    first = read(p)
    assert read(p) is first and first.text == "- one\n"  # the same read, not a second one
    p.write_text("- one\n- two\n")  # changed during the run: read as it is now
    assert read(p).text == "- one\n- two\n"
    p.unlink()
    assert read(p).status is FileStatus.MISSING
    p.write_text("- back\n")
    assert read(p).text == "- back\n"
    assert RunReads(max_bytes=3)(p).too_large  # the limit given, as read_memory_file's


def test_regular_file(tmp_path: Path) -> None:
    p = tmp_path / "GEMINI.md"
    p.write_bytes(b"hello\n")
    memory_file = read_memory_file(p)
    assert memory_file.ok and memory_file.exists and memory_file.status is FileStatus.OK
    assert (memory_file.text, memory_file.size, memory_file.real_path) == ("hello\n", 6, Path(os.path.realpath(p)))


def test_a_linked_file_and_a_large_one_are_read_whole_with_their_real_path(tmp_path: Path) -> None:
    target_dir = tmp_path / "real"
    target_dir.mkdir()
    body = ("- an entry of some length to fill the file\n" * 6000).encode()  # ~260 KB: more than one chunk
    (target_dir / "GEMINI.md").write_bytes(body)
    (tmp_path / "link").symlink_to(target_dir, target_is_directory=True)
    (tmp_path / "GEMINI.md").symlink_to(tmp_path / "link" / "GEMINI.md")
    got = read_memory_file(tmp_path / "GEMINI.md", max_bytes=1 << 20)
    assert got.ok and got.text.encode() == body and got.size == len(body)
    assert got.real_path == Path(os.path.realpath(target_dir / "GEMINI.md"))


def test_bom_is_dropped_but_counted_in_size(tmp_path: Path) -> None:
    p = tmp_path / "GEMINI.md"
    p.write_bytes(b"\xef\xbb\xbfhi")
    memory_file = read_memory_file(p)
    assert (memory_file.text, memory_file.size) == ("hi", 5)


def test_missing_file(tmp_path: Path) -> None:
    memory_file = read_memory_file(tmp_path / "nope.md")
    assert memory_file.status is FileStatus.MISSING and not memory_file.exists and not memory_file.ok
    assert read_memory_file(tmp_path / "no" / "dir" / "x.md").status is FileStatus.MISSING


def test_file_as_a_directory_component_is_missing(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    assert read_memory_file(tmp_path / "file" / "GEMINI.md").status is FileStatus.MISSING


def _dangling(p: Path) -> None:
    os.symlink("nowhere", p)


def _loop(p: Path) -> None:
    os.symlink(p.name, p)


def _directory(p: Path) -> None:
    p.mkdir()


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _device(p: Path) -> None:
    os.symlink("/dev/null", p)


def _latin1(p: Path) -> None:
    p.write_bytes(b"caf\xe9")


def _nul(p: Path) -> None:
    p.write_bytes(b"a\x00b")


def _utf16(p: Path) -> None:
    p.write_bytes("hi".encode("utf-16"))


@pytest.mark.parametrize(
    "make, reason",
    [(_dangling, "dangling symbolic link"), (_loop, "symbolic link loop"), (_directory, "directory"),
     (_fifo, "FIFO"), (_device, "device")],
)
def test_unusable_files(tmp_path: Path, make, reason: str) -> None:
    p = tmp_path / "GEMINI.md"
    make(p)
    memory_file = read_memory_file(p)  # a FIFO must not block here
    assert memory_file.status is FileStatus.UNUSABLE and memory_file.exists and not memory_file.ok and not memory_file.loadable
    assert reason in memory_file.reason and memory_file.text == "" and memory_file.encoding is None


@pytest.mark.parametrize(
    "make, reason, text, where",
    [(_latin1, "not valid UTF-8 (bad byte at offset 3)", "caf\ufffd", (3, 1, 4)),
     (_nul, "NUL byte at offset 1", "a\x00b", (1, 1, 2)),
     (_utf16, "not valid UTF-8 (bad byte at offset 0)", "\ufffd\ufffdh\x00i\x00", (0, 1, 1))],
)
def test_files_with_bad_bytes_carry_the_agents_text(tmp_path: Path, make, reason, text, where) -> None:
    """Not writable (status UNUSABLE), but loadable: the text the agent decodes, and where the
    first bad byte is."""
    p = tmp_path / "GEMINI.md"
    make(p)
    memory_file = read_memory_file(p)
    assert memory_file.status is FileStatus.UNUSABLE and not memory_file.ok and memory_file.loadable
    assert reason in memory_file.reason and memory_file.text == text
    assert (memory_file.encoding.offset, memory_file.encoding.line, memory_file.encoding.column) == where


def test_decode_as_agent_points_at_the_first_bad_byte() -> None:
    assert decode_as_agent(b"\xef\xbb\xbfab") == ("ab", True, None)
    text, bom, issue = decode_as_agent(b"\xef\xbb\xbfone\ntw\xe2\x82o\x00")
    assert (text, bom) == ("one\ntw\ufffdo\x00", True)
    assert (issue.offset, issue.line, issue.column) == (9, 2, 3) and "offset 9" in issue.reason
    text, bom, issue = decode_as_agent(b"\xef\xbb\xbfx\x00")
    assert (text, bom, issue.line, issue.column) == ("x\x00", True, 1, 2) and "NUL" in issue.reason


def test_decode_memory_bytes() -> None:
    assert decode_memory_bytes(b"\xef\xbb\xbfx") == ("x", "")
    assert decode_memory_bytes(b"") == ("", "")
    assert decode_memory_bytes(b"a\x00")[0] is None
    text, why = decode_memory_bytes(b"ab\xff")
    assert text is None and "offset 2" in why


# concatenate -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "contents, expected",
    [
        (["Global instruction.", "Project instruction.", None, "Feature instruction."],
         "Global instruction.\n\nProject instruction.\n\nFeature instruction."),
        ([None, "Only instruction.", None], "Only instruction."),
        (["First.", "Second."], "First.\n\nSecond."),
        ([None, None], ""),
        (["Instruction1", None, "Instruction3"], "Instruction1\n\nInstruction3"),
        (["", "  \n", "x"], "x"),
        (["\n a \n", "\tb\n\n"], "a\n\nb"),
        ([], ""),
    ],
)
def test_concatenate(contents: list[str | None], expected: str) -> None:
    assert concatenate(contents) == expected


def test_concatenate_trims_with_javascripts_whitespace() -> None:
    """U+FEFF and U+3000 go (JavaScript's trim); U+001C-U+001F and U+0085 stay (Python's strip
    would take them)."""
    assert concatenate(["\ufeff\u3000 a \x1c", "\x85b\u2028"]) == "a \x1c\n\n\x85b"
    assert concatenate(["\ufeff \u00a0", "x"]) == "x"


def test_merge_loads_bad_bytes_and_keeps_a_leading_bom_in_the_agents_text() -> None:
    """A file with bad bytes is loaded and warned about; a BOM stays in the text the imports see,
    so `@` right after it is not a mention (as in Gemini CLI), and is then trimmed away."""
    files = {
        "/p/GEMINI.md": FileRead(Path("/p/GEMINI.md"), FileStatus.OK, "@./x.md", size=10, bom=True,
                                 real_path=Path("/p/GEMINI.md")),
        "/p/s/GEMINI.md": read_bad("/p/s/GEMINI.md", b"ok\n\xffend\n"),
    }
    memory = merge_plan(_plan(("/p/GEMINI.md", Scope.PROJECT), ("/p/s/GEMINI.md", Scope.PROJECT)), _reader(files))
    assert memory.text == "@./x.md\n\nok\n\ufffdend"
    assert [(s.readable, s.imports, s.encoding is not None) for s in memory.sources] == [
        (True, (), False), (True, (), True)]
    assert memory.warnings == ["/p/s/GEMINI.md:2: is not valid UTF-8 (bad byte at offset 3); loaded as the "
                               "agent loads it, each bad byte read as U+FFFD"]


def read_bad(path: str, data: bytes) -> FileRead:
    text, bom, issue = decode_as_agent(data)
    return FileRead(Path(path), FileStatus.UNUSABLE, text, issue.reason, len(data), Path(path), bom=bom,
                    encoding=issue)


def test_estimate_tokens() -> None:
    assert [estimate_tokens("x" * n) for n in (0, 1, 4, 5, 400)] == [0, 1, 1, 2, 100]


# merge_plan with a fake reader ---------------------------------------------------------------------


def _plan(*cands: tuple[str, Scope]) -> ChainPlan:
    return ChainPlan(Path("/t"), None, tuple(Candidate(Path(p), s) for p, s in cands))


def _reader(files: dict[str, FileRead]):
    return lambda path: files.get(str(path), FileRead(path, FileStatus.MISSING))


def test_merge_plan_skips_missing_and_unusable_and_repeats() -> None:
    files = {
        "/g/GEMINI.md": FileRead(Path("/g/GEMINI.md"), FileStatus.OK, "  G\n", size=4, real_path=Path("/g/GEMINI.md")),
        "/p/GEMINI.md": FileRead(Path("/p/GEMINI.md"), FileStatus.UNUSABLE, reason="is bad", size=9,
                                 real_path=Path("/p/GEMINI.md")),
        "/p/AGENTS.md": FileRead(Path("/p/AGENTS.md"), FileStatus.OK, "G again", size=7,
                                 real_path=Path("/g/GEMINI.md")),
        "/p/s/GEMINI.md": FileRead(Path("/p/s/GEMINI.md"), FileStatus.OK, "\nS\n", size=3,
                                   real_path=Path("/p/s/GEMINI.md")),
    }
    plan = _plan(("/g/GEMINI.md", Scope.GLOBAL), ("/g/AGENTS.md", Scope.GLOBAL), ("/p/GEMINI.md", Scope.PROJECT),
                 ("/p/AGENTS.md", Scope.PROJECT), ("/p/s/GEMINI.md", Scope.PROJECT))
    memory = merge_plan(plan, _reader(files))
    assert memory.text == "G\n\nS"
    assert [(str(s.path), s.readable, s.bytes, s.tokens) for s in memory.sources] == [
        ("/g/GEMINI.md", True, 4, 1), ("/p/GEMINI.md", False, 9, 0), ("/p/s/GEMINI.md", True, 3, 1)]
    assert memory.warnings == ["/p/GEMINI.md: skipped: is bad"]
    trace = "\n".join(memory.trace)
    assert "/g/AGENTS.md: not found" in trace and "/p/GEMINI.md: unusable: is bad" in trace
    assert "/p/AGENTS.md: skipped, same file as /g/GEMINI.md" in trace
    assert "merged text: 'G\\n\\nS'" in trace


def test_memory_json_and_annotated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = Path(os.path.realpath(tmp_path))
    monkeypatch.setenv("HOME", str(base / "home"))
    (base / "g").mkdir()
    (base / "g" / "GEMINI.md").write_text("\n Global \n")
    project = base / "p"
    (project / ".git").mkdir(parents=True)
    (project / "GEMINI.md").write_text("   \n")  # empty: listed, not merged, not annotated
    (project / "a").mkdir()
    (project / "a" / "GEMINI.md").write_text("A\n")
    memory = load_memory(project / "a", Settings(global_dir=base / "g"))
    assert [s.to_json() for s in memory.sources] == [
        {"path": str(base / "g" / "GEMINI.md"), "scope": "global", "readable": True, "bytes": 10, "tokens": 2,
         "reason": "", "imports": []},
        {"path": str(project / "GEMINI.md"), "scope": "project", "readable": True, "bytes": 4, "tokens": 0,
         "reason": "", "imports": []},
        {"path": str(project / "a" / "GEMINI.md"), "scope": "project", "readable": True, "bytes": 2,
         "tokens": 1, "reason": "", "imports": []},
    ]
    g, a = base / "g" / "GEMINI.md", project / "a" / "GEMINI.md"
    assert memory.annotated() == (f"--- Context from: {g} ---\nGlobal\n--- End of Context from: {g} ---\n\n"
                                  f"--- Context from: {a} ---\nA\n--- End of Context from: {a} ---")
    assert memory.size_bytes == 9 and memory.tokens == 3


def test_empty_memory() -> None:
    memory = merge_plan(_plan(("/nothing/GEMINI.md", Scope.GLOBAL)), _reader({}))
    assert (memory.text, memory.sources, memory.annotated(), memory.warnings) == ("", (), "", [])
