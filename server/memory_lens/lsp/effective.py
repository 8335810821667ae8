"""memory/effective: the merged memory an agent would load for a document.

Params `{"textDocument": {"uri"}, "annotated"?: bool, "agent"?: AGENT, "vscodeSettings"?: {ID: value}}`
(`vscodeSettings`: the VS Code chat settings copilot-vscode follows, docs/agents.md);
an agent other than gemini gets that agent's view (`core/agents`, the same as `memory-lens show --agent`). The result mirrors
`memory-lens show --format json` (camelCase), with file URIs, a token estimate, a `dirty`
flag on each source that is open with unsaved edits, and each source's `imports` tree. Non-`file:` URIs (untitled buffers) get the
global memory only, and so do file URIs the system cannot resolve (a `%00` in them, a name too
long). Files need not be open, nor exist: the nearest existing directory is used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from pygls.exceptions import JsonRpcInvalidParams

from memory_lens.core.agents import AGENTS, DEFAULT_AGENT, AgentView, agent_view, check_agent, gemini
from memory_lens.core.discovery import ChainPlan, Candidate, Scope, document_target
from memory_lens.core.merge import Memory, merge_plan
from memory_lens.lsp.convert import Serialized, json_values, path_to_uri, text_document_uri, uri_to_path
from memory_lens.lsp.protocol import EFFECTIVE_REQUEST

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer


def uri_target_dir(uri: str) -> Path | None:
    """The directory memory is loaded for, for the document at URI (`core.discovery.document_target`);
    None for non-file URIs and paths that cannot be used."""
    path = uri_to_path(uri)
    return None if path is None else document_target(path)


def memory_at(ls: MemoryLensServer, directory: Path | None) -> Memory:
    """The effective memory for DIRECTORY; the global memory only when there is none."""
    if directory is None:
        cands = tuple(Candidate(p, Scope.GLOBAL) for p in ls.settings.global_files())
        return merge_plan(ChainPlan(target_dir=Path("/"), project_root=None, candidates=cands), ls.store.read,
                          ls.settings.boundary_markers, ls.settings.import_format)
    return ls.store.memory_for(directory)


def memory_for_uri(ls: MemoryLensServer, uri: str) -> Memory:
    """The effective memory for URI (global memory only for non-file URIs)."""
    return memory_at(ls, uri_target_dir(uri))


def vscode_settings(ls: MemoryLensServer, data: dict[str, Any]) -> dict[str, Any] | None:
    """The VS Code chat settings for a request: the params' `vscodeSettings` (setting ID to value),
    else those the client answered to workspace/configuration (`Editor`), else None (the view
    reads `.vscode/settings.json`); JsonRpcInvalidParams when `vscodeSettings` is not an object."""
    given = data.get("vscodeSettings")
    if given is not None and not isinstance(given, dict):
        raise JsonRpcInvalidParams(message="'vscodeSettings' must be an object of VS Code setting IDs to values")
    return given if given is not None else ls.editor.chat_settings


def effective_result(ls: MemoryLensServer, uri: str, annotated: bool = False,
                     agent: str | None = None, chat_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """The memory/effective result for URI, as AGENT (default gemini) loads it, computed from the
    store (whose reads are checked against the disk on each use)."""
    if agent is not None and check_agent(agent) in FILE_AGENTS:
        return started_result(ls, uri, agent, chat_settings)
    directory = uri_target_dir(uri)
    if agent is not None and check_agent(agent) != DEFAULT_AGENT:
        return agent_result(ls, agent_view(agent, directory or Path.home(), ls.settings), directory)
    memory = memory_at(ls, directory)
    result = gemini_result(memory, directory)
    if annotated:
        result = {**result, "annotated": memory.annotated()}
    return with_dirty_flags(ls, [(s.path, s.text) for s in memory.sources], result)


_CAMEL = {"project_root": "projectRoot", "target_dir": "targetDir"}


def view_result(view: AgentView, directory: Path | None) -> Answer:
    """VIEW's one JSON (`AgentView.to_json`, what `memory-lens show --format json` prints) in the
    protocol's camelCase, each source with its `uri` and `dirty` False; `targetDir` null when the
    document has no directory. The same dict again for the same VIEW object (a kept view,
    `claude.load_view`), with its JSON made once (`sent`): callers copy before they change it."""
    key = (view.agent, str(directory))
    kept = _RESULTS.get(key)
    if kept is not None and kept[0] is view:
        return kept[1]
    data = Answer((_CAMEL.get(key, key), value) for key, value in view.to_json().items())
    if directory is None:
        data["targetDir"] = None
    data["sources"] = [{"uri": path_to_uri(s["path"]), **s, "dirty": False} for s in data["sources"]]
    data.paths = frozenset(s["path"] for s in data["sources"])
    if len(_RESULTS) >= RESULTS_KEPT:
        _RESULTS.clear()
    _RESULTS[key] = (view, data)
    return data


# The last answer per agent and directory, with the view it was made from: a kept view's answer
# (~200 sources with URIs for a project with 200 rules files) is not built again, nor serialized
# again (docs/performance.md).
RESULTS_KEPT = 64
_RESULTS: dict[tuple[str, str], tuple[AgentView, Answer]] = {}


class Answer(dict):
    """A `view_result` answer: a dict that keeps its JSON once it has been sent, and its
    sources' paths (what `agent_result` asks the open documents about)."""

    __slots__ = ("json", "paths")

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.json: Serialized | None = None
        self.paths: frozenset[str] = frozenset()


def sent(result: dict[str, Any]) -> Serialized:
    """RESULT in JSON, as the server sends it: `json.dumps` (~4x cheaper than pygls's generic
    serialization of a dict), made once for an `Answer` (a kept view's, asked for again and again)."""
    if not isinstance(result, Answer):
        return Serialized(json.dumps(result))
    if result.json is None:
        result.json = Serialized(json.dumps(result))
    return result.json


def gemini_result(memory: Memory, directory: Path | None) -> dict[str, Any]:
    """The memory/effective answer for MEMORY, every `dirty` flag False."""
    return view_result(gemini.view_of(memory), directory)


def gemini_sent(ls: MemoryLensServer, uri: str) -> Serialized:
    """memory/effective for URI as Gemini loads it (not annotated), in JSON: while the directory's
    memory holds (`MemoryStore.answer`), the JSON kept for it, joined from its pieces; else
    worked out and kept (unless a source is open with unsaved edits). The pieces: the glue of
    this answer, each source's JSON and each source's merged content JSON-escaped (the escaping
    of a concatenation is the concatenation of the escapings), shared between directories, so
    ~1,000 directories hold a few MB, not ~50 (docs/performance.md)."""
    directory = uri_target_dir(uri)
    if directory is None:
        return sent(effective_result(ls, uri))
    kept = ls.store.answer(directory)
    if kept is not None and not _dirty(ls, kept[1]):
        return Serialized("".join(kept[0]))
    memory = ls.store.memory_for(directory)
    result = gemini_result(memory, directory)
    flagged = with_dirty_flags(ls, [(s.path, s.text) for s in memory.sources], result)
    if flagged is not result:
        return sent(flagged)
    parts = _pieces(ls, result, [s.content for s in memory.sources if s.readable and s.content])
    ls.store.keep(directory, memory, (parts, tuple(str(s.path) for s in memory.sources)))
    return Serialized("".join(parts))


def _dirty(ls: MemoryLensServer, paths: tuple[str, ...]) -> bool:
    """Whether one of PATHS (memory files) is open with text other than the file's on disk."""
    docs = ls.open_memory_docs(among=set(paths))
    return any(doc.text != ls.store.read(path).text for path, doc in docs.items())


def _pieces(ls: MemoryLensServer, result: dict[str, Any], contents: list[str]) -> tuple[str, ...]:
    """RESULT's JSON (`json.dumps`'s) as pieces; CONTENTS: the merged contents `text` joins."""
    parts: list[str] = []
    glue = "{"
    for key, value in result.items():
        glue += json.dumps(key) + ": "
        if key == "text" and "\n\n".join(contents) == value:
            parts += (glue + '"', *_joined([ls.store.share(json.dumps(c)[1:-1]) for c in contents], '\\n\\n'))
            glue = '"'
        elif key == "sources" and value:
            parts += (glue + "[", *_joined([ls.store.share(json.dumps(s)) for s in value], ", "))
            glue = "]"
        else:
            glue += json.dumps(value)
        glue += ", "
    parts.append(glue[:-2] + "}")
    return tuple(parts)


def _joined(pieces: list[str], separator: str) -> list[str]:
    """PIECES with SEPARATOR between them."""
    out = pieces[:1]
    for piece in pieces[1:]:
        out += (separator, piece)
    return out


def with_dirty_flags(ls: MemoryLensServer, texts: Iterable[tuple[Path, str]], result: dict[str, Any]) -> dict[str, Any]:
    """RESULT with `dirty` set on each source open with unsaved edits (TEXTS: each source's path
    and text on disk, in order); RESULT itself, not a copy, when there is none."""
    texts = list(texts)
    docs = ls.open_memory_docs(among={str(path) for path, _ in texts})
    if not docs:
        return result
    flags = [(doc := docs.get(path)) is not None and doc.text != text for path, text in texts]
    if not any(flags):
        return result
    return {**result, "sources": [{**s, "dirty": True} if dirty else s for s, dirty in zip(result["sources"], flags)]}


def agent_result(ls: MemoryLensServer, view: AgentView, directory: Path | None) -> dict[str, Any]:
    """memory/effective for claude, codex or wave, with the `dirty` flags. Non-file URIs are taken
    as the home directory."""
    result = view_result(view, directory)
    docs = ls.open_memory_docs(among=result.paths, any_file=True)
    if not docs:
        return result
    sources = []
    for source in result["sources"]:
        doc = docs.get(Path(source["path"]))
        dirty = doc is not None and doc.text != ls.store.read(Path(source["path"])).text
        sources.append({**source, "dirty": True} if dirty else source)
    return {**result, "sources": sources}


FILE_AGENTS = ("claude", "cursor", "copilot", "copilot-vscode")  # started in the workspace folder; their view depends on the document


def started_result(ls: MemoryLensServer, uri: str, agent: str,
                   chat_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """AGENT's view for the document at URI: started in the workspace folder that holds it (else
    the document's directory), plus what loads (claude, cursor) or matches (copilot) for the document."""
    path, directory = uri_to_path(uri), uri_target_dir(uri)
    if path is None or directory is None:
        return agent_result(ls, agent_view(agent, Path.home(), ls.settings, chat_settings=chat_settings), None)
    open_folders = ls.folders()  # resolved directories (`real_dir`), as DIRECTORY is
    folders = [f for f in open_folders if f == path or f in path.parents]
    start = max(folders, key=lambda f: len(f.parts)) if folders else directory
    read = path if path.is_file() else None
    return agent_result(ls, agent_view(agent, start, ls.settings, file=read, chat_settings=chat_settings,
                                       folders=open_folders or None), directory)


def register(server: MemoryLensServer) -> None:
    @server.feature(EFFECTIVE_REQUEST)
    def effective(ls: MemoryLensServer, params: Any) -> dict[str, Any]:
        uri = text_document_uri(params)
        data = json_values(params)
        agent = data.get("agent")
        if agent is not None and (not isinstance(agent, str) or agent not in AGENTS):
            raise JsonRpcInvalidParams(message=f"'agent' must be one of {', '.join(AGENTS)}")
        if (agent is None or agent == DEFAULT_AGENT) and not data.get("annotated"):
            return gemini_sent(ls, uri)
        return sent(effective_result(ls, uri, annotated=bool(data.get("annotated")), agent=agent,
                                     chat_settings=vscode_settings(ls, data)))
