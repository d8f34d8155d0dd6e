"""HuggingGraph on the LangGraph server. The slow tests run `langgraph dev` on langgraph.json and drive it over HTTP
as docs/server.md shows: the controller is the fake OpenAI-compatible server, which is also the expert (it summarizes),
nothing leaves loopback. The fast ones check what the server relies on, in process."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import echo, lead
from langgraph_server import GRAPH, Server, langgraph_dev

from hugginggraph import Limits, build_graph
from hugginggraph.runs import athreads
from hugginggraph.server import ServerOptions, checkpointer, served_context
from hugginggraph.settings import Settings, environment_variables
from hugginggraph.testing import ScriptedChatModel

slow = pytest.mark.slow

STEP = "summarize the text"
PLAN = [{"step": STEP, "task": "summarization", "id": 0, "dep": [-1], "args": {"text": "what a fine day"}}]
ANSWER = "The text is about a fine day."
REQUEST = "summarize this text: what a fine day"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("server")
    replies = {"plan": json.dumps({"tasks": PLAN}), "respond": ANSWER, "chat": "A fine day."}
    with langgraph_dev(root, replies) as server:
        yield server


@pytest.fixture
def api(server: Server) -> Iterator[httpx.Client]:
    """A client on the server; a failing test shows what the server logged while it ran."""
    start = server.log.stat().st_size
    with httpx.Client(base_url=server.url, timeout=240) as client:  # a cold first run builds the context
        yield client
    print(f"--- langgraph dev log during the test ---\n{server.log_tail(start)}")


def new_thread(api: httpx.Client) -> str:
    response = api.post("/threads", json={})
    response.raise_for_status()
    return response.json()["thread_id"]


def wait(api: httpx.Client, thread_id: str, graph_input: dict[str, Any] | None, **body: Any) -> dict[str, Any]:
    response = api.post(f"/threads/{thread_id}/runs/wait", json={"assistant_id": GRAPH, "input": graph_input, **body})
    response.raise_for_status()
    return response.json()


def server_sent_events(lines: Iterator[str]) -> list[tuple[str, Any]]:
    """(event, data) pairs of an SSE stream."""
    events, name = [], ""
    for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            events.append((name, json.loads(line.removeprefix("data: "))))
    return events


@slow
def test_a_run_answers_with_its_results_and_keeps_its_history(api: httpx.Client):
    thread_id = new_thread(api)
    state = wait(api, thread_id, {"request": REQUEST, "files": []})
    assert lead(state["answer"]) == ANSWER and state["stopped"] is None
    result = state["results"]["0"]
    assert result["status"] == "ok" and result["model_id"] == "controller-llm/summarization", result
    assert [task["task"] for task in state["plan"]] == ["summarization"]

    history = api.post(f"/threads/{thread_id}/history", json={"limit": 20})
    history.raise_for_status()
    steps = [snapshot["next"] for snapshot in reversed(history.json())]
    assert steps[0] == ["__start__"] and steps[-1] == [], steps
    assert ["plan"] in steps and ["respond"] in steps


@slow
def test_mode_tasks_only_plans_and_mode_results_runs_without_an_answer(api: httpx.Client, server: Server):
    before = len(server.controller.requests_for("respond"))
    planned = wait(api, new_thread(api), {"request": REQUEST, "mode": "tasks"})
    assert [task["task"] for task in planned["plan"]] == ["summarization"]
    assert not planned.get("results") and not planned.get("answer")
    ran = wait(api, new_thread(api), {"request": REQUEST, "mode": "results"})
    assert ran["results"]["0"]["status"] == "ok" and not ran.get("answer")
    assert len(server.controller.requests_for("respond")) == before  # neither mode asked for an answer


@slow
def test_approval_pauses_the_run_until_the_user_resumes_it(api: httpx.Client):
    thread_id = new_thread(api)
    paused = wait(api, thread_id, {"request": REQUEST, "approval": True})
    (question,) = paused["__interrupt__"]
    assert [task["model"] for task in question["value"]["tasks"]] == ["controller-llm/summarization"]
    assert not paused.get("results") and not paused.get("answer")
    assert api.get(f"/threads/{thread_id}/state").json()["next"] == ["approve"]

    state = wait(api, thread_id, None, command={"resume": {"action": "approve"}})
    assert lead(state["answer"]) == ANSWER and state["results"]["0"]["status"] == "ok"


@slow
def test_a_stream_reports_each_stage_and_the_answer_as_it_is_written(api: httpx.Client):
    thread_id = new_thread(api)
    body = {"assistant_id": GRAPH, "input": {"request": REQUEST}, "stream_mode": ["updates", "messages-tuple"]}
    with api.stream("POST", f"/threads/{thread_id}/runs/stream", json=body) as response:
        response.raise_for_status()
        events = server_sent_events(response.iter_lines())
    assert "error" not in [name for name, _ in events], events
    stages = [node for name, update in events if name == "updates" for node in update]
    assert stages == ["plan", "validate", "select", "approve", "summarization#0", "execute", "respond"]
    messages = [data for name, data in events if name == "messages"]  # (chunk, metadata) pairs
    respond = [chunk for chunk, meta in messages if meta["langgraph_node"] == "respond"]
    tokens = [chunk["content"] for chunk in respond if chunk["type"] == "AIMessageChunk"]
    assert len(tokens) > 1 and "".join(tokens) == ANSWER


@slow
def test_a_run_context_is_checked_options_and_studio_sees_its_forms(api: httpx.Client, server: Server):
    thread_id, before = new_thread(api), len(server.controller.requests)
    state = wait(api, thread_id, {"request": REQUEST}, context={"model": "openai:other-model", "limits": {"top_k": 1}})
    assert lead(state["answer"]) == ANSWER
    assert {request.body["model"] for request in server.controller.requests[before:]} == {"other-model"}
    assert state["choices"]["0"]["model_ids"] == ["controller-llm/summarization"]  # top_k 1: no fallback
    refused = wait(api, new_thread(api), {"request": REQUEST}, context={"limits": {"top_k": "many"}})
    assert refused["__error__"]["error"] == "ValidationError" and "limits.top_k" in refused["__error__"]["message"]

    assistants = api.post("/assistants/search", json={"graph_id": GRAPH})
    assistants.raise_for_status()
    schemas = api.get(f"/assistants/{assistants.json()[0]['assistant_id']}/schemas")
    schemas.raise_for_status()
    forms = schemas.json()
    assert {"request", "files", "mode", "approval"} <= set(forms["input_schema"]["properties"])
    assert {"answer", "results", "plan"} <= set(forms["output_schema"]["properties"])
    assert {"model", "limits"} <= set(forms["context_schema"]["properties"])
    assert "api_key" not in forms["context_schema"]["properties"]


# --- in process ---------------------------------------------------------------------------------------------------


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The server's environment as the slow tests set it, and no served context left over from another test."""
    for name in environment_variables():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HUGGINGGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("HUGGINGGRAPH_MODEL", "openai:fake-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    served_context.cache_clear()
    yield tmp_path
    served_context.cache_clear()


def test_options_override_the_server_settings_but_never_carry_its_key_elsewhere():
    server = Settings(model="openai:a", base_url="http://models.internal/v1", api_key="sk-server")
    assert ServerOptions(model="openai:b").settings(server).model_dump() == {**server.model_dump(), "model": "openai:b"}
    assert ServerOptions(base_url="http://models.internal/v1").settings(server).api_key == server.api_key
    assert ServerOptions(base_url="http://elsewhere.example/v1").settings(server).api_key is None


def test_options_build_controllers_once_and_set_limits_per_run(environment: Path):
    default, narrow = ServerOptions().build(), ServerOptions(limits=Limits(top_k=1)).build()
    assert default.llm is narrow.llm and default.catalog is narrow.catalog
    assert (default.limits, narrow.limits.top_k) == (Limits(), 1)
    other = ServerOptions(model="openai:other-model").build()
    assert other.llm is not default.llm and other.llm.model_name == "other-model"


async def test_a_run_without_a_context_says_what_to_pass():
    with pytest.raises(TypeError, match=r"pass context=HuggingGraphContext\(...\), or options such as"):
        await build_graph().ainvoke({"request": "do it"})


async def test_the_self_hosting_checkpointer_saves_runs_where_the_cli_reads_them(
    environment, make_context, monkeypatch
):
    monkeypatch.setenv("HUGGINGGRAPH_CHECKPOINTS", str(environment / "runs.sqlite"))
    context = make_context(PLAN, {"s": ("summarization", echo())}, llm=ScriptedChatModel(plan=PLAN, respond=ANSWER))
    async with checkpointer() as saver:
        state = await build_graph(saver).ainvoke(
            {"request": REQUEST}, {"configurable": {"thread_id": "served"}}, context=context
        )
    assert lead(state["answer"]) == ANSWER
    assert await athreads(checkpoint_path=environment / "runs.sqlite") == ["served"]
