"""memory_lens.lsp.convert: URIs and paths, raw params, and positions in the client's encoding."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from memory_lens.lsp.convert import (
    client_column,
    first_object,
    json_values,
    line_text,
    lines_range,
    path_to_uri,
    text_document_uri,
    uri_to_path,
    utf16_len,
)

UTF8, UTF16, UTF32 = types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32


@pytest.mark.parametrize("uri, path", [
    ("file:///tmp/proj/GEMINI.md", Path("/tmp/proj/GEMINI.md")),
    ("file:///tmp/my%20proj/%231/%C3%BC/GEMINI.md", Path("/tmp/my proj/#1/ü/GEMINI.md")),
    ("file:///tmp/my%20proj/ü/GEMINI.md", Path("/tmp/my proj/ü/GEMINI.md")),
    ("untitled:Untitled-1", None),
    ("vscode-vfs://github/o/r/GEMINI.md", None),
    ("not a uri", None),
    ("", None),
    (None, None),
    (5, None),
    # Paths the system cannot name are no paths at all: like non-file URIs.
    ("file:///tmp/a%00b/GEMINI.md", None),
    ("file:///tmp/" + "a" * 300 + "/GEMINI.md", None),
    ("file:///tmp/" + "/".join(["b" * 200] * 25) + "/GEMINI.md", None),
])
def test_uri_to_path(uri: object, path: Path | None) -> None:
    assert uri_to_path(uri) == path  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["/tmp/proj/GEMINI.md", "/tmp/my proj/#1/ü/GEMINI.md", "/tmp/100%/x.md"])
def test_path_to_uri_round_trips(path: str) -> None:
    uri = path_to_uri(Path(path))
    assert uri.startswith("file:///") and " " not in uri and "#" not in uri
    assert uri == path_to_uri(path)
    assert uri_to_path(uri) == Path(path)


def test_json_values() -> None:
    Point = namedtuple("Point", ["x", "y"])
    Wrapper = namedtuple("Wrapper", ["textDocument", "items"])
    raw = Wrapper(textDocument=Point(1, [Point(2, 3)]), items=(1, "a", None))
    assert json_values(raw) == {"textDocument": {"x": 1, "y": [{"x": 2, "y": 3}]}, "items": [1, "a", None]}
    position = types.Position(line=1, character=2)
    assert json_values({"range": types.Range(start=position, end=position)}) == {
        "range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 2}}}
    assert json_values(types.TextDocumentIdentifier(uri="file:///x")) == {"uri": "file:///x"}
    for value in (None, 1, 1.5, "s", True):
        assert json_values(value) == value


@pytest.mark.parametrize("args, expected", [
    ([{"uri": "file:///x"}], {"uri": "file:///x"}),
    ([], {}),
    (None, {}),
    ([None], {}),
    ({"text": "x"}, {"text": "x"}),
])
def test_first_object(args: object, expected: dict) -> None:
    assert first_object(args) == expected


@pytest.mark.parametrize("args", [[1], ["text"], [{"a": 1}, {"b": 2}], [[{"a": 1}]], "text", 5])
def test_first_object_rejects(args: object) -> None:
    with pytest.raises(JsonRpcInvalidParams):
        first_object(args)


def test_text_document_uri() -> None:
    Doc = namedtuple("Doc", ["uri"])
    Params = namedtuple("Params", ["textDocument"])
    assert text_document_uri({"textDocument": {"uri": "file:///x"}}) == "file:///x"
    assert text_document_uri(Params(Doc("untitled:1"))) == "untitled:1"
    for bad in ({}, None, [], "file:///x", {"textDocument": {"uri": ""}}, {"textDocument": {"uri": 1}},
                {"textDocument": "file:///x"}, {"uri": "file:///x"}):
        with pytest.raises(JsonRpcInvalidParams):
            text_document_uri(bad)


def test_utf16_len() -> None:
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("café") == 4
    assert utf16_len("a😀b") == 4


@pytest.mark.parametrize("line, chars, utf8, utf16, utf32", [
    ("- plain ascii", 7, 7, 7, 7),
    ("- café au lait", 7, 8, 7, 7),
    ("- 😀 smile", 4, 7, 5, 4),
    ("- 😀 smile", 99, len("- 😀 smile".encode()), 10, 9),
    ("", 3, 0, 0, 0),
])
def test_client_column(line: str, chars: int, utf8: int, utf16: int, utf32: int) -> None:
    assert client_column(line, chars, UTF8) == utf8
    assert client_column(line, chars, "utf-8") == utf8
    assert client_column(line, chars, UTF16) == utf16
    assert client_column(line, chars, None) == utf16  # the LSP default
    assert client_column(line, chars, UTF32) == utf32


def test_line_text() -> None:
    lines = ["a\n", "b\r\n", "c\r", "d"]
    assert [line_text(lines, i) for i in range(4)] == ["a", "b", "c", "d"]
    assert line_text(lines, 4) == "" and line_text(lines, -1) == ""


def test_lines_range() -> None:
    lines = ["# Title\n", "- café 😀\n", "  more\r\n"]
    rng = lines_range(lines, 1, 2, UTF16)
    assert (rng.start.line, rng.start.character, rng.end.line, rng.end.character) == (1, 0, 2, 6)
    one = lines_range(lines, 1, 1, UTF8)
    assert (one.end.line, one.end.character) == (1, len("- café 😀".encode()))
    assert lines_range(lines, 1, 1, UTF16).end.character == 9
    clamped = lines_range([], -1, -1, UTF16)
    assert (clamped.start.line, clamped.end.line, clamped.end.character) == (0, 0, 0)
