"""`openai:` with `--base-url` on a real OpenAI-compatible server: llama-cpp-python's own (`llama_cpp.server`),
serving the embedded controller's GGUF on loopback. The planner plans through it, and `hugginggraph run` plans,
runs a real offline expert and answers through it.

The server takes OpenAI's chat completions, streaming included, but not OpenAI's structured outputs: it knows
`response_format` only as `{"type": "json_object", "schema": ...}`, and answers `{"type": "json_schema", ...}`, which
langchain-openai sends, with a 500. So structured output is asked for, refused, then asked in the server's own
dialect, which constrains the reply to the plan's schema (`tools/llm_json.ask_json`); from then on it is asked that
way alone. These tests hold that path end to end. How each reply is parsed, how refusals, strict schemas and
unreachable servers are handled, is held quickly against a fake server (tests/graph/test_openai_controller.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import httpx2
import pytest
from langgraph_server import PROXIES
from llama_cpp_server import LlamaCppServer, llama_cpp_server
from openai_fake import isolate_client, json_schema_of

from hugginggraph.context_assembly import build_context
from hugginggraph.planning.plan_check import check_plan
from hugginggraph.planning.planner import Planner
from hugginggraph.settings import Settings, environment_variables
from hugginggraph.tools.tasks import TASKS

pytestmark = pytest.mark.slow

SIGN = "sign.png"
"""The bundled sample the requests name."""
SIGN_TEXT = "Platform 4 Closed for repairs"
"""What RapidOCR reads on it, its two lines joined as the CLI prints them."""
REFUSED_SCHEMA = "Input should be 'text' or 'json_object'"
"""How llama_cpp.server (0.3.36) refuses OpenAI's `response_format: {"type": "json_schema"}`."""
TERMINAL = {"FORCE_COLOR", "TTY_COMPATIBLE"}


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    with llama_cpp_server(tmp_path_factory.mktemp("llama-cpp-server")) as served:
        yield served


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A folder holding the sign, as a user's working folder holds the files a request names."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / SIGN).write_bytes(files("hugginggraph").joinpath("samples", SIGN).read_bytes())
    return folder


@dataclass(frozen=True)
class Exchange:
    """One HTTP request the client sent, and what came back."""

    body: dict[str, Any]
    status: int
    reply: str
    """The response's body, for answers that were not streamed."""

    @property
    def json_schema(self) -> dict[str, Any] | None:
        return json_schema_of(self.body)


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Exchange]:
    """What the OpenAI client sends and gets back, as it crosses the wire (httpx2, under the openai SDK); no proxy,
    key or setting of the developer's leaks in."""
    isolate_client(monkeypatch)
    for name in environment_variables():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HUGGINGGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "no-config.toml"))
    exchanges: list[Exchange] = []
    send = httpx2.AsyncClient.send

    async def recorded(client: httpx2.AsyncClient, request: httpx2.Request, **options: Any) -> httpx2.Response:
        response = await send(client, request, **options)
        reply = "" if options.get("stream") else response.text
        exchanges.append(Exchange(json.loads(request.content), response.status_code, reply))
        return response

    monkeypatch.setattr(httpx2.AsyncClient, "send", recorded)
    return exchanges


async def test_the_planner_plans_through_the_server_in_its_own_schema_dialect(server, wire, workspace):
    settings = Settings(model=f"openai:{server.model}", base_url=server.base_url, hub=False)
    planner = Planner.from_context(build_context(settings, workspace))  # as a run gets it
    draft = await planner.draft(f"Read the text on {SIGN}.", [SIGN])

    refused = [exchange for exchange in wire if exchange.json_schema is not None]
    constrained = [
        exchange for exchange in wire if exchange.body.get("response_format", {}).get("type") == "json_object"
    ]
    assert refused and len(constrained) == 1 and wire == [*refused, *constrained]  # no fix pass, no plain call
    # Structured output asked for as langchain-openai asks by default: OpenAI's strict json_schema, the plan's
    # schema with its task types as an enum.
    request = refused[0]
    assert request.body["model"] == server.model
    assert request.json_schema is not None
    assert (request.json_schema["name"], request.json_schema["strict"]) == ("PlanOutput", True)
    assert "image-to-text" in json.dumps(request.json_schema["schema"])
    # Refused by the server (the openai client retries a 500 before giving up)...
    assert {exchange.status for exchange in refused} == {500}, "llama_cpp.server now takes json_schema?"
    assert all(REFUSED_SCHEMA in exchange.reply for exchange in refused)
    # ...then asked with the same schema as a JSON object, which the server's grammar held the reply to.
    assert constrained[0].body["response_format"]["schema"]["title"] == "PlanOutput"
    reply = json.loads(constrained[0].reply)
    assert constrained[0].status == 200 and reply["model"] == server.model
    assert "image-to-text" in json.loads(reply["choices"][0]["message"]["content"])["tasks"][0]["task"]

    # A valid typed plan: the task the request asks for, on the file it names, and nothing that cannot run.
    assert draft.error is None and not draft.fixed
    checked = check_plan(draft.items, workspace, TASKS)
    assert checked.doomed == {}
    assert [(task.task, task.args) for task in checked.tasks] == [("image-to-text", {"image": str(workspace / SIGN)})]


def test_run_plans_reads_the_sign_and_answers_through_the_server(server, workspace: Path, tmp_path: Path):
    dropped = PROXIES | TERMINAL | set(environment_variables())  # no key, proxy or developer setting leaks in
    env = {key: value for key, value in os.environ.items() if key not in dropped}
    env.update(
        HUGGINGGRAPH_HOME=str(tmp_path / "home"),
        HUGGINGGRAPH_CONFIG=str(tmp_path / "no-config.toml"),
        HF_HUB_OFFLINE="1",
    )
    command = [
        *(sys.executable, "-m", "hugginggraph", "run", f"Read the text on {SIGN}."),
        *("--model", f"openai:{server.model}", "--base-url", server.base_url, "--no-hub"),
    ]
    start = server.log_size()
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=workspace, timeout=240)
    served = server.log_since(start)
    assert out.returncode == 0, f"{out.stdout}\n{out.stderr}\n--- server log ---\n{served[-4000:]}"

    lines = out.stdout.splitlines()
    # Planned by the server's model, on the file the request names...
    assert lines[:2] == ["Plan (1 task):", f"  [0] image-to-text  image={workspace / SIGN}"]
    # ...run on a real offline expert, which read the sign...
    ran = [line for line in lines if line.startswith("[0] image-to-text ok (RapidAI/RapidOCR, ")]
    assert len(ran) == 1 and ran[0].endswith(f"): {SIGN_TEXT}")
    # ...and answered: the lead written by the server's model, then the report of what the expert read.
    answer = lines[lines.index("Answer:") + 1 :]
    assert answer[0].strip() and SIGN_TEXT not in answer[0]  # the lead is the model's, not the report
    assert f'- In words, {SIGN} shows: "{SIGN_TEXT}"' in answer
    # The server was asked for the plan (OpenAI's structured output first, refused, then in its own dialect) and
    # for the answer.
    statuses = [line.split('" ')[-1] for line in served.splitlines() if '"POST /v1/chat/completions' in line]
    assert statuses[-2:] == ["200 OK", "200 OK"] and set(statuses[:-2]) == {"500 Internal Server Error"}
