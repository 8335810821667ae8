"""textDocument/publishDiagnostics: `memory-lens check` findings as diagnostics.

Every memory file of the workspace folders and the global files gets the findings of
`memory-lens check FILE` (same codes and severities; 0-based line = check line - 1), open or
not, unreadable ones included. Open buffers are checked as typed; other files from disk.
Publishing skips files whose diagnostics did not change (a digest of what was last sent to each
file is kept, not the diagnostics themselves).

Bounded: an entry written many times gets one `duplicate` diagnostic (on its first copy, with
related locations for the first occurrence and the other copies), and a file gets at most
`MAX_DIAGNOSTICS`; past that, one information diagnostic on line 1 says how many more there are
and how to see them all (`memory-lens check FILE`).

A file open in the editor that no enabled agent loads in any status of `memory/explain`
(loaded, on-read, requestable) gets one `not-loaded` diagnostic on line 0 with every enabled
agent's reason in explain's words, in place of the per-agent `not-loaded` findings; an open
instruction file that is neither a memory file nor an enabled agent's (a `.cursorrules` while only
Gemini is enabled) gets only that one (`not_loaded`).
"""

from __future__ import annotations

import functools
import os
import weakref
from pathlib import Path
from typing import Any, Collection, Iterable, Mapping

from lsprotocol import types

from memory_lens.core.agents import AGENTS
from memory_lens.core.agents.budget import agent_file_names, chain_agents, file_agent_findings, own_findings, readers
from memory_lens.core.agents.claude_checks import is_auto_memory
from memory_lens.core.agents.scoped import rule_folder
from memory_lens.core.checks import DRIFT, DUPLICATE, NOT_LOADED, REDUNDANT, Finding, Severity
from memory_lens.core.discovery import TargetError
from memory_lens.core.explain import NOT_LOADED as NOT_LOADED_STATUS
from memory_lens.core.explain import agent_reads_name, explain, title
from memory_lens.core.settings import Settings
from memory_lens.core.markdown import split_lines, split_newlines
from memory_lens.lsp.convert import client_column, line_text, path_to_uri
from memory_lens.lsp.protocol import DIAGNOSTIC_SOURCE
from memory_lens.lsp.store import MemoryStore
from memory_lens.startup import collector_off

SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


_UNNECESSARY = [types.DiagnosticTag.Unnecessary]  # shared, like related_information's results
MAX_DIAGNOSTICS = 1000  # per file; then one information diagnostic says how many are not shown


@functools.lru_cache(maxsize=8192)
def related_information(uri: str, line: int, message: str) -> types.DiagnosticRelatedInformation:
    """A pointer to the start of 0-based LINE of URI. Shared between diagnostics, which are never
    modified: in a large workspace thousands of them point at the same lines."""
    at = types.Position(line=line, character=0)
    return types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=types.Range(start=at, end=at)), message=message)


@functools.lru_cache(maxsize=4096)
def _uri(path: Path) -> str:
    """The URI of a file that findings point at (the same few general files, thousands of times)."""
    return path_to_uri(path)


def _lines_span(start: int, end: int, end_character: int, spans: dict | None) -> types.Range:
    """From the start of 0-based line START to END_CHARACTER on line END. With SPANS (a dict
    kept for one pass), shared between the diagnostics of the pass, which are never modified:
    most findings cover whole lines, and the same spans recur across files."""
    key = (start, end, end_character)
    found = spans.get(key) if spans is not None else None
    if found is None:
        found = types.Range(start=types.Position(line=start, character=0),
                            end=types.Position(line=end, character=end_character))
        if spans is not None:
            spans[key] = found
    return found


def to_diagnostic(f: Finding, lines: list[str], encoding: Any, entry: str | None = None,
                  spans: dict | None = None) -> types.Diagnostic:
    """One finding as an LSP diagnostic over the entry's lines (line 0 for file-wide findings).
    ENTRY, the normalised text of the entry a finding is about, goes into `data`: a quick fix
    checks it is still that entry before removing anything. SPANS: see `_lines_span`."""
    start = max(f.line - 1, 0)
    end = max(start, (f.end_line or f.line) - 1)
    if lines:
        end_text = lines[end].rstrip("\r\n") if end < len(lines) else ""
        width = len(end_text) if end_text.isascii() else client_column(end_text, len(end_text), encoding)
        rng = _lines_span(start, end, width, spans)
        if f.column > 1:  # a bad byte, an import's '@': the range starts there
            rng = types.Range(start=types.Position(
                line=start, character=client_column(line_text(lines, start), f.column - 1, encoding)), end=rng.end)
    else:
        rng = _lines_span(0, 0, 0, spans)
    message = {DUPLICATE: "first occurrence", DRIFT: "the other copy"}.get(f.code, "the more general copy")
    related = [related_information(_uri(loc.path), max(loc.line - 1, 0), message if i == 0 else "another copy")
               for i, loc in enumerate(f.related)]
    return types.Diagnostic(
        range=rng,
        message=f.message,
        severity=SEVERITY[f.severity],
        code=f.code,
        source=DIAGNOSTIC_SOURCE,
        related_information=related or None,
        tags=_UNNECESSARY if f.code in (DUPLICATE, REDUNDANT) else None,
        data={"code": f.code, "line": f.line, "endLine": f.end_line or f.line,
              **({"entry": entry} if entry is not None else {}),
              **({"other": str(f.related[0].path)} if f.code == DRIFT else {})},
    )


def diagnostics_for(
    store: MemoryStore, path: Path, text: str | None, encoding: Any, agent_names: Collection[str] | None = None,
    spans: dict | None = None, generation: int | None = None
) -> list[types.Diagnostic]:
    """Diagnostics of memory file PATH; TEXT is its open buffer (None: read from disk).
    AGENT_NAMES: `agent_file_names()`, when the caller has it already. SPANS: see `_lines_span`.
    GENERATION: the watcher's (`watch.Watcher.generation`), for an edit of an open buffer: its
    `not-loaded` is what it was for the same generation (`not_loaded_since`)."""
    # Then what each enabled agent cuts or does not load (read from disk: core/agents/budget.py).
    # A file of a name only the enabled agents read (not Gemini's) gets those findings alone.
    # A file only another agent reads (CLAUDE.md, say) gets its `stale` and `drift` findings too.
    own = store.check(path, text) if store.is_memory(path) else _agent_file_own(store, path, text)
    # A rules file's own findings walk the workspace for its globs: only while it is open.
    more = file_agent_findings(path, store.settings, names=agent_names) if text is not None or rule_folder(path) is None \
        else []
    findings = own + more
    if text is not None:  # open in the editor: one not-loaded when no enabled agent loads it at all
        whole = not_loaded_since(store, path, generation)
        if whole:
            findings = [f for f in findings if f.code != NOT_LOADED] + whole
    if not findings:
        return []
    hidden = len(findings) - MAX_DIAGNOSTICS
    if hidden > 0:
        findings = findings[:MAX_DIAGNOSTICS]
    if text is None:
        got = store.read(path)
        text = got.text if got.loadable else ""
    # Only the text of lines matters here; without `\r`, a plain split gives the same lines.
    lines = split_lines(text) if "\r" in text else split_newlines(text)
    # The entry each duplicate or redundant finding is about (the store's index, from the check).
    about = [f.code in (DUPLICATE, REDUNDANT) for f in findings]
    indexed = store.entries(path, text) if any(about) else None
    shown = [to_diagnostic(f, lines, encoding, indexed.key_at(f.line - 1) if indexed and entry else None, spans)
             for f, entry in zip(findings, about)]
    return shown + ([not_shown(path, hidden)] if hidden > 0 else [])


def _agent_file_own(store: MemoryStore, path: Path, text: str | None) -> list[Finding]:
    """The checks of an instruction file's own text (`own_findings`): all of them for a file an agent
    of the setting `agents` reads, or a scoped rules file (of an agent it names, when set); else its
    secrets alone (with `agents` unset, another agent's file is no memory file: `AGENTS.md` of a
    project whose Gemini CLI does not read it)."""
    if text is None:
        got = store.read(path)
        if not got.loadable:
            return []
        text = got.text
    settings, where = store.settings, rule_folder(path)
    try:
        whole = (where[1] in (settings.agents or AGENTS) if where is not None
                 else bool(settings.agents and readers(path, settings.agents, settings)))
    except OSError:
        whole = False
    return own_findings(path, text, settings, whole)


def not_shown(path: Path, hidden: int) -> types.Diagnostic:
    """The diagnostic that stands for the HIDDEN findings past `MAX_DIAGNOSTICS`."""
    at = types.Position(line=0, character=0)
    return types.Diagnostic(
        range=types.Range(start=at, end=at), severity=types.DiagnosticSeverity.Information,
        source=DIAGNOSTIC_SOURCE,
        message=f"{hidden} more finding(s) in this file not shown (at most {MAX_DIAGNOSTICS} per file); "
                f"run `memory-lens check {path}` to see them all")


def compute(
    store: MemoryStore, paths: Iterable[Path], open_texts: Mapping[Path, str], encoding: Any
) -> dict[Path, list[types.Diagnostic]]:
    """Diagnostics for each of PATHS (runs in a worker thread): one pass over the disk
    (`MemoryStore.one_pass`), without the cyclic collector (`startup.collector_off`)."""
    names = agent_file_names()
    spans: dict = {}
    with store.one_pass(), collector_off():
        return {p: diagnostics_for(store, p, open_texts.get(p), encoding, names, spans) for p in paths}


def fingerprint(diagnostics: list[types.Diagnostic]) -> bytes:
    """A digest of DIAGNOSTICS (empty for none). The server keeps it per file, not the list
    itself, to tell whether new diagnostics differ from what the client has: a large workspace
    has tens of thousands of them. Every field of a diagnostic goes into it.

    It is compared only within the process that made it, so it is Python's own hash of the
    fields (64 bits: a changed list passes for the old one with a chance of one in 2^64), not a
    digest of their text, which took three times as long (~110 ms for the 16,000 diagnostics of
    a full check of the large benchmark tree)."""
    if not diagnostics:
        return b""
    parts = tuple((_range(d.range), d.message, d.severity, d.code,
                   d.code_description.href if d.code_description else None, d.source, tuple(d.tags or ()),
                   tuple((r.location.uri, _range(r.location.range), r.message) for r in d.related_information or ()),
                   repr(d.data))
                  for d in diagnostics)
    return hash(parts).to_bytes(8, "little", signed=True)


def _range(r: types.Range) -> tuple[int, int, int, int]:
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def publish(ls: Any, path: Path, diagnostics: list[types.Diagnostic], version: int | None = None,
            force: bool = False) -> bool:
    """Send PATH's diagnostics unless they are what the client already has; True when sent."""
    uri = path_to_uri(path)
    digest = fingerprint(diagnostics)
    if not force and ls.published.get(uri) == digest:
        return False
    ls.published[uri] = digest
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))
    return True


def clear(ls: Any, path: Path) -> None:
    """Withdraw every diagnostic of PATH."""
    uri = path_to_uri(path)
    if ls.published.pop(uri, None):
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


# A file no enabled agent loads (`not-loaded`, for open documents) -----------------------------


def is_instruction_file(path: Path, settings: Settings) -> bool:
    """Whether some agent Memory Lens knows reads files named as PATH is (`explain`'s rule)."""
    return any(agent_reads_name(a, path, settings, None) for a in AGENTS)


def not_loaded(store: MemoryStore, path: Path) -> list[Finding]:
    """`not-loaded` for PATH, open in the editor, when no enabled agent (`settings.agents`, else
    `chain_agents`) loads it in any status of `memory-lens explain` (loaded, on-read,
    requestable): one finding on line 1 with every enabled agent's reason in explain's words,
    Copilot Chat's with the editor's workspace folders and chat settings (`Editor`), as memory/explain.
    None for a file not on disk, Claude Code's auto memory, or a scoped rules file of an enabled agent (explain answers for
    the rule as the file read, not as a rule: `rule-matches-nothing` and the rest say whether it
    ever applies)."""
    real = Path(os.path.realpath(path))
    enabled = store.settings.agents or chain_agents(real)
    where = rule_folder(real)
    if (where is not None and where[1] in enabled) or is_auto_memory(real) or not os.path.isfile(real):
        return []  # the auto memory: loaded for its project, which explain cannot start from here
    try:
        matrix = explain(real, store.settings, enabled, gemini_memory=store.memory_for, also=(real,),
                         chat_settings=store.editor.chat_settings, folders=store.editor.folders() or None)
    except (TargetError, OSError):
        return []
    row = next(f for f in matrix.files if f.path == real)
    if any(s.status != NOT_LOADED_STATUS for s in row.statuses.values()):
        return []
    names = ", ".join(title(a) for a in enabled)
    reasons = "; ".join(s.reason for s in row.statuses.values())
    return [Finding(path, 1, 1, NOT_LOADED, f"no enabled agent loads this file ({names}; setting "
                    f"memoryLens.agents): {reasons}", 1)]


# store -> ((watcher generation, the editor's chat settings and folders), {path: its not-loaded then}).
_not_loaded_memo: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def not_loaded_since(store: MemoryStore, path: Path, generation: int | None) -> list[Finding]:
    """`not_loaded(store, path)`, worked out once per GENERATION of the watcher (None: now) and
    state of the editor (`Editor`: its folders and chat settings, which change without a new
    store). It depends on those alone, not on the buffer, and took ~60% of the re-check of an
    edit of the large tree's largest file (docs/performance.md): an edit changes no file, and a
    change on disk the watcher reports moves the generation on."""
    if generation is None:
        return not_loaded(store, path)
    chat = store.editor.chat_settings
    state = (generation, dict(chat) if chat is not None else None, tuple(store.editor.folders()))
    was, memo = _not_loaded_memo.get(store, (None, None))
    if was != state or memo is None:
        memo = {}
        _not_loaded_memo[store] = (state, memo)
    found = memo.get(path)
    if found is None:
        found = memo[path] = not_loaded(store, path)
    return found


def not_loaded_diagnostics(store: MemoryStore, path: Path, text: str | None, encoding: Any) -> list[types.Diagnostic]:
    """The diagnostics of an open instruction file that is neither a memory file nor an enabled
    agent's: its `not-loaded`, if any."""
    return [to_diagnostic(f, [], encoding) for f in not_loaded(store, path)]
