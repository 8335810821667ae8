"""Bounded work on hostile files: one diagnostic per repeated entry, at most 1000 diagnostics and
2000 document symbols per file (then one saying how many are not shown), code actions that read
a file which is not open only as far as the selection, a memory file over the size limit left
unparsed, and `memory/effective` answered while a large buffer is being checked."""

from __future__ import annotations

import os

import pytest
from lsprotocol import types

from memory_lens.core.large_files import LARGE_TEXT_CHARS

from .harness import FEATURE_CLIENTS, SAVE_GLOBAL, SAVE_PROJECT, Session, uri_of, wait_for

MAX_DIAGNOSTICS = 1000
MAX_SYMBOLS = 2000


async def document_symbols(lsp: Session, path) -> list:
    return list(await lsp.client.text_document_document_symbol_async(types.DocumentSymbolParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri(path)))) or [])


def flatten(symbols: list) -> list:
    out = []
    for s in symbols:
        out.append(s)
        out.extend(flatten(getattr(s, "children", None) or []))
    return out


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_an_entry_written_many_times_gets_one_diagnostic(lsp: Session) -> None:
    memory_file = lsp.ws.write("work/proj/pkg/GEMINI.md", "- keep\n" + "- e\n" * 5 + "- other\n- keep\n")
    diags = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == 2)
    by_line = {d.range.start.line: d for d in diags}
    group, pair = by_line[2], by_line[7]
    assert group.code == "duplicate" and group.message == (
        "duplicate entry: the same as line 2 of this file, which has it 5 times in all; remove the copies")
    assert [(r.location.range.start.line, r.message) for r in group.related_information] == [
        (1, "first occurrence"), (3, "another copy"), (4, "another copy"), (5, "another copy")]
    assert {r.location.uri for r in group.related_information} == {uri_of(memory_file)}
    assert pair.message == "duplicate entry: the same as line 1 of this file; remove one of them"
    # The quick fix still removes the copy the diagnostic is on.
    fixes = await lsp.code_actions(memory_file, (2, 0), (2, 3), diagnostics=[group], only=["quickfix"])
    assert [f.title for f in fixes] == ["Remove duplicate entry"]
    # `memory-lens check` still lists every copy.
    _, out, _ = await lsp.ws.cli("check", str(memory_file), ok=False)
    assert out.count("[duplicate]") == 5


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_diagnostics_per_file_are_capped_with_one_saying_how_many_more(lsp: Session) -> None:
    text = "".join(f"- entry {i}\n- entry {i}\n" for i in range(MAX_DIAGNOSTICS + 150))
    memory_file = lsp.ws.write("work/proj/pkg/GEMINI.md", text)
    diags = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == MAX_DIAGNOSTICS + 1)
    assert [d.code for d in diags[:MAX_DIAGNOSTICS]] == ["duplicate"] * MAX_DIAGNOSTICS
    assert [d.range.start.line for d in diags[:3]] == [1, 3, 5]  # in line order: the first ones shown
    more = diags[-1]
    assert more.severity == types.DiagnosticSeverity.Information and more.range.start.line == 0
    assert more.message == (f"150 more finding(s) in this file not shown (at most {MAX_DIAGNOSTICS} per file); "
                            f"run `memory-lens check {memory_file}` to see them all")


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_document_symbols_are_capped(lsp: Session) -> None:
    text = "# Title\n" + "".join(f"- entry {i}\n" for i in range(MAX_SYMBOLS + 500))
    memory_file = lsp.ws.write("work/proj/pkg/GEMINI.md", text)
    lsp.open(memory_file)
    symbols = flatten(await document_symbols(lsp, memory_file))
    assert len(symbols) == MAX_SYMBOLS
    last = symbols[-1]
    assert last.name == f"502 more entries and sections not shown (at most {MAX_SYMBOLS} symbols per file)"
    assert last.kind == types.SymbolKind.Null
    assert [s.name for s in symbols[:3]] == ["Title", "entry 0", "entry 1"]
    # Exactly at the cap: every symbol is shown, and none says "not shown".
    lsp.change(memory_file, "# Title\n" + "".join(f"- entry {i}\n" for i in range(MAX_SYMBOLS - 1)))
    symbols = flatten(await document_symbols(lsp, memory_file))
    assert len(symbols) == MAX_SYMBOLS and symbols[-1].name == f"entry {MAX_SYMBOLS - 2}"


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_a_selection_in_a_huge_file_that_is_not_open_reads_only_its_lines(lsp: Session) -> None:
    big = lsp.ws.write("work/proj/src/dump.log", "first line\nUse pnpm everywhere\n")
    with open(big, "r+b") as f:
        f.truncate(1024 ** 3)  # 1 GiB: the rest is a hole of NUL bytes, never read
    actions = await lsp.code_actions(big, (1, 4), (1, 19))
    assert [a.title for a in actions] == [SAVE_PROJECT, SAVE_GLOBAL]
    action = actions[0]  # an edit to preview, or the save command (setting savePreview)
    saved = str(action.edit) if action.edit is not None else action.command.arguments[0]["text"]
    assert "pnpm everywhere" in saved and "Use pnpm" not in saved
    assert os.path.getsize(big) == 1024 ** 3


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_a_memory_buffer_over_the_size_limit_is_reported_not_parsed(start) -> None:
    lsp = await start(init_options={"maxFileSize": 1000})
    memory_file = lsp.ws.proj / "new" / "GEMINI.md"  # not on disk: only the open buffer is checked
    lsp.open(memory_file, "- e\n" * 300)
    diags = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == 1)
    assert diags[0].code == "too-large"
    assert diags[0].message.startswith("memory file too large to check: 1200 bytes, over the 1000-byte limit")
    assert await document_symbols(lsp, memory_file) == []


async def test_effective_is_answered_while_a_large_buffer_is_checked(lsp: Session) -> None:
    # Checking this buffer takes a while (a quarter of a million entries); the server reads the
    # effective request that follows it before the check ends, and answers it first.
    memory_file = lsp.ws.proj / "huge" / "GEMINI.md"  # not on disk: only the open buffer is checked
    text = "".join(f"- e{i}\n- e{i}\n" for i in range(50000))  # under LARGE_TEXT_CHARS: every entry checked
    assert len(text) <= LARGE_TEXT_CHARS
    lsp.open(memory_file, text)
    effective = await lsp.effective(lsp.ws.proj / "src" / "app.py")
    assert "Prefer small commits" in effective["text"]
    assert lsp.diagnostics(memory_file) is None  # the check of the buffer has not published yet
    diags = await lsp.wait_diagnostics(memory_file, lambda d: len(d) == MAX_DIAGNOSTICS + 1)
    assert diags[-1].message.startswith(f"{50000 + 1 - MAX_DIAGNOSTICS} more finding(s)")  # + over-budget
    await wait_for(lambda: lsp.server_alive())


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_save_refuses_a_nul_and_writes_other_line_breaks_as_spaces(lsp: Session) -> None:
    from pygls.exceptions import JsonRpcException

    from .harness import CMD_SAVE, REQUEST_FAILED

    project_file = lsp.ws.proj / "GEMINI.md"
    before = project_file.read_bytes()
    with pytest.raises(JsonRpcException) as err:
        await lsp.command(CMD_SAVE, {"text": "Use pnpm\0# injected", "scope": "project"})
    assert err.value.code == REQUEST_FAILED and "NUL" in str(err.value)
    assert project_file.read_bytes() == before
    result = await lsp.command(CMD_SAVE, {"text": "Use pnpm\u2028# not a heading\x0bnor\x85this", "scope": "project"})
    assert result["text"] == "Use pnpm # not a heading nor this"
    written = project_file.read_text(encoding="utf-8")
    assert "- Use pnpm # not a heading nor this\n" in written
    assert written.splitlines() == written.split("\n")[:-1]  # no line break but \n


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_a_memory_file_over_the_limit_is_left_out_of_effective_memory_and_reported(start) -> None:
    lsp = await start(init_options={"maxFileSize": 60})
    project_file = lsp.ws.proj / "GEMINI.md"
    size = project_file.stat().st_size
    assert size > 60
    effective = await lsp.effective(lsp.ws.proj / "src" / "app.py")
    (source,) = [s for s in effective["sources"] if s["path"] == str(project_file)]
    assert source["readable"] is False and source["reason"].startswith(
        f"is too large ({size} bytes, over the 60-byte limit)")
    assert "Prefer small commits" in effective["text"]  # the global file, under the limit
    diags = await lsp.wait_diagnostics(project_file, lambda d: [x.code for x in d] == ["too-large"])
    assert diags[0].range.start.line == 0 and diags[0].severity == types.DiagnosticSeverity.Warning


LARGE = "# Title\n" + "- the same entry, written again and again\n" * (LARGE_TEXT_CHARS // 40)


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_a_buffer_over_the_large_size_is_outlined_as_far_as_its_first_part(lsp: Session) -> None:
    """Issue 23 item 8: documentSymbol on a 10 MB buffer of one line repeated parsed all of it
    (48 s, 1.5 GB). Over LARGE_TEXT_CHARS, only the first LARGE_TEXT_CHARS characters are outlined."""
    assert len(LARGE) > LARGE_TEXT_CHARS
    memory_file = lsp.ws.proj / "big" / "GEMINI.md"
    lsp.open(memory_file, LARGE)
    symbols = flatten(await document_symbols(lsp, memory_file))
    assert len(symbols) == MAX_SYMBOLS and [s.name for s in symbols[:2]] == [
        "Title", "- the same entry, written again and again"[2:]]
    assert symbols[-1].name.startswith("entries and sections not shown from here on (a file over "
                                       f"{LARGE_TEXT_CHARS} characters is outlined as far as its first")
    assert symbols[-1].kind == types.SymbolKind.Null


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_a_buffer_over_the_large_size_gets_no_entry_analysis(lsp: Session) -> None:
    """Over LARGE_TEXT_CHARS a buffer's entries are not compared (no `duplicate`, no entry hover):
    a 10 MB buffer cost 3-4 s of CPU per change. Its other checks still run."""
    memory_file = lsp.ws.proj / "big" / "GEMINI.md"
    lsp.open(memory_file, "@missing.md\n" + LARGE)
    diags = await lsp.wait_diagnostics(memory_file, lambda d: any(x.code == "import-not-found" for x in d))
    assert "duplicate" not in [d.code for d in diags]
    hover = await lsp.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=lsp.uri(memory_file)),
        position=types.Position(line=5, character=3)))
    assert hover is None
