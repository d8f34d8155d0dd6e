"""A fake Hugging Face Hub and inference endpoint on 127.0.0.1, for tests that must not leave the machine.

It speaks the few routes HuggingGraph uses, the way the Hub does: `GET /api/models` filtered by `pipeline_tag`,
sorted by downloads, trimmed to `expand`, and paginated with a `Link: <...>; rel="next"` header; `GET
/api/models/{id}` with the Hub's `X-Error-Code: RepoNotFound` on a miss. Any other route answers what a test
scripted for it (`reply`), so one server plays a Hub, a TGI server or a flaky provider. Every request is
recorded, so tests count calls and read headers instead of trusting the client.

It also serves real files, for `snapshot_download` and `hf_hub_download`: give it `repos`, Hub ids and the local
folders whose files they hold, and it answers the routes those functions call as the Hub does, at one commit
(`COMMIT`, or the branch `main`): `GET /api/models/{id}[/revision/{rev}]` with `sha` and `siblings` (sizes, blob
ids and LFS details with `?blobs=true`, as `model_info(files_metadata=True)` asks), `GET
/api/models/{id}/tree/{rev}` (the recursive file listing), and `HEAD`/`GET /{id}/resolve/{rev}/{path}` with
`X-Repo-Commit`, `ETag` (plus `X-Linked-Etag` and `X-Linked-Size` for LFS files) and `Content-Length`, streaming
the file.

Bounded: it listens on a free loopback port, handler sockets time out, scripted delays end as soon as the server
stops, and `stop` (or leaving the `with` block) joins every thread it started.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
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
    file: Path | None = None
    """A file streamed as the body instead (model weights are too big to hold in memory as `body`)."""


COMMIT = "3a5f0d2c" * 5
"""The one commit of every served repo."""

LFS_FROM_BYTES = 10 * 1024 * 1024
"""Files this big or bigger the Hub keeps in Git LFS (it refuses them in plain git)."""


@dataclass(frozen=True)
class ServedFile:
    """One file of a served repo, described as the Hub describes it."""

    path: str
    """Its path in the repo, `/`-separated."""
    local: Path
    size: int
    blob_id: str
    """Its git object id: of the file, or of its LFS pointer."""
    lfs_sha256: str | None
    """The file's SHA-256 when it is an LFS file (then also its ETag), else None."""

    @classmethod
    def of(cls, folder: Path, local: Path) -> ServedFile:
        size = local.stat().st_size
        path = local.relative_to(folder).as_posix()
        if size < LFS_FROM_BYTES:
            return cls(path, local, size, _git_blob_id(local.read_bytes()), None)
        sha256 = _sha256(local)
        return cls(path, local, size, _git_blob_id(_lfs_pointer(sha256, size)), sha256)

    def sibling(self, blobs: bool) -> dict[str, Any]:
        """The file in a model's `siblings`; its size and ids only when asked (`?blobs=true`)."""
        if not blobs:
            return {"rfilename": self.path}
        lfs = self._lfs("sha256")
        return {"rfilename": self.path, "size": self.size, "blobId": self.blob_id, **lfs}

    def tree_entry(self) -> dict[str, Any]:
        return {"type": "file", "path": self.path, "size": self.size, "oid": self.blob_id, **self._lfs("oid")}

    def _lfs(self, digest_key: str) -> dict[str, Any]:
        """The `lfs` field of an LFS file, whose digest the model API calls `sha256` and the tree API `oid`."""
        if self.lfs_sha256 is None:
            return {}
        pointer_size = len(_lfs_pointer(self.lfs_sha256, self.size))
        return {"lfs": {digest_key: self.lfs_sha256, "size": self.size, "pointerSize": pointer_size}}

    def headers(self) -> dict[str, str]:
        """What `HEAD /{id}/resolve/{rev}/{path}` tells `hf_hub_download` besides the length."""
        headers = {"X-Repo-Commit": COMMIT, "ETag": f'"{self.lfs_sha256 or self.blob_id}"'}
        if self.lfs_sha256 is not None:
            headers |= {"X-Linked-Etag": f'"{self.lfs_sha256}"', "X-Linked-Size": str(self.size)}
        return headers


def served_files(folder: Path) -> dict[str, ServedFile]:
    """Every file under `folder`, by its path in the repo."""
    files = (ServedFile.of(folder, path) for path in sorted(folder.rglob("*")) if path.is_file())
    return {file.path: file for file in files}


def _lfs_pointer(sha256: str, size: int) -> bytes:
    """The text git keeps in place of an LFS file."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def _git_blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@functools.cache
def _sha256(path: Path) -> str:
    """Cached: several tests serve the same weights, and hashing them is the slow part of starting a fake."""
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


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

    def __init__(
        self, models: list[dict[str, Any]] | None = None, page_size: int = 2, repos: dict[str, Path] | None = None
    ) -> None:
        self.models = list(models or [])
        """Models as the Hub's API returns them (`id`, `pipeline_tag`, `downloads`, `likes`, `cardData`, ...)."""
        self.repos = {repo_id: served_files(folder) for repo_id, folder in (repos or {}).items()}
        """Repos whose files are served (see the module docstring), id → path in the repo → file."""
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
            return self._api_model(request.path.removeprefix("/api/models/"), request.query)
        if request.method in ("GET", "HEAD") and "/resolve/" in request.path:
            return self._resolve(request.path.removeprefix("/"))
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

    def _api_model(self, path: str, query: dict[str, list[str]]) -> Reply:
        """`{id}`, `{id}/revision/{rev}` (model info) or `{id}/tree/{rev}` (a served repo's files)."""
        parts = path.split("/")
        model_id, route = "/".join(parts[:2]), parts[2:]
        model = next((m for m in self.models if m["id"] == model_id), None)
        files = self.repos.get(model_id)
        if model is None and files is None:
            return Reply(404, {"error": "Repository not found"}, headers={"X-Error-Code": "RepoNotFound"})
        if route and route[1:2] not in (["main"], [COMMIT]):
            return Reply(404, {"error": "Invalid rev id"}, headers={"X-Error-Code": "RevisionNotFound"})
        if route[:1] == ["tree"] and files is not None:
            return Reply(json=[file.tree_entry() for file in files.values()])
        if files is None:
            return Reply(json=model)
        blobs = _first(query, "blobs") in ("1", "true", "True")
        siblings = [file.sibling(blobs) for file in files.values()]
        return Reply(json={"id": model_id, **(model or {}), "sha": COMMIT, "siblings": siblings})

    def _resolve(self, path: str) -> Reply:
        """`{id}/resolve/{rev}/{path in the repo}`: a served file, or the Hub's 404 for a missing one."""
        repo, _, rest = path.partition("/resolve/")
        revision, _, name = rest.partition("/")
        files = self.repos.get(repo)
        if files is None:
            return Reply(404, {"error": "Repository not found"}, headers={"X-Error-Code": "RepoNotFound"})
        if revision not in ("main", COMMIT):
            return Reply(404, {"error": "Invalid rev id"}, headers={"X-Error-Code": "RevisionNotFound"})
        if name not in files:
            headers = {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT}
            return Reply(404, {"error": "Entry not found"}, headers=headers)
        return Reply(file=files[name].local, content_type="application/octet-stream", headers=files[name].headers())

    def resolved(self, method: str = "GET") -> list[str]:
        """The repo files asked for with `method`, as `{id}/{path in the repo}`, in order."""
        with self._lock:
            requests = [r for r in self.requests if r.method == method and "/resolve/" in r.path]
        return [_without_revision(r.path) for r in requests]


def _without_revision(path: str) -> str:
    repo, _, rest = path.removeprefix("/").partition("/resolve/")
    return f"{repo}/{rest.partition('/')[2]}"


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

        def do_HEAD(self) -> None:
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
            self.send_header("Content-Length", str(reply.file.stat().st_size if reply.file else len(body)))
            # A client that gave up waiting (a probe past its timeout) has closed the socket: its failure, not ours.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.end_headers()
                self._write(reply, body)

        def _write(self, reply: Reply, body: bytes) -> None:
            if self.command == "HEAD":
                return
            if reply.file is None:
                self.wfile.write(body)
                return
            with reply.file.open("rb") as file:
                shutil.copyfileobj(file, self.wfile)

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
