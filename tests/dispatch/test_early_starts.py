"""Tasks started while the plan is written: before the plan is finished, never against the finished plan, and
resumable when the run dies mid-stream."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk

from hugginggraph import HuggingGraphContext, build_graph, sqlite_checkpointer
from hugginggraph.graph.checkpoint import DURABILITY
from hugginggraph.planning.plan_schema import reply_plan
from hugginggraph.planning.plan_stream import whole_tasks
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.tools.runners.base import RunnerOutput

WORD_S = 0.02
"""Seconds between the planner's words: a plan of two tasks takes about a second to write."""


class SlowPlanner(ScriptedChatModel):
    """Writes its replies word by word, at a pace a local controller might."""

    async def _astream(
        self, messages: list[BaseMessage], stop: Sequence[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._stream(messages, list(stop) if stop else None):
            await asyncio.sleep(WORD_S)
            yield chunk


def classify(task_id: int, text: str) -> dict[str, Any]:
    return {"task": "text-classification", "id": task_id, "dep": [-1], "args": {"text": text}}


def labeller(calls: list[str]):
    """A model that records each text it is given and labels it."""

    async def run(card, task, inputs, artifacts) -> RunnerOutput:
        calls.append(inputs["text"])
        return RunnerOutput(text=f"label({inputs['text']})")

    return run


async def stream_events(context: HuggingGraphContext, saver: Any, graph_input: Any, thread: str = "t") -> list[Any]:
    graph = build_graph(saver)
    config = {"configurable": {"thread_id": thread}}
    return [
        item
        async for item in graph.astream(
            graph_input, config, context=context, stream_mode=["custom", "updates"], durability=DURABILITY
        )
    ]


def test_only_the_tasks_followed_by_another_are_whole():
    written = json.dumps({"tasks": [classify(0, "a"), classify(1, "b")]})
    assert whole_tasks(written[: written.index('"id": 1')], reply_plan) == [classify(0, "a")]
    assert whole_tasks(written[:40], reply_plan) == []
    assert whole_tasks("", reply_plan) == [] and whole_tasks("not json", reply_plan) == []


async def test_a_task_starts_before_the_plan_is_finished(make_context, tmp_path: Path):
    texts: list[str] = []
    plan = [classify(0, "first"), classify(1, "second")]
    context = make_context(plan, {"m": ("text-classification", labeller(texts))}, llm=SlowPlanner(plan=plan))
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        events = await stream_events(context, saver, {"request": "classify both"})
    order = [
        ("started", chunk["task_id"], chunk.get("early", False)) if mode == "custom" else ("update", *chunk)
        for mode, chunk in events
        if mode == "updates" or chunk.get("event") == "task_started"
    ]
    # Task 0 was whole once task 1 began: it started while the planner was still writing, before the plan's update.
    assert order.index(("started", 0, True)) < order.index(("update", "plan"))
    # Task 1 was whole only when the plan was: it ran in the execution stage.
    assert order.index(("started", 1, False)) > order.index(("update", "validate"))
    assert texts == ["first", "second"]  # each model call once: execution took the early one
    results = next(chunk["execute"]["results"] for mode, chunk in events if mode == "updates" and "execute" in chunk)
    assert [results[i].text for i in (0, 1)] == ["label(first)", "label(second)"]


async def test_a_task_the_finished_plan_changed_runs_as_the_finished_plan_says(make_context, tmp_path: Path):
    texts: list[str] = []
    # The first plan names a file nobody gave; the fix pass's plan mends it and changes the first task's text.
    first = [classify(0, "draft"), {"task": "image-classification", "id": 1, "dep": [-1], "args": {"image": "no.png"}}]
    fixed = [classify(0, "final"), classify(1, "other")]

    def planner(messages: list[BaseMessage]) -> str:
        return json.dumps(fixed if "no.png" in messages[-1].text or len(messages) > 3 else first)

    models = {"m": ("text-classification", labeller(texts)), "i": ("image-classification", labeller(texts))}
    context = make_context(first, models, llm=SlowPlanner(plan=planner))
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        events = await stream_events(context, saver, {"request": "classify no.png"})
    early = [chunk for mode, chunk in events if mode == "custom" and chunk.get("early")]
    assert [chunk["task_id"] for chunk in early] == [0]  # "draft" started early, from the first plan
    results = next(chunk["execute"]["results"] for mode, chunk in events if mode == "updates" and "execute" in chunk)
    assert [results[i].text for i in (0, 1)] == ["label(final)", "label(other)"]
    # The early call was not taken for the changed task: cancelled at the end of execution, whether or not it had
    # reached its model by then; nothing is left behind.
    assert texts.count("final") == 1 and texts.count("other") == 1 and set(texts) <= {"draft", "final", "other"}
    assert context.early_starts.cancel(str(tmp_path / "artifacts" / "t")) == 0


async def test_a_run_killed_mid_stream_resumes_and_finishes(make_context, tmp_path: Path):
    texts: list[str] = []
    plan = [classify(0, "first"), classify(1, "second"), classify(2, "third")]
    context = make_context(plan, {"m": ("text-classification", labeller(texts))}, llm=SlowPlanner(plan=plan))
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        graph = build_graph(saver)
        config = {"configurable": {"thread_id": "t"}}

        async def until_killed() -> None:
            async for chunk in graph.astream(
                {"request": "classify all"}, config, context=context, stream_mode="custom", durability=DURABILITY
            ):
                if chunk.get("event") == "task_started":
                    raise KeyboardInterrupt  # the process dies with the plan half written and a task started

        with pytest.raises(KeyboardInterrupt):
            await until_killed()
        snapshot = await graph.aget_state(config)
        assert snapshot.next == ("plan",)  # the request was saved; planning had not finished
        done = await graph.ainvoke(None, config, context=context, durability=DURABILITY)
    assert [done["results"][i].text for i in (0, 1, 2)] == ["label(first)", "label(second)", "label(third)"]
    assert set(texts) == {"first", "second", "third"}
