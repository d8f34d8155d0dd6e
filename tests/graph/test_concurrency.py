"""Concurrent runs on one compiled graph, one context and one model pool keep to themselves, and the pool loads each
model once however many runs want it at the same moment.

Each of 8 runs carries its own marker (`job-3`) in its request; the scripted planner puts it into every task's input
and the scripted responder quotes every marker it is shown, so a result or an answer that saw another run's state
would name a second marker. The models are served by the real `LocalTransformersRunner` and its `ModelPool`, with
loaders that take a while and count how many loads of one model overlap. The same 8 runs then go at once, each on
its own thread, through a real `langgraph dev` server (tests/langgraph_server.py) and its tiny real model.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_server import GRAPH, Server, langgraph_dev
from openai_fake import Replies

from hugginggraph import HuggingGraphContext, build_graph
from hugginggraph.graph.builder import HuggingGraph
from hugginggraph.graph.context import PlanningAids
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.testing.tiny_models import build_tiny_model
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog
from hugginggraph.tools.runners import transformers_local
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

RUNS = 8
MARKER = re.compile(r"job-\d+")
MODELS = {"summarization": "test/summarizer", "translation": "test/translator", "text-generation": "test/writer"}
LOAD_S = 0.3
"""How long a load takes: long enough that all runs ask for each model while its first load is going on."""


def request(n: int) -> str:
    return f"job-{n}: summarize, translate and continue this"


STEPS = {
    "summarization": "summarize the notes",
    "translation": "translate the notes",
    "text-generation": "continue the notes",
    "text-classification": "classify the notes",
}
"""Each task's step phrase, in the words a controller writes, which the step vote keeps as that task."""


def marked_plan(text: str, tasks: Sequence[str]) -> list[dict[str, Any]]:
    """One task per name in `tasks`: the first on a text carrying the marker found in `text` (the request), the
    others on the first's output."""
    marker = MARKER.search(text)
    notes = f"notes of {marker.group() if marker else '?'}"
    return [
        {
            "step": STEPS[task],
            "task": task,
            "id": i,
            "dep": [0] if i else [-1],
            "args": {"text": "<GENERATED>-0" if i else notes},
        }
        for i, task in enumerate(tasks)
    ]


def markers_named(text: str) -> str:
    """The answer: every marker in the response prompt, which holds the request and the results."""
    return "answer for " + ", ".join(sorted(set(MARKER.findall(text))))


class CountingLoads:
    """A task's loader (a `LocalTask`) standing in for every task: it sleeps, counts loads per model, and records
    the most loads of one model that overlapped."""

    library = "transformers"

    def __init__(self) -> None:
        self.loads: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self._active: Counter[str] = Counter()
        self._lock = threading.Lock()

    def load(self, model: str, device: str) -> Any:
        with self._lock:
            self.loads[model] += 1
            self._active[model] += 1
            self.peak[model] = max(self.peak[model], self._active[model])
        time.sleep(LOAD_S)
        with self._lock:
            self._active[model] -= 1
        return lambda inputs: f"{model}({inputs['text']})"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> CountingLoads:
    counting = CountingLoads()
    for task in MODELS:
        monkeypatch.setitem(transformers_local.LOCAL_TASKS, task, counting)
    return counting


@pytest.fixture
def shared(tmp_path: Path, loads: CountingLoads) -> tuple[HuggingGraph, HuggingGraphContext]:
    """One compiled graph on one checkpointer, and one context with one runner (one pool): what a server shares."""
    context = HuggingGraphContext(
        llm=ScriptedChatModel(
            plan=lambda messages: json.dumps(marked_plan(messages[-1].text, list(MODELS))),
            respond=lambda messages: markers_named(messages[-1].text),
        ),
        catalog=InMemoryCatalog(CatalogEntry(id=model_id, task=task) for task, model_id in MODELS.items()),
        runners=[LocalTransformersRunner(device="cpu", max_bytes=None)],
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        planning=PlanningAids(demos="static"),
    )
    return build_graph(InMemorySaver()), context


async def one_run(graph: HuggingGraph, context: HuggingGraphContext, n: int) -> dict[str, Any]:
    config = {"configurable": {"thread_id": f"thread-{n}"}}
    return await graph.ainvoke({"request": request(n)}, config, context=context)


def check_runs_kept_apart(states: list[dict[str, Any]], loads: CountingLoads) -> None:
    for n, state in enumerate(states):
        own = f"job-{n}"
        assert set(MARKER.findall(state["answer"])) == {own}, state["answer"]  # its lead, or its results' report
        for result in state["results"].values():
            assert result.status == "ok" and set(MARKER.findall(result.text)) == {own}, result
    assert loads.loads == Counter(MODELS.values()), "each model loads once"
    assert set(loads.peak.values()) == {1}, "no two loads of one model overlap"


def test_runs_on_threads_each_with_its_own_loop_keep_to_themselves(shared, loads: CountingLoads):
    graph, context = shared
    with ThreadPoolExecutor(RUNS) as pool:
        states = list(pool.map(lambda n: asyncio.run(one_run(graph, context, n)), range(RUNS)))
    check_runs_kept_apart(states, loads)


async def test_runs_on_one_loop_keep_to_themselves(shared, loads: CountingLoads):
    graph, context = shared
    states = await asyncio.gather(*(one_run(graph, context, n) for n in range(RUNS)))
    check_runs_kept_apart(list(states), loads)


# --- through `langgraph dev` --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose controller writes each request's marker into its plan and names the markers it is shown."""
    root = tmp_path_factory.mktemp("server")
    build_tiny_model("text-classification", root / "home" / "models" / "tiny-text-classification")
    replies: Replies = {
        "plan": lambda texts: json.dumps({"tasks": marked_plan(texts[-1], ["text-classification"])}),
        "respond": lambda texts: markers_named(texts[-1]),
        # The tiny model and the controller itself both classify: the tiny one is chosen, so the pool is measured.
        "select": json.dumps({"model_id": "tiny-text-classification", "reason": "the tiny real model"}),
    }
    with langgraph_dev(root, replies, jobs=RUNS) as server:
        yield server


async def run_over_http(client: httpx.AsyncClient, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run request `n` on a new thread; its output and the thread's saved values."""
    thread = await client.post("/threads", json={})
    thread_id = thread.raise_for_status().json()["thread_id"]
    body = {"assistant_id": GRAPH, "input": {"request": request(n)}}
    ran = await client.post(f"/threads/{thread_id}/runs/wait", json=body)
    saved = await client.get(f"/threads/{thread_id}/state")
    return ran.raise_for_status().json(), saved.raise_for_status().json()["values"]


@pytest.mark.slow
async def test_concurrent_runs_through_langgraph_dev_keep_to_themselves(server: Server):
    start, asked = server.log.stat().st_size, len(server.controller.requests)
    async with httpx.AsyncClient(base_url=server.url, timeout=240) as client:
        outcomes = await asyncio.gather(*(run_over_http(client, n) for n in range(RUNS)))
    for n, (state, values) in enumerate(outcomes):
        own = f"job-{n}"
        assert set(MARKER.findall(state["answer"])) == {own}, server.log_tail(start)
        assert MARKER.findall(state["plan"][0]["args"]["text"]) == [own]
        assert state["results"]["0"]["status"] == "ok" and values["request"] == request(n)
    # Random-weight results get no written answer: a second plan before the first model choice shows the overlap.
    stages = [r.stage for r in server.controller.requests[asked:] if r.stage in ("plan", "select")]
    assert stages.index("select") > 1, f"the runs did not overlap: {stages}"
