"""memory_lens.lsp.compat: the private parts of pygls and watchfiles the server uses still behave as
it needs, with the versions installed. A pygls or watchfiles release that renames or changes one
fails here, not in a client's session."""

from __future__ import annotations

import io
import json
import re
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from pygls.exceptions import JsonRpcInvalidRequest

from memory_lens.core.settings import Settings
from memory_lens.lsp import compat
from memory_lens.lsp.app import build_server
from memory_lens.lsp.server import MemoryLensServer

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def _requirement(name: str) -> Requirement:
    deps = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    return next(r for r in map(Requirement, deps) if r.name == name)


@pytest.mark.parametrize("name", ["pygls", "watchfiles"])
def test_the_installed_version_is_one_pyproject_allows(name: str) -> None:
    assert _requirement(name).specifier.contains(version(name)), (name, version(name))


@pytest.fixture
def server() -> MemoryLensServer:
    return build_server(Settings())


class Capture(io.BytesIO):
    """A pygls writer that keeps what it is given."""

    def write(self, data: bytes) -> int:  # type: ignore[override]
        return super().write(data)

    def close(self) -> None:
        pass


def test_the_stop_event_is_set_by_shutdown(server: MemoryLensServer) -> None:
    assert not compat.stop_requested(server)  # before new_stop_event: pygls has none yet
    event = compat.new_stop_event(server)
    assert not compat.stop_requested(server) and not event.is_set()
    server.shutdown()
    assert event.is_set() and compat.stop_requested(server)


def test_send_error_writes_a_json_rpc_error_response(server: MemoryLensServer) -> None:
    out = Capture()
    server.protocol.set_writer(out)
    compat.send_error(server.protocol, 7, JsonRpcInvalidRequest(message="not now"))
    body = re.split(rb"\r\n\r\n", out.getvalue(), maxsplit=1)[1]
    answer = json.loads(body)
    assert answer["id"] == 7 and answer["error"]["code"] == JsonRpcInvalidRequest.CODE
    assert answer["error"]["message"] == "not now" and "result" not in answer


def test_shutdown_requested_turns_true_when_pygls_handles_shutdown(server: MemoryLensServer) -> None:
    assert not compat.shutdown_requested(server.protocol)
    for _ in server.protocol.lsp_shutdown():  # pygls's own shutdown handler (a generator)
        pass
    assert compat.shutdown_requested(server.protocol)


def test_rust_notify_reports_a_file_written_in_a_watched_directory(tmp_path: Path) -> None:
    notify_class = compat.rust_notify()
    notify = notify_class([str(tmp_path)], False, False, 0, False, True)  # as notify.py builds it
    with notify:
        (tmp_path / "GEMINI.md").write_text("- x\n", encoding="utf-8")
        changes = notify.watch(100, 20, 10_000, None)  # returns on the first batch of changes
    assert isinstance(changes, set)
    assert str(tmp_path / "GEMINI.md") in {path for _, path in changes}


@pytest.mark.parametrize("pieces", [["a", "b", "\n", "\r\n", "\r", "\U0001f60b", "\u00e9", "\u2028", "\x0c", " "],
                                    ["a", "b", "\n", "\n\n", "\U0001f60b", "\u00e9", " "], ["ab", "\n", "c\n"]])
def test_incremental_changes_give_the_text_pygls_gives(pieces: list[str]) -> None:
    """`compat.apply_incremental_change` against pygls's own, on random small documents with every
    kind of line break (and with "\n" alone, which it handles without splitting lines), ranges
    past the end, reversed and empty, in each position encoding."""
    import random

    from lsprotocol import types
    from pygls.workspace import PositionCodec, TextDocument

    rng = random.Random(23)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        codec = PositionCodec(encoding=rng.choice(list(types.PositionEncodingKind)))
        at = lambda: types.Position(line=rng.randint(0, 6), character=rng.randint(0, 8))  # noqa: E731
        change = types.TextDocumentContentChangePartial(range=types.Range(start=at(), end=at()),
                                                        text=rng.choice(["", "x", "y\nz", "\U0001f60b"]))
        theirs = TextDocument("file:///m.md", text, position_codec=codec)
        ours = TextDocument("file:///m.md", text, position_codec=codec)
        compat.PYGLS_INCREMENTAL_CHANGE(theirs, change)
        compat.apply_incremental_change(ours, change)
        assert ours.source == theirs.source, (text, change)


def test_incremental_changes_to_a_large_text_give_the_text_pygls_gives() -> None:
    """The same on a text of many lines, some longer than the stretch counted at a time, ranges
    anywhere in it and past its end, and a chain of changes each made to the last one's result."""
    import random

    from lsprotocol import types
    from pygls.workspace import PositionCodec, TextDocument

    rng = random.Random(8)
    text = "".join("x" * rng.choice([0, 1, 40, 20_000]) + "\n" for _ in range(3000)) + "tail"
    theirs = TextDocument("file:///m.md", text, position_codec=PositionCodec())
    ours = TextDocument("file:///m.md", text, position_codec=PositionCodec())
    for _ in range(200):
        at = lambda: types.Position(line=rng.randint(0, 3100), character=rng.randint(0, 25_000))  # noqa: E731
        change = types.TextDocumentContentChangePartial(range=types.Range(start=at(), end=at()),
                                                        text=rng.choice(["", "y\n", "- inserted\nz"]))
        compat.PYGLS_INCREMENTAL_CHANGE(theirs, change)
        compat.apply_incremental_change(ours, change)
        assert ours.source == theirs.source, change
