"""Every name the client or users see is in lsp/protocol.py, and client-vscode/src/protocol.ts says
the same: the same names with the same values, no name on one side only (save the client's own
palette commands, views and context key). A rename on either side fails here."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from memory_lens.core.checks import SEVERITY_OF
from memory_lens.lsp import protocol
from memory_lens.lsp.config import ServerConfig, parse_config

REPO = Path(__file__).resolve().parents[2]
CLIENT_PROTOCOL = REPO / "client-vscode" / "src" / "protocol.ts"
MANIFEST = REPO / "client-vscode" / "package.json"

# Names only the client has: its palette commands, its views and a context key of its own.
CLIENT_ONLY = {"CLIENT_COMMANDS", "PANEL_VIEW_ID", "NOTES_VIEW_ID", "AGENTS_VIEW_ID", "NOTES_SEARCH_CONTEXT",
               "EFFECTIVE_SCHEME"}
# Settings only the client reads (the server is started by, or traced by, the client).
CLIENT_ONLY_SETTINGS = {"server.command", "trace.server", "agent"}

pytestmark = pytest.mark.skipif(not CLIENT_PROTOCOL.exists(), reason="no client checkout")

_CONST = re.compile(r"^export const ([A-Z][A-Z0-9_]*)\b[^=]*=\s*(.*?);\s*$", re.M | re.S)


def client_names(text: str) -> dict[str, Any]:
    """NAME -> value of the `export const` declarations of protocol.ts: strings, arrays of strings
    and names (spreads included), and objects of strings (`{key: 'value'} as const`)."""
    out: dict[str, Any] = {}
    for name, expr in _CONST.findall(text):
        expr = re.sub(r"\s+as const$", "", expr.strip())
        out[name] = _value(expr, out, name)
    return out


def _value(expr: str, known: dict[str, Any], name: str) -> Any:
    if expr.startswith("'") and expr.endswith("'"):
        return expr[1:-1]
    if expr.startswith("["):
        items: list[str] = []
        for item in (i.strip() for i in expr[1:-1].split(",")):
            if not item:
                continue
            if item.startswith("..."):
                items.extend(known[item[3:]])
            else:
                items.append(_value(item, known, name))
        return items
    if expr.startswith("{"):
        return dict(re.findall(r"(\w+):\s*'([^']*)'", expr))
    if expr in known:
        return known[expr]
    raise AssertionError(f"protocol.ts: {name} = {expr[:60]!r} is not a literal this test reads")


def server_names() -> dict[str, Any]:
    """The public constants of lsp/protocol.py (upper-case names: strings and lists of strings)."""
    return {name: value for name, value in vars(protocol).items()
            if name.isupper() and isinstance(value, (str, list))}


def mirror_problems(server: dict[str, Any], client: dict[str, Any]) -> list[str]:
    """What differs between the two modules (client-only names apart)."""
    problems = [f"{n}: only in protocol.py" for n in sorted(server.keys() - client.keys())]
    problems += [f"{n}: only in protocol.ts" for n in sorted(client.keys() - server.keys() - CLIENT_ONLY)]
    problems += [f"{n}: {server[n]!r} in protocol.py, {client[n]!r} in protocol.ts"
                 for n in sorted(server.keys() & client.keys()) if server[n] != client[n]]
    problems += [f"{n}: listed as client-only but protocol.py has it" for n in sorted(CLIENT_ONLY & server.keys())]
    problems += [f"{n}: listed as client-only but protocol.ts lacks it" for n in sorted(CLIENT_ONLY - client.keys())]
    return problems


def test_server_and_client_protocol_modules_have_the_same_names_and_values() -> None:
    client = client_names(CLIENT_PROTOCOL.read_text(encoding="utf-8"))
    assert mirror_problems(server_names(), client) == []


def test_a_rename_or_a_change_on_either_side_is_reported() -> None:
    server = server_names()
    client = client_names(CLIENT_PROTOCOL.read_text(encoding="utf-8"))
    renamed = {("CMD_SAVE_ENTRY" if n == "CMD_SAVE" else n): v for n, v in client.items()}
    assert mirror_problems(server, renamed) == ["CMD_SAVE: only in protocol.py", "CMD_SAVE_ENTRY: only in protocol.ts"]
    dropped = {n: v for n, v in server.items() if n != "REMOVE_DUPLICATE_TITLE"}
    assert mirror_problems(dropped, client) == ["REMOVE_DUPLICATE_TITLE: only in protocol.ts"]
    changed = {**client, "DIAGNOSTIC_CODES": client["DIAGNOSTIC_CODES"][:-1]}
    assert [p.split(":")[0] for p in mirror_problems(server, changed)] == ["DIAGNOSTIC_CODES"]


def test_the_diagnostic_codes_are_the_codes_the_core_computes() -> None:
    assert sorted(protocol.DIAGNOSTIC_CODES) == sorted(SEVERITY_OF)


# A valid value, different from the default, for every settings key the server reads.
SAMPLES: dict[str, Any] = {
    "filenames": ["AGENTS.md"], "globalDir": "/tmp/memory-lens-elsewhere", "tokenBudget": 1234,
    "maxFileSize": 4321, "agents": ["codex"], "debug": True, "notes.layout": "aicoder",
    "notes.globalDir": "/tmp/memory-lens-notes", "noteDocuments": True, "followOutsideLinks": True,
    "save.preview": True,
}


def _nested(key: str, value: Any) -> dict[str, Any]:
    head, _, rest = key.partition(".")
    return {head: _nested(rest, value) if rest else value}


def test_every_settings_key_in_protocol_is_read_by_the_server_and_every_setting_has_a_key() -> None:
    assert sorted(SAMPLES) == sorted(protocol.SETTINGS_KEYS)
    base = ServerConfig()
    reached: set[str] = set()
    for key in protocol.SETTINGS_KEYS:
        warnings: list[str] = []
        parsed = parse_config({protocol.SETTINGS_SECTION: _nested(key, SAMPLES[key])}, base, warnings.append)
        changed = {f.name for f in dataclasses.fields(ServerConfig) if getattr(parsed, f.name) != getattr(base, f.name)}
        assert changed and not warnings, (key, warnings)
        reached |= changed
    assert reached == {f.name for f in dataclasses.fields(ServerConfig)} - {"trusted"}


def test_the_client_contributes_only_settings_the_server_reads_or_the_client_itself_uses() -> None:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    prefix = protocol.SETTINGS_SECTION + "."
    contributed = {k[len(prefix):] for k in manifest["contributes"]["configuration"]["properties"]}
    assert contributed - CLIENT_ONLY_SETTINGS <= set(protocol.SETTINGS_KEYS)
    assert CLIENT_ONLY_SETTINGS <= contributed
