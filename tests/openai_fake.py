"""A fake OpenAI-compatible chat server on 127.0.0.1, for tests that run the graph through langchain-openai.

It speaks `POST /v1/chat/completions` as `ChatOpenAI` uses it: plain completions, and structured output the way
`with_structured_output` asks for it by default in langchain-openai 1.x — `response_format: {"type":
"json_schema", "json_schema": {"name", "schema", "strict": true}}`, answered with the JSON as the message text.
Replies are scripted per HuggingGraph stage, recognised from the prompts with `stage_of` as `ScriptedChatModel`
does, so one server plays the planner, the selector and the responder. A request with `stream: true` (what
`ChatOpenAI` sends when LangGraph streams in "messages" mode, structured output included) is answered as OpenAI
does, with server-sent `chat.completion.chunk` events, one word of the reply each, then `data: [DONE]`.

A schema sent with `strict: true` is checked against OpenAI's rules for strict structured outputs and refused
with OpenAI's 400 when it breaks one, so a schema OpenAI would reject fails here first. The server can also play
one without structured output (a 400 for any `response_format`), or one that ignores `response_format` and
answers in free text, as some OpenAI-compatible servers do. Every request is recorded with its body and headers,
so tests read what the client really sent.

Bounded as the fake Hub is: it listens on a free loopback port, handler sockets time out, and `stop` (or leaving
the `with` block) joins every thread it started.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

import pytest
from langchain_core.messages import HumanMessage

from hugginggraph.testing import Stage, stage_of

StructuredOutput = Literal["strict", "rejected", "ignored", "json_object"]
"""How the server treats `response_format`: OpenAI's strict structured outputs; a 400, as servers without the
feature answer; not at all, answering with whatever the model wrote; or as llama-cpp-python's server does, taking
`{"type": "json_object", "schema": ...}` and refusing `json_schema` with a 500."""

Replies = dict[Stage, str | Callable[[list[str]], str]]
"""What the model writes at each stage: a fixed text, or a function of the texts of the request's messages."""

COMPLETIONS = "/v1/chat/completions"

# Keywords OpenAI accepts in a strict schema (its "supported schemas" list); any other one is refused, `default`
# included: pydantic writes it for every field with a default value.
_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "$ref",
        "$defs",
        "definitions",
        "title",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
_SCHEMA_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


@dataclass(frozen=True)
class Recorded:
    """One request as the server saw it, and the status it answered."""

    path: str
    headers: dict[str, str]
    """Header names in lower case."""
    body: dict[str, Any]
    stage: Stage
    status: int

    @property
    def json_schema(self) -> dict[str, Any] | None:
        return json_schema_of(self.body)


def json_schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The `json_schema` object (`name`, `schema`, `strict`) of a structured-output request's body, else None."""
    response_format = body.get("response_format") or {}
    return response_format.get("json_schema") if response_format.get("type") == "json_schema" else None


class FakeOpenAI:
    """A threaded HTTP server on 127.0.0.1 playing an OpenAI-compatible chat-completions API."""

    def __init__(
        self,
        replies: Replies | None = None,
        structured_output: StructuredOutput = "strict",
        api_key: str = "sk-test",
    ) -> None:
        self.replies = dict(replies or {})
        """What the model writes at each stage; for structured output too, as a real server sends the JSON as text."""
        self.structured_output = structured_output
        self.api_key = api_key
        """The only key accepted; any other gets OpenAI's 401."""
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05})
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.base_url = f"{self.url}/v1"
        """What a client takes as `base_url`."""

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    def requests_for(self, stage: Stage) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.stage == stage]

    # --- what the server does with a request (called on handler threads) ----------------------------------
    def answer(self, path: str, headers: dict[str, str], raw_body: bytes) -> tuple[int, dict[str, Any] | list[Any]]:
        """The status and the JSON body; for a stream, the list of its events' data instead."""
        try:
            body = json.loads(raw_body)
        except json.JSONDecodeError as error:
            return 400, _error(f"the body is not JSON: {error}")
        messages = body.get("messages") or [{}]
        stage = stage_of([HumanMessage(_text(messages[0].get("content")))])
        status, reply = self._reply(path, headers, body, stage)
        with self._lock:
            self.requests.append(Recorded(path, headers, body, stage, status))
        if status == 200 and body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return status, stream_events(reply, include_usage)
        return status, reply

    def _reply(
        self, path: str, headers: dict[str, str], body: dict[str, Any], stage: Stage
    ) -> tuple[int, dict[str, Any]]:
        if path != COMPLETIONS:
            return 404, _error(f"Unknown request URL: POST {path}.", code="unknown_url")
        if headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, _error("Incorrect API key provided.", code="invalid_api_key")
        if body.get("tools"):
            return 400, _error("this fake answers no tool calls: ChatOpenAI sent something new")
        response_format = body.get("response_format")
        if response_format and self.structured_output == "rejected":
            return 400, _error("response_format is not supported by this server", param="response_format")
        if (response_format or {}).get("type") == "json_schema" and self.structured_output == "json_object":
            return 500, _error("Input should be 'text' or 'json_object'")
        json_schema = (response_format or {}).get("json_schema")
        if json_schema and json_schema.get("strict") and self.structured_output == "strict":
            problem = strict_schema_problem(json_schema)
            if problem:
                name = json_schema.get("name")
                return 400, _error(f"Invalid schema for response_format {name!r}: {problem}", param="response_format")
        if stage not in self.replies:
            return 400, _error(f"the test scripted no reply for the {stage!r} stage")
        reply = self.replies[stage]
        content = reply([_text(m.get("content")) for m in body.get("messages", [])]) if callable(reply) else reply
        message = {"role": "assistant", "content": content, "refusal": None}
        return 200, {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }


def stream_events(completion: dict[str, Any], include_usage: bool) -> list[Any]:
    """A completion as OpenAI streams it: a role chunk, one chunk per word (with the spaces after it), a finish
    chunk, the usage when asked (`stream_options.include_usage`), and `[DONE]`."""
    choice = completion["choices"][0]

    def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
        head = {key: completion[key] for key in ("id", "created", "model")}
        choices = [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]
        return {**head, "object": "chat.completion.chunk", "choices": choices, **extra}

    words = re.split(r"(?<=\s)(?=\S)", choice["message"]["content"])
    events: list[Any] = [chunk({"role": "assistant", "content": "", "refusal": None})]
    events += [chunk({"content": word}) for word in words if word]
    events.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        events.append({**chunk({}), "choices": [], "usage": completion["usage"]})
    return [*events, "[DONE]"]


def strict_schema_problem(json_schema: dict[str, Any]) -> str | None:
    """The first of OpenAI's strict structured-output rules `json_schema` breaks, worded as OpenAI words it.

    The rules checked: a valid name, an object at the root, only supported keywords, `additionalProperties: false`
    and every property required on each object, and `$ref`s that resolve. (OpenAI's size limits are not.)
    """
    name = json_schema.get("name", "")
    if not _SCHEMA_NAME.fullmatch(name):
        return f"the name {name!r} must be 1-64 letters, digits, underscores or dashes."
    schema = json_schema.get("schema") or {}
    if schema.get("type") != "object":
        return "In context=(), the root schema must be an object, not 'anyOf' or another type."
    return _node_problem(schema, (), schema)


def _node_problem(node: dict[str, Any], context: tuple[str, ...], root: dict[str, Any]) -> str | None:
    where = f"In context={context!r}, "
    unsupported = sorted(set(node) - _STRICT_KEYWORDS)
    if unsupported:
        return f"{where}'{unsupported[0]}' is not permitted."
    ref = node.get("$ref")
    if ref is not None and _resolve(root, ref) is None:
        return f"{where}reference to component '{ref}' which was not found in the schema."
    properties: dict[str, Any] = node.get("properties", {})
    if node.get("type") == "object" or properties:
        if node.get("additionalProperties") is not False:
            return f"{where}'additionalProperties' is required to be supplied and to be false."
        missing = [key for key in properties if key not in node.get("required", [])]
        if missing:
            return (
                f"{where}'required' is required to be supplied and to be an array including every key in "
                f"properties. Missing '{missing[0]}'."
            )
    children = [
        *(((*context, "$defs", key), sub) for key, sub in node.get("$defs", {}).items()),
        *(((*context, "properties", key), sub) for key, sub in properties.items()),
        *(((*context, "anyOf", str(i)), sub) for i, sub in enumerate(node.get("anyOf", []))),
        *([((*context, "items"), node["items"])] if "items" in node else []),
    ]
    return next((p for path, sub in children if (p := _node_problem(sub, path, root))), None)


def _resolve(root: dict[str, Any], ref: str) -> Any:
    node: Any = root
    for key in ref.removeprefix("#/").split("/"):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _text(content: Any) -> str:
    """A message's text: OpenAI content is a string or a list of parts."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _error(message: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    """OpenAI's error body, which the client turns into the matching exception."""
    return {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 5  # a client that stops sending cannot hold a thread

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            headers = {name.lower(): value for name, value in self.headers.items()}
            status, reply = fake.answer(self.path, headers, self.rfile.read(length))
            if isinstance(reply, list):  # a stream: all its events in one body, which the client reads as SSE
                events = (event if isinstance(event, str) else json.dumps(event) for event in reply)
                body, kind = "".join(f"data: {event}\n\n" for event in events).encode(), "text/event-stream"
            else:
                body, kind = json.dumps(reply).encode(), "application/json"
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Silent: pytest shows failures, and request logs would carry the test key."""

    return Handler


def isolate_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the OpenAI client on loopback: a proxy from the environment would otherwise carry its requests. And
    forget which servers took the schema as a JSON object: a fake may listen on a port an earlier one had."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("hugginggraph.tools.llm_json.JSON_OBJECT_SERVERS", set())
