"""textDocument/publishDiagnostics: `memory-lens check` findings for every memory file of the
workspace and the global file, open or not, unreadable ones included; open buffers as typed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from lsprotocol import types

from .conftest import Starter
from .harness import GLOBAL_TEXT, FEATURE_CLIENTS, Session, Workspace, uri_of

SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
              "information": types.DiagnosticSeverity.Information, "hint": types.DiagnosticSeverity.Hint}

FINDINGS_TREE = {
    "home/.gemini/GEMINI.md": "# Global\n- Use pnpm\n- Global only\n- global ONLY!\n",
    "work/proj/GEMINI.md": (
        "# Projekt für Ünïcödé 😀\n"
        "- Tabs\n"
        "- use PNPM.\n"              # redundant (global)
        "- Spaces, always\n"
        "  even in 😀 YAML\n"
        "- tabs!\n"                  # duplicate of line 2
        "```\n- Tabs\n```\n"          # fenced: not an entry
    ),
    "work/proj/pkg/GEMINI.md": "- Spaces, always\n  even in 😀 YAML\n- Own\n- own\n",
    "work/proj/clean/GEMINI.md": "- Nothing wrong here\n",
    "work/proj/bad/GEMINI.md": b"- caf\xe9 is Latin-1\n",
    "work/proj/nul/GEMINI.md": b"- a NUL \x00 byte\n",
}


def build_findings_tree(ws: Workspace) -> list[Path]:
    """A workspace whose memory files have every kind of finding; returns every memory file."""
    for rel, content in FINDINGS_TREE.items():
        ws.write(rel, content)
    (ws.proj / "dir" / "GEMINI.md").mkdir(parents=True)  # a directory named like a memory file
    ws.write("work/proj/ignored/GEMINI.md", "- ignored by git\n- ignored by git\n")
    ws.write("work/proj/.gitignore", "ignored/\n")
    return [ws.path(rel) for rel in FINDINGS_TREE] + [ws.proj / "dir" / "GEMINI.md"]


async def check_findings(ws: Workspace, files: list[Path]) -> dict[Path, list[tuple]]:
    """`memory-lens check --format json` for FILES, grouped by file."""
    _, out, _ = await ws.cli("check", "--format", "json", *map(str, files), ok=False)
    grouped: dict[Path, list[tuple]] = {f: [] for f in files}
    for f in json.loads(out):
        grouped.setdefault(Path(f["path"]), []).append(
            (f["line"] - 1, f["column"] - 1, f["code"], SEVERITIES[f["severity"]], f["message"]))
    return grouped


def as_findings(diags: list[types.Diagnostic]) -> list[tuple]:
    return [(d.range.start.line, d.range.start.character, d.code, d.severity, d.message) for d in diags]


async def test_every_memory_file_is_checked_without_opening_it(ws: Workspace, start: Starter) -> None:
    files = build_findings_tree(ws)
    lsp = await start()
    expected = await check_findings(ws, files)
    assert {f[2] for found in expected.values() for f in found} == {"unreadable", "encoding", "duplicate",
                                                                    "redundant"}
    for path in files:
        diags = await lsp.wait_diagnostics(path, lambda d, p=path: as_findings(d) == expected[p])
        assert all(d.source == "memory-lens" for d in diags)
    assert lsp.diagnostics(ws.proj / "ignored" / "GEMINI.md") is None  # git ignores it: so do agents
    published = {p.uri for p in lsp.published}
    assert published <= {uri_of(p) for p in files}

    # Unreadable files: an error on line 0 of their own URI.
    (diag,) = lsp.diagnostics(ws.path("work/proj/dir/GEMINI.md"))
    assert (diag.code, diag.severity, diag.range.start.line) == ("unreadable", types.DiagnosticSeverity.Error, 0)
    # Bad bytes: a warning from the first bad byte (loaded as the agent loads it).
    for rel, character in (("work/proj/bad/GEMINI.md", len("- caf")), ("work/proj/nul/GEMINI.md", len("- a NUL "))):
        (diag,) = lsp.diagnostics(ws.path(rel))
        assert (diag.code, diag.severity, diag.range.start) == (
            "encoding", types.DiagnosticSeverity.Warning, types.Position(line=0, character=character))

    # Ranges cover the whole entry, in the client's position encoding.
    (redundant,) = [d for d in lsp.diagnostics(ws.proj / "GEMINI.md") if d.code == "redundant"]
    assert redundant.range == types.Range(start=types.Position(line=2, character=0),
                                          end=types.Position(line=2, character=len("- use PNPM.")))
    assert redundant.related_information and redundant.related_information[0].location.uri == uri_of(ws.global_file)
    (pkg_redundant,) = [d for d in lsp.diagnostics(ws.proj / "pkg" / "GEMINI.md") if d.code == "redundant"]
    end_units = {"utf-8": len("  even in 😀 YAML".encode()), "utf-16": len("  even in 😀 YAML") + 1,
                 "utf-32": len("  even in 😀 YAML")}[lsp.encoding]
    assert pkg_redundant.range.start == types.Position(line=0, character=0)
    assert pkg_redundant.range.end == types.Position(line=1, character=end_units)


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_over_budget_matches_check(ws: Workspace, start: Starter) -> None:
    big = "".join(f"- Rule number {i}: {'x' * 60}\n" for i in range(600))  # > 32 KiB merged
    memory_file = ws.write("work/proj/pkg/GEMINI.md", big)
    lsp = await start()
    expected = await check_findings(ws, [memory_file])
    assert [f[2] for f in expected[memory_file]] == ["over-budget"]
    diags = await lsp.wait_diagnostics(memory_file, lambda d: as_findings(d) == expected[memory_file])
    assert diags[0].severity == types.DiagnosticSeverity.Warning


async def test_open_buffer_is_checked_as_typed(lsp: Session) -> None:
    ws = lsp.ws
    memory_file = ws.proj / "pkg" / "GEMINI.md"
    disk = memory_file.read_bytes()
    text = memory_file.read_text(encoding="utf-8")
    lsp.open(memory_file)
    await lsp.wait_diagnostics(memory_file, lambda d: d == [])

    version = lsp.change(memory_file, text + "- package RULE: no globals!\n- Keep functions short\n")
    diags = await lsp.wait_diagnostics(memory_file, lambda d: [x.code for x in d] == ["duplicate", "redundant"])
    assert [d.range.start.line for d in diags] == [2, 3]
    uri = lsp.uri(memory_file)
    assert [p.version for p in lsp.published if p.uri == uri and p.diagnostics][-1] == version
    assert memory_file.read_bytes() == disk  # checked as typed, nothing written

    lsp.change(memory_file, text)
    await lsp.wait_diagnostics(memory_file, lambda d: d == [])


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_close_falls_back_to_disk_or_withdraws(lsp: Session) -> None:
    ws = lsp.ws
    inside = ws.proj / "pkg" / "GEMINI.md"
    lsp.open(inside)
    lsp.change(inside, "- dup\n- dup\n")
    await lsp.wait_diagnostics(inside, lambda d: [x.code for x in d] == ["duplicate"])
    lsp.close(inside)  # unsaved edits discarded: the file on disk is clean
    await lsp.wait_diagnostics(inside, lambda d: d == [])

    outside = ws.write("elsewhere/GEMINI.md", "- twice\n- twice\n")  # not in the workspace
    lsp.open(outside)
    await lsp.wait_diagnostics(outside, lambda d: [x.code for x in d] == ["duplicate"])
    lsp.close(outside)
    await lsp.wait_diagnostics(outside, lambda d: d == [])


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_non_memory_files_get_no_diagnostics(lsp: Session) -> None:
    ws = lsp.ws
    other = ws.write("work/proj/README.md", "- twice\n- twice\n")
    lsp.open(other)
    effective = await lsp.effective(other)  # a request after the open: the open has been handled
    assert effective["projectRoot"] == str(ws.proj)
    assert lsp.diagnostics(other) is None
    assert os.path.exists(other)


@pytest.mark.clients(*FEATURE_CLIENTS)
async def test_buffer_edited_during_a_background_check_keeps_its_newer_diagnostics(
        ws: Workspace, start: Starter) -> None:
    """A background check (here: of every file, after the global file changed) checks open
    buffers as they were when it began. A buffer edited meanwhile has had its newer version
    checked and published already: the background check must not publish its older one over it."""
    for i in range(1500):  # many batches to check before the last file: time to edit meanwhile
        ws.write(f"work/proj/a{i:04d}/GEMINI.md", f"- Shared rule\n- Rule {i}\n")
    first = ws.proj / "a0000" / "GEMINI.md"
    last = ws.write("work/proj/zzz/GEMINI.md", "- Zed rule\n")  # checked last (path order)
    late = ws.write("work/proj/zzy/GEMINI.md", "- Shared rule\n")  # checked with it
    lsp = await start()
    lsp.open(last)
    await lsp.wait_diagnostics(last, lambda d: d == [])
    await lsp.wait_diagnostics(first, lambda d: d == [])
    since = len(lsp.did_change)
    ws.global_file.write_text(GLOBAL_TEXT + "- Shared rule\n", encoding="utf-8")
    await lsp.wait_diagnostics(first, lambda d: [x.code for x in d] == ["redundant"])  # the check has begun
    version = lsp.change(last, "- Zed rule\n- zed RULE\n")
    await lsp.wait_changed(ws.global_file, since)  # the check is over
    await lsp.effective(last)  # and anything it sent has arrived
    final = [p for p in lsp.published if p.uri == lsp.uri(last)][-1]
    assert (final.version, [d.code for d in final.diagnostics]) == (version, ["duplicate"])
    # The edit did land during the check: the check published its last batch after it.
    edited = next(i for i, p in enumerate(lsp.published) if p.uri == lsp.uri(last) and p.version == version)
    assert any(p.uri == lsp.uri(late) and p.diagnostics for p in lsp.published[edited:]), \
        "the check ended before the edit (nothing was tested): give it more files to check"
