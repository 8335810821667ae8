"""Conversions between the core's world (paths, 1-based lines, characters) and LSP's (URIs,
0-based positions in the client's position encoding), between raw JSON params and dicts, and
results already in JSON (`Serialized`)."""

from __future__ import annotations

import errno
import functools
import os
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path, uri_scheme


def uri_to_path(uri: str) -> Path | None:
    """The filesystem path of a `file:` URI, else None: untitled buffers, other schemes, and
    paths the system cannot name (a NUL byte, `%00`; a name or path too long), so that such a
    URI is treated like any non-file URI rather than failing every path operation later."""
    if not isinstance(uri, str):
        return None
    return _uri_to_path(uri)


# Both conversions are hot (every request, every diagnostic): remember recent ones.
@functools.lru_cache(maxsize=4096)
def _uri_to_path(uri: str) -> Path | None:
    if uri_scheme(uri) != "file":
        return None
    fs = to_fs_path(uri)
    return Path(fs) if fs and nameable(fs) else None


def nameable(path: str) -> bool:
    """False when the system cannot name PATH at all: a NUL byte in it, or a name or a path
    longer than its limits (ENAMETOOLONG). A path that merely does not exist is nameable."""
    if "\0" in path:
        return False
    try:
        os.lstat(path)
    except OSError as err:
        return err.errno != errno.ENAMETOOLONG
    except ValueError:  # anything else the system refuses to take as a path
        return False
    return True


@functools.lru_cache(maxsize=4096)
def path_to_uri(path: Path | str) -> str:
    return from_fs_path(os.fspath(path)) or Path(path).as_uri()


def json_values(value: Any) -> Any:
    """Params as plain JSON values: pygls hands custom params over as namedtuples or attrs."""
    if hasattr(value, "_asdict"):
        return {k: json_values(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: json_values(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_values(v) for v in value]
    if hasattr(value, "__attrs_attrs__"):
        from lsprotocol import converters

        return converters.get_converter().unstructure(value)
    return value


def plain_params_converter() -> Any:
    """pygls's converter, except that the params of Memory Lens's own requests stay plain dicts.

    pygls turns the params of a method it does not know into namedtuples, making a namedtuple
    class for every object of every message: that cost more than answering `memory/effective`.
    Handlers read params with `json_values` or `text_document_uri`, which take either."""
    from pygls.protocol import default_converter
    from pygls.protocol.json_rpc import JsonRPCRequestMessage

    from memory_lens.lsp.protocol import EFFECTIVE_REQUEST, EXPLAIN_REQUEST

    converter = default_converter()
    namedtuple_params = converter.get_structure_hook(JsonRPCRequestMessage)

    def structure_request(obj: dict, cls: type) -> Any:
        if obj.get("method") in (EFFECTIVE_REQUEST, EXPLAIN_REQUEST):  # their keys may be no identifiers
            return cls(**obj)
        return namedtuple_params(obj, cls)

    converter.register_structure_hook(JsonRPCRequestMessage, structure_request)
    return converter


def first_object(args: Any) -> dict:
    """The single object argument of a command (`arguments: [{...}]`), or InvalidParams."""
    args = json_values(args)
    if isinstance(args, list):
        if len(args) > 1:
            raise JsonRpcInvalidParams(message="expected one object argument, not several")
        args = args[0] if args else None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise JsonRpcInvalidParams(message="expected one object argument, e.g. [{\"uri\": \"file:///...\"}]")
    return args


def text_document_uri(params: Any) -> str:
    """`params.textDocument.uri` as a string, or a JSON-RPC InvalidParams error."""
    data = json_values(params)
    doc = data.get("textDocument") if isinstance(data, dict) else None
    uri = doc.get("uri") if isinstance(doc, dict) else None
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams(message='expected params {"textDocument": {"uri": "<file URI>"}}')
    return uri


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def client_column(line_text: str, chars: int, encoding: Any) -> int:
    """Column CHARS (in code points) of LINE_TEXT in the client's position encoding."""
    prefix = line_text[:chars]
    if prefix.isascii() or encoding in (types.PositionEncodingKind.Utf32, "utf-32"):
        return len(prefix)  # one unit per character in every encoding
    if encoding in (types.PositionEncodingKind.Utf8, "utf-8"):
        return len(prefix.encode("utf-8"))
    return utf16_len(prefix)


def line_text(lines: list[str], line: int) -> str:
    return lines[line].rstrip("\r\n") if 0 <= line < len(lines) else ""


def lines_range(lines: list[str], start: int, end: int, encoding: Any) -> types.Range:
    """A range from the start of 0-based line START to the end of line END (inclusive)."""
    end_text = line_text(lines, end)
    return types.Range(
        start=types.Position(line=max(start, 0), character=0),
        end=types.Position(line=max(end, 0), character=client_column(end_text, len(end_text), encoding)),
    )


class Serialized(str):
    """A request's result already in JSON (ASCII, as `json.dumps` writes it): a handler returns
    it to have it sent as it is, not unstructured and serialized again (`memory/effective`'s
    kept answers, ~90 KB: docs/performance.md)."""
