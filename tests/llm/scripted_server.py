"""A local OpenAI-compatible HTTP server, scripted per test, for driving the real openai client.

Each test queues the responses the server gives, in order: chat completions with usage blocks,
HTTP errors with headers (429 + Retry-After), delays longer than the client's timeout. Or a
``responder`` function answers from the request (a scripted "model" that reads the prompt).
Every request's JSON body (and arrival time) is kept for assertions, and ``billed`` adds up the
usage blocks of the answers the server actually sent: the server's side of the bill.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Scripted:
    status: int = 200
    body: Any = None
    headers: dict = field(default_factory=dict)
    delay_s: float = 0.0


def completion(text: str, prompt_tokens: int | None = 100, completion_tokens: int | None = 50,
               cached_tokens: int | None = None, reasoning_tokens: int | None = None, model: str = "test-model",
               finish_reason: str = "stop", usage: bool = True) -> dict:
    body = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish_reason}],
    }
    if usage:
        block: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                 "total_tokens": (prompt_tokens or 0) + (completion_tokens or 0)}
        if cached_tokens is not None:
            block["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
        if reasoning_tokens is not None:
            block["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        body["usage"] = block
    return body


def error(status: int, message: str = "scripted failure", headers: dict | None = None, delay_s: float = 0.0) -> Scripted:
    return Scripted(status, {"error": {"message": message, "type": "server_error", "code": None}}, headers or {}, delay_s)


class ScriptedServer:
    def __init__(self, models: tuple[str, ...] = ("test-model",)):
        self.queue: deque[Scripted] = deque()
        self.requests: list[dict] = []
        self.arrived: list[float] = []
        self.billed = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0}
        self.headers: list[dict] = []
        self.models: list = list(models)  # names, or /models entries (dicts: id, root, ...)
        self.responder: Callable[[dict], Any] | None = None
        self.in_flight = self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> "ScriptedServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def push(self, *items: Any) -> None:
        """Queue responses: a completion dict (200) or a Scripted (status, body, headers, delay)."""
        for item in items:
            self.queue.append(item if isinstance(item, Scripted) else Scripted(body=item))

    def reply(self, text: str, **usage: Any) -> None:
        self.push(completion(text, **usage))

    def next_response(self, request: dict) -> Scripted:
        with self._lock:
            self.requests.append(request)
            self.arrived.append(time.time())
            if self.queue:
                return self.queue.popleft()
        if self.responder is not None:
            answer = self.responder(request)
            return answer if isinstance(answer, Scripted) else Scripted(body=answer)
        return error(599, "the test script has no response left for this request")

    def bill(self, scripted: Scripted) -> None:
        """Count an answer as sent: its usage block is what the endpoint charges for."""
        usage = scripted.body.get("usage") if scripted.status == 200 and isinstance(scripted.body, dict) else None
        if not usage:
            return
        with self._lock:
            self.billed["calls"] += 1
            self.billed["prompt_tokens"] += usage.get("prompt_tokens") or 0
            self.billed["completion_tokens"] += usage.get("completion_tokens") or 0
            self.billed["cached_tokens"] += (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _handler(server: ScriptedServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep pytest's output clean
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                data = [{"object": "model", "created": 0, "owned_by": "test",
                         **(entry if isinstance(entry, dict) else {"id": entry})} for entry in server.models]
                self._send(Scripted(body={"object": "list", "data": data}))
            else:
                self._send(error(404, f"no route {self.path}"))

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            request = json.loads(self.rfile.read(length) or b"{}")
            server.headers.append({name.lower(): value for name, value in self.headers.items()})
            if not self.path.endswith("/chat/completions"):
                self._send(error(404, f"no route {self.path}"))
                return
            server.enter()
            try:
                scripted = server.next_response(request)
                if scripted.delay_s:
                    time.sleep(scripted.delay_s)
                if self._send(scripted):
                    server.bill(scripted)
            finally:
                server.leave()

        def _send(self, scripted: Scripted) -> bool:
            payload = json.dumps(scripted.body).encode()
            try:
                self.send_response(scripted.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in scripted.headers.items():
                    self.send_header(name, str(value))
                self.end_headers()
                self.wfile.write(payload)
                return True
            except (BrokenPipeError, ConnectionResetError):
                return False  # the client gave up (a scripted timeout): nothing was answered

    return Handler
