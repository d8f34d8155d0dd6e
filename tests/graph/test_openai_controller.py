"""The real graph with `ChatOpenAI` as the controller, against a fake OpenAI-compatible server (tests/openai_fake.py)
that plays each kind of server in milliseconds: structured output as OpenAI's strict mode takes it, plain text for
servers without it, and a `plan_error` that says what to fix when the server cannot be used at all. That HuggingGraph
works with a real one is held by tests/test_openai_compatible_server.py, on llama-cpp-python's server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from conftest import echo, lead
from langchain_openai import ChatOpenAI
from openai_fake import FakeOpenAI, isolate_client
from pydantic import BaseModel

PLAN = [
    {"step": "summarize the long text", "task": "summarization", "id": 0, "dep": [-1], "args": {"text": "a long text"}},
    {
        "step": "say whether the summary is positive or negative",
        "task": "text-classification",
        "id": 1,
        "dep": [0],
        "args": {"text": "<GENERATED>-0"},
    },
    {"step": "translate the summary", "task": "translation", "id": 2, "dep": [0], "args": {"text": "<GENERATED>-0"}},
]
MODELS = {
    "sum-big": ("summarization", echo()),
    "sum-small": ("summarization", echo()),
    "cls": ("text-classification", echo()),
    "tr": ("translation", echo()),
}
# Only summarization has two candidates, so only it asks the controller; the LLM picks the less downloaded one so
# that the choice visibly comes from its answer, not from the ranking.
DOWNLOADS = {"sum-big": 1000, "sum-small": 10}
ANSWER = "sum-small summarised the text; cls classified it and tr translated it."


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    isolate_client(monkeypatch)
    with FakeOpenAI() as fake:
        yield fake


def controller(base_url: str, api_key: str = "sk-test", **options: Any) -> ChatOpenAI:
    return ChatOpenAI(base_url=base_url, api_key=api_key, model="fake-model", **options)


def strict_plan(plan: list[dict[str, Any]]) -> str:
    """The plan as a server in strict mode writes it: an object, every argument present, null where unused."""
    unused = dict.fromkeys(("text", "image", "audio", "video"))
    return json.dumps({"tasks": [{**task, "args": {**unused, **task["args"]}} for task in plan]})


def resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """`node` itself, or the `$defs` entry its `$ref` points to."""
    ref = node.get("$ref")
    return schema["$defs"][ref.removeprefix("#/$defs/")] if ref else node


def statuses(out: dict[str, Any]) -> dict[int, str]:
    return {task_id: result.status for task_id, result in out["results"].items()}


async def test_plan_and_choice_come_back_through_strict_structured_output(openai_server, make_context, run_graph):
    openai_server.replies = {
        "plan": strict_plan(PLAN),
        "select": json.dumps({"model_id": "sum-small", "reason": "short inputs"}),
        "respond": ANSWER,
    }
    context = make_context([], MODELS, DOWNLOADS, llm=controller(openai_server.base_url))
    out = await run_graph(context, "summarise this, then classify and translate the summary")

    assert [(r.stage, r.status) for r in openai_server.requests] == [  # no schema refused, no plain retry
        ("plan", 200),
        ("select", 200),
        ("respond", 200),
    ]
    planning, selection, response = openai_server.requests
    assert planning.body["model"] == "fake-model"
    assert planning.headers["authorization"] == "Bearer sk-test"
    assert planning.json_schema is not None and selection.json_schema is not None
    assert (planning.json_schema["name"], planning.json_schema["strict"]) == ("PlanOutput", True)
    assert selection.json_schema["strict"] is True
    schema = selection.json_schema["schema"]
    assert resolve(schema, schema["properties"]["model_id"])["enum"] == ["sum-big", "sum-small"]
    assert response.json_schema is None  # the answer is free text

    assert [task.args for task in out["plan"]] == [task["args"] for task in PLAN]  # the nulls are gone
    choice = out["choices"][0]
    assert choice.model_ids == ["sum-small", "sum-big"]
    assert choice.asked_llm and choice.reason == "short inputs"
    assert statuses(out) == {0: "ok", 1: "ok", 2: "ok"}
    assert out["results"][1].text == "cls(sum-small(a long text))"
    assert lead(out["answer"]) == ANSWER


def asked(server: FakeOpenAI, stage: str) -> list[tuple[str, int]]:
    """The `response_format` type (`text` without one) and the status of each request the stage sent."""
    return [(r.body.get("response_format", {}).get("type", "text"), r.status) for r in server.requests_for(stage)]


REFUSING = [("json_schema", 400), ("json_object", 400), ("text", 200)]


@pytest.mark.parametrize(
    ("structured_output", "plan_asked", "select_asked"),
    [
        # Refused in both dialects: the plain reply is read.
        ("rejected", REFUSING, REFUSING),
        # Ignored: the free text does not parse as a structured reply, so the schema is asked once more as a JSON
        # object, whose text is read; the server is asked that way from then on.
        ("ignored", [("json_schema", 200), ("json_object", 200)], [("json_object", 200)]),
    ],
    ids=["rejected", "ignored"],
)
async def test_a_server_without_structured_output_is_understood_in_plain_text(
    openai_server, make_context, run_graph, structured_output, plan_asked, select_asked
):
    openai_server.structured_output = structured_output
    openai_server.replies = {
        "plan": f"Here is the plan:\n```json\n{json.dumps(PLAN)}\n```",
        "select": "sum-small fits best: the inputs are short.",
        "respond": ANSWER,
    }
    context = make_context([], MODELS, DOWNLOADS, llm=controller(openai_server.base_url))
    out = await run_graph(context)

    assert (asked(openai_server, "plan"), asked(openai_server, "select")) == (plan_asked, select_asked)
    assert out["choices"][0].model_ids == ["sum-small", "sum-big"]
    assert statuses(out) == {0: "ok", 1: "ok", 2: "ok"}
    assert lead(out["answer"]) == ANSWER


async def test_a_server_taking_the_schema_as_a_json_object_is_asked_so_from_its_first_refusal_on(
    openai_server, make_context, run_graph
):
    """llama-cpp-python's server refuses `json_schema` (a 500, which the client retries twice) and constrains its
    reply to `{"type": "json_object", "schema": ...}`: after the first refusal, every call asks that way."""
    openai_server.structured_output = "json_object"
    openai_server.replies = {
        "plan": json.dumps({"tasks": PLAN}),
        "select": json.dumps({"model_id": "sum-small", "reason": "short inputs"}),
        "respond": ANSWER,
    }
    context = make_context([], MODELS, DOWNLOADS, llm=controller(openai_server.base_url, max_retries=0))
    out = await run_graph(context)

    def asked(stage: str) -> list[tuple[str, int]]:
        return [
            (r.body.get("response_format", {}).get("type", "text"), r.status) for r in openai_server.requests_for(stage)
        ]

    assert asked("plan") == [("json_schema", 500), ("json_object", 200)]
    assert asked("select") == [("json_object", 200)]
    plan_request = openai_server.requests_for("plan")[1]
    assert plan_request.body["response_format"]["schema"]["title"] == "PlanOutput"
    assert out["choices"][0].model_ids == ["sum-small", "sum-big"]
    assert statuses(out) == {0: "ok", 1: "ok", 2: "ok"} and lead(out["answer"]) == ANSWER


async def test_an_unreachable_server_ends_the_run_with_a_plan_error_naming_it(monkeypatch, make_context, run_graph):
    isolate_client(monkeypatch)
    with FakeOpenAI() as stopped:
        pass
    # No retries: the client's backoff would only make the test slower, not change what the user sees.
    context = make_context([], MODELS, llm=controller(stopped.base_url, max_retries=0))
    out = await run_graph(context)

    error = out["plan_error"]
    assert error.startswith(f"the controller LLM at {stopped.base_url}/chat/completions could not be reached (")
    assert "ConnectError" in error  # the cause, for whoever has to look further
    assert error.endswith("check that the server is running and that the base URL is right")
    assert out["answer"] == f"I could not carry out this request: {error}."
    assert not out.get("results")


@pytest.mark.parametrize(
    ("api_key", "path", "problem"),
    [
        ("sk-wrong", "/v1", "rejected the API key"),
        ("sk-test", "", "answered 404"),  # a base URL without the API's /v1
    ],
    ids=["wrong-key", "no-v1"],
)
async def test_a_server_refusing_the_controller_ends_the_run_with_a_plan_error_saying_why(
    openai_server, make_context, run_graph, api_key, path, problem
):
    base_url = openai_server.url + path
    context = make_context([], MODELS, llm=controller(base_url, api_key=api_key))
    out = await run_graph(context)

    assert out["plan_error"].startswith(f"the controller LLM at {base_url}/chat/completions {problem} (")
    assert len(openai_server.requests) == 1  # not asked again in plain text: it would be refused the same way


class ReasonWithDefault(BaseModel):
    reason: str = ""


class FreeFormArgs(BaseModel):
    args: dict[str, str]


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        (ReasonWithDefault, "In context=('properties', 'reason'), 'default' is not permitted."),
        (FreeFormArgs, "In context=('properties', 'args'), 'additionalProperties' is required to be supplied"),
    ],
    ids=["default", "free-form-dict"],
)
async def test_the_fake_refuses_what_openai_strict_mode_refuses(openai_server, schema, problem):
    """So that the graph tests above would catch a schema OpenAI rejects."""
    structured = controller(openai_server.base_url).with_structured_output(schema)
    with pytest.raises(openai.BadRequestError, match=re.escape(problem)), pytest.warns(UserWarning):
        await structured.ainvoke("hi")
