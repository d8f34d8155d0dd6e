"""A fake Hugging Face Hub and inference endpoint on 127.0.0.1, for tests that must not leave the machine.

It speaks the few routes HuggingGraph uses, the way the Hub does: `GET /api/models` filtered by `pipeline_tag`,
sorted by downloads, trimmed to `expand`, and paginated with a `Link: <...>; rel="next"` header; `GET
/api/models/{id}` with the Hub's `X-Error-Code: RepoNotFound` on a miss. Any other route answers what a test
scripted for it (`reply`), so one server plays a Hub, a TGI server or a flaky provider. Every request is
recorded, so tests count calls and read headers instead of trusting the client.

Bounded: it listens on a free loopback port, handler sockets time out, scripted delays end as soon as the server
stops, and `stop` (or leaving the `with` block) joins every thread it started.
"""

from __future__ import annotations

import json
import os
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from huggingface_hub import constants


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    json: Any = None
    """A JSON body; `body` is sent instead when this is None."""
    body: bytes = b""
    content_type: str = "application/json"
    delay_s: float = 0.0
    """Seconds to wait before answering (cut short when the server stops), to play a slow endpoint."""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    """Header names in lower case."""
    body: bytes


class FakeHub:
    """A threaded HTTP server on 127.0.0.1 playing the Hub API and any scripted endpoint."""

    def __init__(self, models: list[dict[str, Any]] | None = None, page_size: int = 2) -> None:
        self.models = list(models or [])
        """Models as the Hub's API returns them (`id`, `pipeline_tag`, `downloads`, `likes`, `cardData`, ...)."""
        self.page_size = page_size
        """The most models one listing page holds, so small fixtures still span several pages."""
        self.requests: list[Recorded] = []
        self._scripts: dict[tuple[str, str], deque[Reply]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeHub:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    def reply(self, method: str, path: str, *replies: Reply) -> None:
        """Answer `method path` with `replies` in order; the last one keeps answering once the others are used."""
        with self._lock:
            self._scripts[(method, path)] = deque(replies)

    def requests_to(self, path: str, method: str | None = None) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path == path and method in (None, r.method)]

    # --- what the server does with a request (called on handler threads) ----------------------------------
    def answer(self, request: Recorded) -> Reply:
        with self._lock:
            self.requests.append(request)
            script = self._scripts.get((request.method, request.path))
            if script:
                return script.popleft() if len(script) > 1 else script[0]
        if request.method == "GET" and request.path == "/api/models":
            return self._listing(request.query)
        if request.method == "GET" and request.path.startswith("/api/models/"):
            return self._model(request.path.removeprefix("/api/models/"))
        return Reply(404, {"error": f"no route {request.method} {request.path}"})

    def wait(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _listing(self, query: dict[str, list[str]]) -> Reply:
        tag = _first(query, "pipeline_tag")
        found = [m for m in self.models if tag is None or m.get("pipeline_tag") == tag]
        if _first(query, "sort") == "downloads":
            found.sort(key=lambda m: -m.get("downloads", 0))
        start = int(_first(query, "cursor") or 0)
        size = min(int(_first(query, "limit") or self.page_size), self.page_size)
        page = [_expanded(m, query.get("expand")) for m in found[start : start + size]]
        headers = {}
        if start + size < len(found):
            next_query = urlencode({**query, "cursor": [str(start + size)]}, doseq=True)
            headers["Link"] = f'<{self.url}/api/models?{next_query}>; rel="next"'
        return Reply(json=page, headers=headers)

    def _model(self, model_id: str) -> Reply:
        model = next((m for m in self.models if m["id"] == model_id), None)
        if model is None:
            return Reply(404, {"error": "Repository not found"}, headers={"X-Error-Code": "RepoNotFound"})
        return Reply(json=model)


def _first(query: dict[str, list[str]], key: str) -> str | None:
    values = query.get(key)
    return values[0] if values else None


def _expanded(model: dict[str, Any], expand: list[str] | None) -> dict[str, Any]:
    """Only the properties a client asked for, as the Hub does when `expand` is given."""
    if not expand:
        return model
    return {key: value for key, value in model.items() if key == "id" or key in expand}


def _handler_for(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 5  # a client that stops sending cannot hold a thread

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            request = Recorded(
                method=self.command,
                path=url.path,
                query=parse_qs(url.query),
                headers={name.lower(): value for name, value in self.headers.items()},
                body=self.rfile.read(length),
            )
            reply = hub.answer(request)
            hub.wait(reply.delay_s)
            body = reply.body if reply.json is None else json.dumps(reply.json).encode()
            self.send_response(reply.status)
            for name, value in {"Content-Type": reply.content_type, **reply.headers}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: pytest shows failures, and request logs would carry the test tokens."""

    return Handler


def allow_loopback_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let huggingface_hub make requests in a process started with `HF_HUB_OFFLINE=1` (as CI is).

    huggingface_hub reads the variable once, at import, and then refuses every request; the tests only ever talk
    to the fake on 127.0.0.1, so they lift that for themselves. They also clear what would steer a client elsewhere
    or authenticate it (the variables, and a token saved by `hf auth login`), so a developer's setup cannot leak
    into a test or a test's expectations.
    """
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", os.devnull)
    for name in _STEERING_VARIABLES:
        monkeypatch.delenv(name, raising=False)


_STEERING_VARIABLES = (
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_ENDPOINT",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HF_OIDC_RESOURCE",
)
