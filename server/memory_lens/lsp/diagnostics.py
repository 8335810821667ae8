"""textDocument/publishDiagnostics: `memory-lens check` findings as diagnostics.

Every memory file of the workspace folders and the global files gets the findings of
`memory-lens check FILE` (same codes and severities; 0-based line = check line - 1), open or
not, unreadable ones included. Open buffers are checked as typed; other files from disk.
Publishing skips files whose diagnostics did not change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping

from lsprotocol import types

from memory_lens.core.checks import DUPLICATE, REDUNDANT, Finding, Severity
from memory_lens.core.markdown import split_lines
from memory_lens.lsp.convert import lines_range, path_to_uri
from memory_lens.lsp.protocol import DIAGNOSTIC_SOURCE
from memory_lens.lsp.store import MemoryStore

SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


def to_diagnostic(f: Finding, lines: list[str], encoding: Any) -> types.Diagnostic:
    """One finding as an LSP diagnostic over the entry's lines (line 0 for file-wide findings)."""
    start = f.line - 1
    end = max(start, (f.end_line or f.line) - 1)
    rng = lines_range(lines, start, end, encoding) if lines else types.Range(
        start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=path_to_uri(loc.path), range=lines_range([], loc.line - 1, loc.line - 1, encoding)),
            message="first occurrence" if f.code == DUPLICATE else "the more general copy",
        )
        for loc in f.related
    ]
    return types.Diagnostic(
        range=rng,
        message=f.message,
        severity=SEVERITY[f.severity],
        code=f.code,
        source=DIAGNOSTIC_SOURCE,
        related_information=related or None,
        tags=[types.DiagnosticTag.Unnecessary] if f.code in (DUPLICATE, REDUNDANT) else None,
        data={"code": f.code, "line": f.line, "endLine": f.end_line or f.line},
    )


def diagnostics_for(
    store: MemoryStore, path: Path, text: str | None, encoding: Any
) -> list[types.Diagnostic]:
    """Diagnostics of memory file PATH; TEXT is its open buffer (None: read from disk)."""
    findings = store.check(path, text)
    if text is None:
        got = store.read(path)
        text = got.text if got.ok else ""
    lines = split_lines(text)
    return [to_diagnostic(f, lines, encoding) for f in findings]


def compute(
    store: MemoryStore, paths: Iterable[Path], open_texts: Mapping[Path, str], encoding: Any
) -> dict[Path, list[types.Diagnostic]]:
    """Diagnostics for each of PATHS (runs in a worker thread)."""
    return {p: diagnostics_for(store, p, open_texts.get(p), encoding) for p in paths}


def publish(ls: Any, path: Path, diagnostics: list[types.Diagnostic], version: int | None = None,
            force: bool = False) -> bool:
    """Send PATH's diagnostics unless they are what the client already has; True when sent."""
    uri = path_to_uri(path)
    if not force and ls.published.get(uri) == diagnostics:
        return False
    ls.published[uri] = diagnostics
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))
    return True


def clear(ls: Any, path: Path) -> None:
    """Withdraw every diagnostic of PATH."""
    uri = path_to_uri(path)
    if ls.published.pop(uri, None):
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
