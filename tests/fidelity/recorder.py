"""A model API stand-in on 127.0.0.1: records every request body, answers with the smallest
valid streamed reply in the wire format asked for, so an agent CLI ends its turn and exits 0.

Anthropic Messages (`/v1/messages`), OpenAI Responses (`/v1/responses`), OpenAI Chat Completions
(`/v1/chat/completions`) and Gemini (`:streamGenerateContent`). `read_first`: answer the first
Messages request that offers tools with a `tool_use` of Claude Code's `Read` tool on that path, to
record what it attaches after a read. It listens on 127.0.0.1 only; nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _sse(events: list[tuple[str | None, dict]]) -> bytes:
    out = []
    for name, data in events:
        out.append((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


def anthropic_reply(model: str, tool_read: str | None) -> bytes:
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}
    if tool_read is None:
        block: dict = {"type": "text", "text": ""}
        delta: dict = {"type": "text_delta", "text": "ok"}
        stop = "end_turn"
    else:
        block = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps({"file_path": tool_read})}
        stop = "tool_use"
    return _sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def responses_reply() -> bytes:
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}]}
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [item],
                "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                          "input_tokens_details": {"cached_tokens": 0},
                          "output_tokens_details": {"reasoning_tokens": 0}}}
    return _sse([
        ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress",
                                                                         "output": []}}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": response}),
    ])


def chat_reply(model: str) -> bytes:
    """OpenAI Chat Completions, streamed: one `ok` and a stop."""
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": model}
    return _sse([
        (None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"},
                                      "finish_reason": None}]}),
        (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}),
    ]) + b"data: [DONE]\n\n"


def gemini_reply() -> bytes:
    return _sse([(None, {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]},
                                         "finishReason": "STOP", "index": 0}],
                         "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                           "totalTokenCount": 2}})])


class Recorder:
    """`with Recorder() as rec:` serves on `rec.url`; `rec.requests` holds (path, body) pairs."""

    def __init__(self, read_first: str | None = None) -> None:
        self.requests: list[tuple[str, Any]] = []
        self.read_first = read_first
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._send(200, b"{}", "application/json")

            def do_HEAD(self) -> None:
                self._send(200, b"", "application/json")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    body = json.loads(raw or b"null")
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                recorder.requests.append((self.path, body))
                self._send(200, *recorder.answer(self.path, body))

            def _send(self, code: int, data: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(self, path: str, body: Any) -> tuple[bytes, str]:
        body = body if isinstance(body, dict) else {}
        if path.startswith("/v1/messages") and "count_tokens" in path:
            return b'{"input_tokens": 1}', "application/json"
        if path.startswith("/v1/messages"):
            read = None
            if self.read_first and body.get("tools"):
                read, self.read_first = self.read_first, None
            if not body.get("stream"):
                text = [{"type": "text", "text": "ok"}]
                return json.dumps({"id": "msg_1", "type": "message", "role": "assistant", "content": text,
                                   "model": body.get("model", "m"), "stop_reason": "end_turn",
                                   "usage": {"input_tokens": 1, "output_tokens": 1}}).encode(), "application/json"
            return anthropic_reply(body.get("model", "m"), read), "text/event-stream"
        if path.startswith("/v1/responses"):
            return responses_reply(), "text/event-stream"
        if path.startswith("/v1/chat/completions"):
            return chat_reply(body.get("model", "m")), "text/event-stream"
        if "streamGenerateContent" in path:
            return gemini_reply(), "text/event-stream"
        if "generateContent" in path or "countTokens" in path:
            return json.dumps({"totalTokens": 1, **json.loads(gemini_reply()[6:])}).encode(), "application/json"
        return b"{}", "application/json"

    def __enter__(self) -> Recorder:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
