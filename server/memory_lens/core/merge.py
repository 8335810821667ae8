"""Loading and merging a memory chain exactly as the agent does.

Each file is decoded as the agent decodes it (a file with bad bytes is loaded with U+FFFD, and
warned about), its `@path` imports are expanded as Gemini CLI does (`core/imports.py`), and the
result is trimmed with JavaScript's whitespace set; empty ones are skipped; the rest are joined
with a blank line ("\\n\\n"): the global files, then the project files in Gemini CLI's order
(a string sort of their paths). The same real file never loads twice. `trace`
records every step for `--debug`; `warnings` lists unusable files and files with bad bytes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property, partial
from pathlib import Path
from typing import Callable, Iterable, Sequence

from memory_lens.core.discovery import ChainPlan, Scope, has_marker, plan_chain
from memory_lens.core.files import EncodingIssue, FileRead, read_memory_file
from memory_lens.core.imports import ImportBudget, ImportNode, expand_imports
from memory_lens.core.node_paths import js_sort_key, js_trim
from memory_lens.core.settings import Settings

Reader = Callable[[Path], FileRead]
Withheld = Callable[[str], "str | None"]  # why a file may not be read (core/read_policy.py), or None


def estimate_tokens(text: str) -> int:
    """A token estimate: one token per four characters, as agents' own estimators do."""
    return math.ceil(len(text) / 4)


def utf8_size(text: str) -> int:
    """The UTF-8 size of TEXT in bytes (ASCII text is not encoded to find out)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def concatenate(contents: Iterable[str | None]) -> str:
    """Join non-empty trimmed contents with a blank line, in the order given."""
    return "\n\n".join(s for s in (js_trim(c or "") for c in contents) if s)


@dataclass(frozen=True)
class Source:
    """One existing memory file of a chain, usable or not."""

    path: Path
    scope: Scope
    readable: bool
    bytes: int
    tokens: int
    text: str = ""  # the file's full decoded text (BOM dropped); "" when unreadable
    reason: str = ""
    real_path: Path | None = None
    expanded: str | None = None  # the text as the agent gets it, imports expanded (None: `text`)
    imports: tuple[ImportNode, ...] = ()  # the file's `@path` mentions, as a tree
    encoding: EncodingIssue | None = None  # the first bad byte of a file loaded with U+FFFD

    @cached_property
    def content(self) -> str:
        """The text that goes into the merge: imports expanded, then trimmed as JavaScript does."""
        return js_trim(self.text if self.expanded is None else self.expanded)

    def to_json(self) -> dict:
        return {
            "path": str(self.path),
            "scope": self.scope.value,
            "readable": self.readable,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "reason": self.reason,
            "imports": [node.to_json() for node in self.imports],
        }


@dataclass(frozen=True)
class Memory:
    """The effective memory for one directory: its sources and the merged text."""

    target_dir: Path
    project_root: Path | None
    sources: tuple[Source, ...]
    text: str
    trace: tuple[str, ...] = field(default=(), compare=False)

    @property
    def warnings(self) -> list[str]:
        return [f"{s.path}: skipped: {s.reason}" if not s.readable else
                f"{s.path}:{s.encoding.line}: {s.encoding.reason}; loaded as the agent loads it, "
                "each bad byte read as U+FFFD"
                for s in self.sources if not s.readable or s.encoding is not None]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    @property
    def size_bytes(self) -> int:
        return utf8_size(self.text)

    def annotated(self) -> str:
        """Gemini CLI's annotated form: each usable, non-empty source in labelled blocks."""
        return "\n\n".join(
            f"--- Context from: {s.path} ---\n{s.content}\n--- End of Context from: {s.path} ---"
            for s in self.sources
            if s.readable and s.content
        )


def load_sources(plan: ChainPlan, reader: Reader = read_memory_file, markers: tuple[str, ...] = (".git",),
                 import_format: str = "tree", withheld: Withheld | None = None) -> tuple[list[Source], list[str]]:
    """Read every candidate of PLAN; return the existing files (deduplicated) and a trace. Imports
    are expanded in IMPORT_FORMAT, kept inside the root MARKERS find (Gemini's settings), within
    one budget for them all (`imports.ImportBudget`); an import WITHHELD names a reason for is not read."""
    trace: list[str] = []
    sources: list[Source] = []
    seen: set[Path] = set()
    budget = ImportBudget(withheld=withheld)
    for cand in plan.candidates:
        got = reader(cand.path)
        if not got.exists:
            trace.append(f"{cand.scope.value} {cand.path}: not found")
            continue
        if got.real_path is not None:
            if got.real_path in seen:
                trace.append(f"{cand.scope.value} {cand.path}: skipped, same file as {got.real_path} (already loaded)")
                continue
            seen.add(got.real_path)
        if not got.loadable:
            trace.append(f"{cand.scope.value} {cand.path}: unusable: {got.reason}")
            sources.append(Source(cand.path, cand.scope, False, got.size, 0, reason=got.reason,
                                  real_path=got.real_path))
            continue
        expansion = expand_imports(got.agent_text, cand.path, markers=markers, import_format=import_format,
                                   budget=budget)
        content = js_trim(expansion.text)
        trace.append(f"{cand.scope.value} {cand.path}: loaded ({got.size} bytes"
                     + (", empty" if not content else "")
                     + (f", {got.reason} (read as U+FFFD)" if got.encoding else "") + ")")
        trace.extend(import_trace(expansion.imports, "  "))
        sources.append(Source(cand.path, cand.scope, True, got.size, estimate_tokens(content),
                              text=got.text, real_path=got.real_path, expanded=expansion.text,
                              imports=expansion.imports, encoding=got.encoding))
    return in_gemini_order(sources), trace


def in_gemini_order(sources: list[Source]) -> list[Source]:
    """SOURCES (global first, then project files root first, duplicates already left out) in the
    order Gemini CLI 0.61.0 loads them: the global files as planned (file-name order), then the
    project files sorted as strings, as `getEnvironmentMemoryPaths` sorts them (`unique.sort()`):
    `/r/AGENTS.md` before `/r/GEMINI.md` whatever the configured order, and `/r/Docs/GEMINI.md`
    before `/r/GEMINI.md`."""
    project = sorted((s for s in sources if s.scope is Scope.PROJECT), key=lambda s: js_sort_key(str(s.path)))
    return [s for s in sources if s.scope is not Scope.PROJECT] + project


def import_trace(nodes: Sequence[ImportNode], indent: str) -> list[str]:
    """One line per import mention for `--debug`, nested imports indented."""
    lines: list[str] = []
    for node in nodes:
        lines.append(f"{indent}import @{node.target} (line {node.line}): {node.status}"
                     + (f": {node.path}" if node.path is not None and node.status == "imported" else "")
                     + (f": {node.message}" if node.message else ""))
        lines.extend(import_trace(node.children, indent + "  "))
    return lines


def merge_plan(plan: ChainPlan, reader: Reader = read_memory_file, markers: tuple[str, ...] = (".git",),
               import_format: str = "tree", withheld: Withheld | None = None) -> Memory:
    """Load and merge the files of an already planned chain."""
    sources, trace = load_sources(plan, reader, markers, import_format, withheld)
    text = concatenate(s.content for s in sources if s.readable)
    head = [f"target directory: {plan.target_dir}",
            f"project root: {plan.project_root if plan.project_root else '(none: the target directory alone)'}"]
    snippet = text if len(text) <= 400 else text[:400] + f"... ({len(text)} characters in all)"
    tail = [f"merged: {len(sources)} file(s), {utf8_size(text)} bytes, ~{estimate_tokens(text)} tokens",
            "merged text: " + (repr(snippet) if text else "(empty)")]
    return Memory(plan.target_dir, plan.project_root, tuple(sources), text, tuple(head + trace + tail))


def load_memory(
    target_dir: Path,
    settings: Settings,
    reader: Reader = read_memory_file,
    is_root: Callable[[str], bool] | None = None,
    withheld: Withheld | None = None,
) -> Memory:
    """The effective memory for TARGET_DIR (an existing, resolved directory). Files over
    `settings.max_file_bytes` are not read (see `files.read_memory_file`). The project root is
    the nearest directory holding one of `settings.boundary_markers` unless IS_ROOT is given.
    WITHHELD: imports not to read (a chain file not to read is READER's to refuse)."""
    if reader is read_memory_file:
        reader = partial(read_memory_file, max_bytes=settings.max_file_bytes)
    if is_root is None:
        is_root = partial(has_marker, markers=settings.boundary_markers)
    return merge_plan(plan_chain(target_dir, settings, is_root), reader, settings.boundary_markers,
                      settings.import_format, withheld)
