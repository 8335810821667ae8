"""memory/explain: which agent loads which instruction file for a document, and why not.

Params `{"textDocument": {"uri"}, "agents"?: [AGENT, ...], "vscodeSettings"?: {ID: value}}`
(`vscodeSettings` as memory/effective's). The result is `memory-lens explain
PATH --format json` (`core/explain.py`): `{"path", "agents", "files": [{"path", "uri",
"statuses": {AGENT: {"status", "reason"?, "matchedBy"?, "cutAt"?}}}]}`, each file with its URI.
The document need not be open nor saved: a path that does not exist yet is a file in the nearest
existing directory. Gemini's part comes from the store's cached chain, as `memory/effective`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from memory_lens.core.agents import AGENTS
from memory_lens.core.discovery import TargetError
from memory_lens.core.explain import explain
from memory_lens.lsp.effective import vscode_settings
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
        matrix = explain(path, ls.settings, agents, gemini_memory=ls.store.memory_for, nearest_existing=True,
                         chat_settings=chat_settings, folders=ls.folders() or None)
    except TargetError as err:
        raise JsonRpcInvalidParams(message=str(err)) from None
    data = matrix.to_json()
    data["files"] = [{"path": f["path"], "uri": path_to_uri(f["path"]), "statuses": f["statuses"]}
                     for f in data["files"]]
    return data


def register(server: MemoryLensServer) -> None:
    @server.feature(EXPLAIN_REQUEST)
    def explain_request(ls: MemoryLensServer, params: Any) -> dict[str, Any]:
        uri = text_document_uri(params)
        agents = json_values(params).get("agents")
        if agents is not None and (not isinstance(agents, list) or not agents
                                   or not all(isinstance(a, str) and a in AGENTS for a in agents)):
            raise JsonRpcInvalidParams(message=f"'agents' must be a list of {', '.join(AGENTS)}")
        return explain_result(ls, uri, agents, vscode_settings(ls, json_values(params)))
