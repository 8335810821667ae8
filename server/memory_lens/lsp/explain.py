"""memory/explain: which agent loads which instruction file for a document, and why not.

Params `{"textDocument": {"uri"}, "agents"?: [AGENT, ...], "vscodeSettings"?: {ID: value}}`
(`vscodeSettings` as memory/effective's). The result is `memory-lens explain
PATH --format json` (`core/explain.py`): `{"path", "agents", "files": [{"path", "uri",
"statuses": {AGENT: {"status", "reason"?, "matchedBy"?, "cutAt"?}}}]}`, each file with its URI.
The document need not be open nor saved: a path that does not exist yet is a file in the nearest
existing directory. Gemini's part comes from the store's cached chain, as `memory/effective`'s.

The editor asks again and again for the open file: the answer and its JSON are kept (`Kept`)
while every path its working out looked at is as it was and the store's Gemini memory for the
directory is the same (docs/performance.md, target: explain.open_file.p99_ms <= 10).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from pygls.exceptions import JsonRpcInvalidParams

from memory_lens.core.agents import AGENTS
from memory_lens.core.agents.common import Kept, look
from memory_lens.core.discovery import TargetError
from memory_lens.core.explain import explain, where
from memory_lens.core.merge import Memory
from memory_lens.lsp.effective import Answer, sent, vscode_settings
from memory_lens.lsp.convert import json_values, path_to_uri, text_document_uri, uri_to_path
from memory_lens.lsp.protocol import EXPLAIN_REQUEST

if TYPE_CHECKING:
    from memory_lens.lsp.server import MemoryLensServer


def explain_result(ls: MemoryLensServer, uri: str, agents: list[str] | None = None,
                   chat_settings: dict[str, Any] | None = None) -> dict[str, Any]:
    """The matrix for the document at URI (a `file:` URI), each file with its `uri`."""
    path = uri_to_path(uri)
    if path is None:
        raise JsonRpcInvalidParams(message=f"memory/explain needs a file: URI, not {uri[:80]!r}")
    try:
        asked, file, target, begin = where(path, nearest_existing=True)
    except TargetError as err:
        raise JsonRpcInvalidParams(message=str(err)) from None
    folders = ls.folders() or None
    key = (asked, file, target, tuple(agents or ()), json.dumps(chat_settings, sort_keys=True, default=repr),
           None if folders is None else tuple(folders), ls.settings)
    return _KEPT.get(key, lambda: _answer(ls, asked, agents, chat_settings, folders))


# The last 16 answers by document, agents, chat settings, folders and settings (3-190 KB of JSON
# each, made once: `sent`), kept while what they looked at is as it was.
_KEPT = Kept(16)


def _answer(ls: MemoryLensServer, path: Path, agents: list[str] | None, chat_settings: dict[str, Any] | None,
            folders: list[Path] | None) -> Answer:
    matrix = explain(path, ls.settings, agents, gemini_memory=_gemini_memory(ls), nearest_existing=True,
                     chat_settings=chat_settings, folders=folders)
    data = Answer(matrix.to_json())
    data["files"] = [{"path": f["path"], "uri": path_to_uri(f["path"]), "statuses": f["statuses"]}
                     for f in data["files"]]
    return data


def _gemini_memory(ls: MemoryLensServer) -> Callable[[Path], Memory]:
    """The store's Gemini memory for a directory, `look`ed at: the store checks its chain against
    the disk (its settings, its files, their imports) on each use; a kept answer holds while it
    gives the same memory."""
    def probe(directory: str) -> tuple[Memory]:
        return (ls.store.memory_for(Path(directory)),)

    def memory(directory: Path) -> Memory:
        got = ls.store.memory_for(directory)
        look(directory, probe, now=(got,))
        return got
    return memory


def register(server: MemoryLensServer) -> None:
    @server.feature(EXPLAIN_REQUEST)
    def explain_request(ls: MemoryLensServer, params: Any) -> Any:
        uri = text_document_uri(params)
        agents = json_values(params).get("agents")
        if agents is not None and (not isinstance(agents, list) or not agents
                                   or not all(isinstance(a, str) and a in AGENTS for a in agents)):
            raise JsonRpcInvalidParams(message=f"'agents' must be a list of {', '.join(AGENTS)}")
        return sent(explain_result(ls, uri, agents, vscode_settings(ls, json_values(params))))
