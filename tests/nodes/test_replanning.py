"""Replan once: when tasks fail, the controller sees what became of each and may propose another way; finished
results are reused, the replacement goes through every stage, and a second failure ends the story."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import echo

from hugginggraph.console import RunPrinter
from hugginggraph.context_assembly import default_catalog, default_runners
from hugginggraph.graph.context import HuggingGraphContext, PlanningAids
from hugginggraph.graph.state import Task, TaskResult
from hugginggraph.planning.planner import Planner
from hugginggraph.planning.replacement import another_way_exists, renumbered, repeats, unrunnable
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.tools.tasks import TASKS

FIRST = [
    {"task": "text-classification", "id": 0, "dep": [-1], "args": {"text": "what a fine day"}},
    {"task": "image-to-text", "id": 1, "dep": [-1], "args": {"image": "photo.png"}},
    {"task": "summarization", "id": 2, "dep": [1], "args": {"text": "<GENERATED>-1"}},
]
ANOTHER_WAY = [
    {"task": "image-classification", "id": 0, "dep": [-1], "args": {"image": "photo.png"}},
    {"task": "summarization", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0 and <GENERATED>-0"}},
]
MODELS = {
    "sentiment": ("text-classification", echo()),
    "reader": ("image-to-text", echo(fail=RuntimeError("no text was found in photo.png"))),
    "classifier": ("image-classification", echo()),
    "summarizer": ("summarization", echo()),
}


def planner(replacement: list[dict[str, Any]]):
    """The first plan, then `replacement` when asked again after the outcomes."""

    def reply(messages) -> str:
        return json.dumps(replacement if messages[-1].text.startswith("What became of each task") else FIRST)

    return reply


def context_for(make_context, tmp_path: Path, replacement: Any, replan: bool = True, **limits: Any):
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    llm = ScriptedChatModel(plan=planner(replacement))
    context = make_context(FIRST, MODELS, llm=llm, **limits)
    return replace(context, planning=replace(context.planning, replan=replan)), llm


def test_the_replacement_is_numbered_after_the_plan_and_its_references_follow():
    moved = renumbered(ANOTHER_WAY, {0, 1, 2})
    assert [item["id"] for item in moved] == [3, 4]
    assert moved[1]["dep"] == [3] and moved[1]["args"]["text"] == "<GENERATED>-3 and <GENERATED>-3"
    # An id the replacement does not define is the plan's finished task of that id.
    reuse = renumbered([{"task": "summarization", "id": 5, "dep": [0], "args": {"text": "<GENERATED>-0"}}], {0, 1})
    assert reuse == [{"task": "summarization", "id": 2, "dep": [0], "args": {"text": "<GENERATED>-0"}}]


async def test_a_failed_part_is_done_another_way_and_finished_tasks_are_not_run_again(
    make_context, run_graph, tmp_path
):
    context, llm = context_for(make_context, tmp_path, ANOTHER_WAY)
    state = await run_graph(context)
    results = state["results"]
    assert {i: r.status for i, r in results.items()} == {0: "ok", 1: "failed", 2: "skipped", 3: "ok", 4: "ok"}
    photo = tmp_path / "photo.png"
    assert results[4].text == f"summarizer(classifier({photo}) and classifier({photo}))"
    runner = context.runners[0]
    assert [model for model, _ in runner.calls].count("sentiment") == 1  # its result was reused
    assert llm.calls.count("plan") == 2


async def test_the_controller_is_shown_each_outcome_with_its_reason(make_context, run_graph, tmp_path):
    seen: list[str] = []
    context, llm = context_for(make_context, tmp_path, [])
    first = llm.plan

    def spy(messages) -> str:
        seen.append(messages[-1].text)
        return first(messages)

    llm.plan = spy
    state = await run_graph(context)
    question = seen[-1]
    assert "- task 0 (text-classification) done: sentiment(what a fine day)" in question
    assert "- task 1 (image-to-text) failed: " in question and "no text was found in photo.png" in question
    assert "- task 2 (summarization) skipped: skipped because task 1 (image-to-text) failed" in question
    assert "numbered from 3" in question
    assert state["replanned"] == 0 and set(state["results"]) == {0, 1, 2}  # nothing else to do: answered as it is


async def test_a_task_with_no_model_here_cannot_be_proposed_again(make_context, run_graph, tmp_path, monkeypatch):
    offered: list[set[str]] = []
    ask = Planner.ask

    async def spy(self, messages, listeners=()):
        offered.append(set(self.tasks))
        return await ask(self, messages, listeners)

    monkeypatch.setattr(Planner, "ask", spy)
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    detect = [{"task": "object-detection", "id": 0, "dep": [-1], "args": {"image": "photo.png"}}]

    def reply(messages) -> str:
        again = messages[-1].text.startswith("What became of each task")
        return json.dumps(ANOTHER_WAY[:1] if again else detect)

    context = make_context(detect, MODELS, llm=ScriptedChatModel(plan=reply))
    state = await run_graph(replace(context, planning=replace(context.planning, replan=True)))
    first, again = offered
    assert "object-detection" in first and "object-detection" not in again  # no model ran it: not offered again
    assert "image-to-text" in again and "image-classification" in again
    assert state["results"][0].status == "failed" and state["results"][1].status == "ok"
    assert unrunnable([state["results"][0]]) == {"object-detection"}


async def test_no_call_is_made_when_no_task_type_offered_could_do_the_failed_part(make_context, run_graph):
    """Nothing but text-to-image draws from words: with no model for it here, there is nothing to ask for."""
    draw = [{"task": "text-to-image", "id": 0, "dep": [-1], "args": {"text": "a red apple"}}]
    llm = ScriptedChatModel(plan=draw)
    context = make_context(draw, MODELS, llm=llm)
    state = await run_graph(replace(context, planning=replace(context.planning, replan=True)))
    assert state["results"][0].status == "failed" and state["replanned"] == 0
    assert llm.calls.count("plan") == 1


def test_another_way_exists_for_a_failed_model_or_a_type_another_can_stand_for():
    def failed(task: str, started: bool) -> TaskResult:
        return TaskResult(task_id=0, task=task, status="failed", started_at=1.0 if started else None)

    assert not another_way_exists([failed("text-to-image", started=False)], TASKS)
    assert not another_way_exists([failed("text-to-speech", started=False)], TASKS)
    assert another_way_exists([failed("text-to-image", started=True)], TASKS)  # another input may work
    assert another_way_exists([failed("visual-question-answering", started=False)], TASKS)  # image-to-text


def test_a_task_of_the_plan_proposed_again_as_it_was_is_dropped():
    plan = [
        Task(id=0, task="text-classification", args={"text": "hi"}),
        Task(id=1, task="image-to-text", args={"image": "photo.png"}),
    ]
    done = {"task": "text-classification", "id": 0, "args": {"text": "hi"}}
    failed = {"task": "image-to-text", "id": 1, "args": {"image": "photo.png"}}
    other = {"task": "image-to-text", "id": 2, "args": {"image": "scan.png"}}
    assert repeats([done, failed, other], plan) == [other]


async def test_a_replacement_that_cannot_run_is_not_added_nor_what_reads_it(make_context, run_graph, tmp_path):
    """Asked for another way to draw a picture, the 1.5B asked a question about "counter.png", which nobody named:
    the answer reported a second failure the user never asked for."""
    invented = [
        {"task": "image-classification", "id": 0, "dep": [-1], "args": {"image": "counter.png"}},
        {"task": "summarization", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
        {"task": "image-classification", "id": 2, "dep": [-1], "args": {"image": "photo.png"}},
    ]
    context, _ = context_for(make_context, tmp_path, invented)
    state = await run_graph(context)
    assert state["replanned"] == 1
    added = state["plan"][-1]
    assert added.task == "image-classification" and added.args["image"].endswith("photo.png")
    assert "counter.png" not in state["answer"]


async def test_a_replacement_that_fails_too_is_not_replanned_again(make_context, run_graph, tmp_path):
    again = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "photo.png", "text": "try harder"}}]
    context, llm = context_for(make_context, tmp_path, again)
    state = await run_graph(context)
    assert state["results"][3].status == "failed" and llm.calls.count("plan") == 2
    assert "answer" in state


async def test_off_the_failures_are_answered_as_they_are_without_a_call(make_context, run_graph, tmp_path):
    context, llm = context_for(make_context, tmp_path, ANOTHER_WAY, replan=False)
    state = await run_graph(context)
    assert set(state["results"]) == {0, 1, 2} and llm.calls.count("plan") == 1
    assert state["replanned"] == 0


@pytest.mark.parametrize(("calls", "replanned"), [(2, False), (3, True)])
async def test_the_answer_keeps_its_call_under_the_budget(calls, replanned, make_context, run_graph, tmp_path):
    context, llm = context_for(make_context, tmp_path, ANOTHER_WAY, max_llm_calls=calls)
    state = await run_graph(context)
    assert (set(state["results"]) == {0, 1, 2, 3, 4}) is replanned
    # With failures the answer is the report alone; once the replacement worked, the controller writes its lead.
    assert llm.calls == (["plan", "plan", "respond"] if replanned else ["plan"])
    assert not state["stopped"]


async def test_the_stream_tells_of_the_replan_and_the_printer_shows_it(make_context, tmp_path):
    import io

    from hugginggraph.graph.builder import build_graph

    context, _ = context_for(make_context, tmp_path, ANOTHER_WAY)
    events, out = [], io.StringIO()
    printer = RunPrinter(out)
    config = {"configurable": {"thread_id": "t"}}
    async for event in build_graph().astream({"request": "do it"}, config, context=context, stream_mode="custom"):
        events.append(event)
        printer.event(event)
    replanned = [event for event in events if event["event"] == "replanned"]
    assert [(e["failed"], [t["id"] for t in e["tasks"]]) for e in replanned] == [([1, 2], [3, 4])]
    assert "Replanned after tasks 1, 2 did not finish: 2 new tasks." in out.getvalue()
    started = [event["task_id"] for event in events if event["event"] == "task_started"]
    assert sorted(started) == [0, 1, 3, 4]  # task 0 once: the replan reuses its result


@pytest.mark.slow
async def test_a_real_model_that_fails_is_replaced_by_a_real_model_that_answers(run_graph, tmp_path):
    """RapidOCR finds no text in a photo of a cat and fails; the replacement classifies it with EfficientNet."""
    data = pytest.importorskip("skimage.data", reason="scikit-image is not installed (the test extra)")
    from PIL import Image

    Image.fromarray(data.chelsea()).save(tmp_path / "cat.jpg")
    first = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.jpg"}}]
    instead = [{"task": "image-classification", "id": 0, "dep": [-1], "args": {"image": "cat.jpg"}}]

    def reply(messages) -> str:
        return json.dumps(instead if messages[-1].text.startswith("What became of each task") else first)

    context = HuggingGraphContext(
        llm=ScriptedChatModel(plan=reply),
        catalog=default_catalog(hub=False),
        runners=default_runners(),
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        planning=PlanningAids(demos="static", replan=True),
    )
    state = await run_graph(context, "what is written on cat.jpg?")
    failed, classified = state["results"][0], state["results"][1]
    assert failed.status == "failed" and "no text was found in cat.jpg" in (failed.error or "")
    assert classified.status == "ok" and classified.model_id and "cat" in (classified.text or "").lower()
