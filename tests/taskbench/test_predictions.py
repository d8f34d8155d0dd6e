"""Planning TaskBench records with our planner and scoring the plans: resumable predictions, failures as empty
plans, the fix pass, and an unreachable controller that stops the evaluation."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.exceptions import ModelConnectionError
from langchain_core.messages import BaseMessage, HumanMessage
from pydantic import Field

from hugginggraph.graph.context import PlanningAids
from hugginggraph.planning.planner import Planner
from hugginggraph.taskbench.predictions import Prediction, plan_records, predict, read_predictions, score
from hugginggraph.taskbench.records import TaskBenchRecord, TaskNode
from hugginggraph.testing import ScriptedChatModel, stage_of
from hugginggraph.tools.demo_bank import default_demo_bank
from hugginggraph.tools.llm_json import ControllerUnavailable
from hugginggraph.tools.tasks import TASKS

OUTPUT_TYPES = {task_id: spec.output for task_id, spec in TASKS.items()}


def record(record_id: str, shape: str, instruction: str, *nodes: tuple[str, list[Any]]) -> TaskBenchRecord:
    task_nodes = [TaskNode(task=task, arguments=arguments) for task, arguments in nodes]
    return TaskBenchRecord(id=record_id, instruction=instruction, type=shape, task_nodes=task_nodes)


RECORDS = [
    record("101", "single", "Describe 'cat.jpg' in words.", ("Image-to-Text", ["cat.jpg"])),
    record(
        "102",
        "chain",
        "Describe cat.jpg, then read the description aloud.",
        ("Image-to-Text", ["cat.jpg"]),
        ("Text-to-Speech", ["<node-0>"]),
    ),
    record("103", "single", "Translate 'good morning' into German.", ("Translation", ["good morning"])),
]
CHAIN = [
    {"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.jpg"}},
    {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
]
CHAIN_NODES = [
    {"task": "image-to-text", "arguments": ["cat.jpg"]},
    {"task": "text-to-speech", "arguments": ["<node-0>"]},
]
UNKNOWN_TASK = [{"task": "magic-wand", "id": 0, "dep": [-1], "args": {"text": "x"}}]


class PlanByFunction(ScriptedChatModel):
    """A scripted controller whose plan is a function of the planner's messages (ScriptedChatModel's is fixed);
    it keeps the messages of every planning call."""

    planner: Callable[[Sequence[BaseMessage]], str]
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def _reply(self, messages: Sequence[BaseMessage]) -> str:
        if stage_of(messages) != "plan":
            return super()._reply(messages)
        self.calls.append("plan")
        self.seen.append(list(messages))
        return self.planner(messages)


def in_turn(*plans: list[dict[str, Any]]) -> Callable[[Sequence[BaseMessage]], str]:
    """Each call's plan in turn, the last one repeated."""
    replies = iter(plans)
    last: list[dict[str, Any]] = []

    def reply(messages: Sequence[BaseMessage]) -> str:
        nonlocal last
        last = next(replies, last)
        return json.dumps(last)

    return reply


def request_of(messages: Sequence[BaseMessage]) -> str:
    """The request being planned: the last user turn that names input files (the fix-pass turn does not)."""
    return next(m.text for m in reversed(messages) if isinstance(m, HumanMessage) and "Input files:" in m.text)


def planner_for(llm: ScriptedChatModel, **aids: Any) -> Planner:
    return Planner(llm, TASKS, PlanningAids(demos="static", **aids), default_demo_bank())


async def test_predictions_are_saved_and_a_second_run_plans_nothing(tmp_path):
    path = tmp_path / "out" / "predictions.jsonl"
    llm = ScriptedChatModel(plan=CHAIN)
    predictions = await plan_records(planner_for(llm), RECORDS, path, progress=False)

    # Once per record, plus a fix pass for 103, whose request gives no cat.jpg: the workspace holds only the files
    # a request names, so a plan using another file is shown its problem as in a real run.
    assert llm.calls == ["plan"] * 4
    assert list(predictions) == ["101", "102", "103"]
    chain = predictions["102"]
    assert (chain.type, chain.task_nodes, chain.raw_plan, chain.error, chain.fixed) == (
        "chain",
        CHAIN_NODES,
        CHAIN,
        None,
        False,
    )
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [Prediction.model_validate_json(line) for line in lines] == list(predictions.values())

    again = ScriptedChatModel(plan=CHAIN)
    assert await plan_records(planner_for(again), RECORDS, path, progress=False) == predictions
    assert again.calls == []
    assert path.read_text(encoding="utf-8").splitlines() == lines  # nothing appended


async def test_progress_counts_the_saved_records_and_goes_to_stderr(tmp_path, capsys):
    path = tmp_path / "predictions.jsonl"
    path.write_text(Prediction(id="101", type="single").model_dump_json() + "\n", encoding="utf-8")
    await plan_records(planner_for(ScriptedChatModel(plan=CHAIN)), RECORDS, path)
    printed = capsys.readouterr()
    assert "planning" in printed.err and "3/3" in printed.err and printed.out == ""


async def test_a_torn_last_line_is_ignored_and_its_record_planned_again(tmp_path):
    path = tmp_path / "predictions.jsonl"
    saved = Prediction(id="101", type="single", task_nodes=[{"task": "image-to-text", "arguments": ["cat.jpg"]}])
    path.write_text(saved.model_dump_json() + '\n{"id": "102", "type": "ch', encoding="utf-8")  # killed mid-write
    assert read_predictions(path) == {"101": saved}

    llm = ScriptedChatModel(plan=CHAIN)
    predictions = await plan_records(planner_for(llm), RECORDS, path, progress=False)
    assert llm.calls == ["plan"] * 3  # 102, and 103 with its fix pass; 101 was saved
    assert predictions["101"] == saved
    assert predictions["102"].task_nodes == CHAIN_NODES


async def test_a_prediction_made_after_a_torn_line_survives_a_restart(tmp_path):
    path = tmp_path / "predictions.jsonl"
    saved = Prediction(id="101", type="single")
    path.write_text(saved.model_dump_json() + '\n{"id": "102", "type": "ch', encoding="utf-8")
    await plan_records(planner_for(ScriptedChatModel(plan=CHAIN)), RECORDS, path, progress=False)
    assert set(read_predictions(path)) == {"101", "102", "103"}


async def test_a_reply_without_a_plan_is_an_error_and_scores_as_an_empty_plan(tmp_path):
    llm = ScriptedChatModel(plan="not json")
    predictions = await plan_records(planner_for(llm), RECORDS[1:2], tmp_path / "p.jsonl", progress=False)

    failed = predictions["102"]
    assert failed.error is not None and "did not return a usable plan" in failed.error
    assert (failed.task_nodes, failed.raw_plan, failed.fixed) == ([], [], False)
    assert llm.calls == ["plan"]  # nothing to fix in a plan that did not parse
    # The truth has 2 nodes, 1 link, 2 argument names and values; all missed: 0 on every metric.
    assert score(RECORDS[1:2], predictions, OUTPUT_TYPES)["overall"].as_percent() == {
        "n-F1": 0.0,
        "e-F1": 0.0,
        "t-F1": 0.0,
        "v-F1": 0.0,
    }


async def test_a_record_whose_planning_raises_gets_the_error_and_the_others_are_planned(tmp_path):
    def planner(messages: Sequence[BaseMessage]) -> str:
        if "read the description aloud" in request_of(messages):
            raise RuntimeError("the model fell over")
        return json.dumps(CHAIN)

    llm = PlanByFunction(planner=planner)
    path = tmp_path / "p.jsonl"
    predictions = await plan_records(planner_for(llm), RECORDS, path, progress=False)

    assert predictions["102"].error == "RuntimeError: the model fell over"
    assert predictions["102"].task_nodes == []
    assert [predictions[i].error for i in ("101", "103")] == [None, None]
    assert [predictions[i].task_nodes for i in ("101", "103")] == [CHAIN_NODES, CHAIN_NODES]
    assert set(read_predictions(path)) == {"101", "102", "103"}  # the failure is saved: it is its score


async def test_an_unreachable_controller_stops_the_evaluation_and_keeps_what_was_planned(tmp_path):
    def planner(messages: Sequence[BaseMessage]) -> str:
        if "read the description aloud" in request_of(messages):
            raise ModelConnectionError("Connection refused")
        return json.dumps(CHAIN)

    path = tmp_path / "p.jsonl"
    with pytest.raises(ControllerUnavailable, match="could not be reached"):
        await plan_records(planner_for(PlanByFunction(planner=planner)), RECORDS, path, progress=False)
    assert set(read_predictions(path)) == {"101"}  # resumable from there; 102 is not saved as a failure


async def test_a_plan_with_an_unknown_task_is_fixed_by_a_second_pass():
    llm = PlanByFunction(planner=in_turn(UNKNOWN_TASK, CHAIN))
    prediction = await predict(planner_for(llm), RECORDS[1])

    assert llm.calls == ["plan", "plan"]
    assert (prediction.fixed, prediction.error, prediction.task_nodes, prediction.raw_plan) == (
        True,
        None,
        CHAIN_NODES,
        CHAIN,
    )
    fix_turn = llm.seen[1][-1].text  # the first plan is shown back with what cannot run in it
    assert "That plan cannot run" in fix_turn and "unknown task type 'magic-wand'" in fix_turn
    assert json.loads(llm.seen[1][-2].text) == UNKNOWN_TASK
    assert llm.seen[1][:-2] == llm.seen[0]


async def test_a_second_plan_no_better_than_the_first_is_not_used():
    llm = ScriptedChatModel(plan=UNKNOWN_TASK)  # the same plan twice
    prediction = await predict(planner_for(llm), RECORDS[2])
    assert llm.calls == ["plan", "plan"]
    assert not prediction.fixed
    assert prediction.task_nodes == [{"task": "magic-wand", "arguments": ["x"]}]  # scored as planned


async def test_without_the_fix_pass_the_first_plan_is_scored():
    llm = PlanByFunction(planner=in_turn(UNKNOWN_TASK, CHAIN))
    prediction = await predict(planner_for(llm, fix_pass=False), RECORDS[1])
    assert llm.calls == ["plan"]
    assert not prediction.fixed
    assert prediction.task_nodes == [{"task": "magic-wand", "arguments": ["x"]}]


async def test_a_second_plan_with_more_problems_is_not_taken_as_fixed():
    no_inputs = [
        {"task": "image-to-text", "id": 0, "dep": [-1], "args": {}},
        {"task": "text-to-speech", "id": 1, "dep": [-1], "args": {}},
    ]  # two tasks without their input: two short problems, against one long "unknown task type" one
    llm = PlanByFunction(planner=in_turn(UNKNOWN_TASK, no_inputs))
    prediction = await predict(planner_for(llm), RECORDS[1])
    assert not prediction.fixed


async def test_a_second_plan_that_drops_tasks_is_not_taken():
    # The first plan's second task reads a file nobody gave; the "fix" answers one generic task without problems.
    first = [CHAIN[0], {"task": "text-to-speech", "id": 1, "dep": [-1], "args": {"text": "<GENERATED>-0"}}]
    first = [*first, {"task": "automatic-speech-recognition", "id": 2, "dep": [-1], "args": {"audio": "made_up.wav"}}]
    second = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.jpg"}}]
    llm = PlanByFunction(planner=in_turn(first, second))
    prediction = await predict(planner_for(llm), RECORDS[1])
    assert llm.calls == ["plan", "plan"]
    assert not prediction.fixed and len(prediction.task_nodes) == 3


@pytest.mark.parametrize(
    ("steps", "taken"),
    [
        (["describe cat.jpg in words", "read the description aloud"], True),
        (["correct the plan", "remove the unknown task"], False),  # about the fix turn, not the request
        (["generate a picture of a farmers market", "write a caption for the market picture"], False),  # a demo's
    ],
)
async def test_a_second_plan_is_taken_only_if_its_steps_are_still_the_requests(steps: list[str], taken: bool):
    second = [{**task, "step": step} for task, step in zip(CHAIN, steps, strict=True)]
    llm = PlanByFunction(planner=in_turn(UNKNOWN_TASK, second))
    prediction = await predict(planner_for(llm), RECORDS[1])
    assert llm.calls == ["plan", "plan"]
    assert prediction.fixed is taken
    assert prediction.task_nodes == (CHAIN_NODES if taken else [{"task": "magic-wand", "arguments": ["x"]}])


async def test_raw_plans_are_scored_as_written_when_repair_is_off():
    listed_backwards = [CHAIN[1], CHAIN[0]]
    repaired = await predict(planner_for(ScriptedChatModel(plan=listed_backwards)), RECORDS[1])
    raw = await predict(planner_for(ScriptedChatModel(plan=listed_backwards)), RECORDS[1], repair=False)

    assert repaired.task_nodes == CHAIN_NODES
    assert any("reordered" in note for note in repaired.repairs)
    assert raw.task_nodes == [
        {"task": "text-to-speech", "arguments": ["<node-1>"]},  # task 0 is listed second
        {"task": "image-to-text", "arguments": ["cat.jpg"]},
    ]
    assert raw.repairs == []


def test_scores_are_grouped_by_shape_and_a_missing_prediction_is_an_empty_plan():
    predictions = {"102": Prediction(id="102", type="chain", task_nodes=CHAIN_NODES)}
    scores = score(RECORDS, predictions, OUTPUT_TYPES)

    assert {group: s.records for group, s in scores.items()} == {"overall": 3, "single": 2, "chain": 1, "dag": 0}
    assert scores["chain"].as_percent() == {"n-F1": 100.0, "e-F1": 100.0, "t-F1": 100.0, "v-F1": 100.0}
    # 101 and 103 have no prediction: their node, argument name and value are missed; neither has links.
    assert scores["single"].as_percent() == {"n-F1": 0.0, "e-F1": None, "t-F1": 0.0, "v-F1": 0.0}
    assert scores["dag"].as_percent() == {"n-F1": None, "e-F1": None, "t-F1": None, "v-F1": None}
    # Overall nodes: TP 2 (102), FN 2 (101, 103) → 4 / (4 + 2) = 66.7; links: TP 1 → 100.
    overall = scores["overall"].as_percent()
    assert overall["n-F1"] == pytest.approx(400 / 6)
    assert overall["e-F1"] == 100.0


def test_predictions_of_a_missing_file_are_none(tmp_path: Path):
    assert read_predictions(tmp_path / "nothing.jsonl") == {}


async def test_a_file_the_request_does_not_name_is_a_problem_the_fix_pass_sees():
    # The request names an image, not a recording: no file of the invented one's kind stands in for it.
    invented = [{"task": "automatic-speech-recognition", "id": 0, "dep": [-1], "args": {"audio": "made_up.wav"}}]
    given = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.jpg"}}]
    llm = PlanByFunction(planner=in_turn(invented, given))
    prediction = await predict(planner_for(llm), RECORDS[0])
    assert prediction.fixed and prediction.task_nodes == [{"task": "image-to-text", "arguments": ["cat.jpg"]}]
    assert "made_up.wav" in llm.seen[1][-1].text and "not found" in llm.seen[1][-1].text


async def test_an_invented_file_of_the_one_kind_the_request_names_is_that_file_without_a_fix_pass():
    invented = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "made_up.jpg"}}]
    llm = PlanByFunction(planner=in_turn(invented))
    prediction = await predict(planner_for(llm), RECORDS[0])
    assert llm.calls == ["plan"] and not prediction.fixed
    assert prediction.task_nodes == [{"task": "image-to-text", "arguments": ["cat.jpg"]}]


async def test_a_text_document_the_request_names_is_in_the_workspace_and_an_invented_one_is_not():
    article = record("104", "single", "Summarize my article 'example.txt'.", ("Summarization", ["example.txt"]))
    named = [{"task": "summarization", "id": 0, "dep": [-1], "args": {"text": "example.txt"}}]
    invented = [{"task": "summarization", "id": 0, "dep": [-1], "args": {"text": "article.txt"}}]
    as_named = PlanByFunction(planner=in_turn(named))
    assert not (await predict(planner_for(as_named), article)).fixed and len(as_named.seen) == 1
    as_invented = PlanByFunction(planner=in_turn(invented, named))
    assert (await predict(planner_for(as_invented), article)).fixed
    assert "input file 'article.txt' not found" in as_invented.seen[1][-1].text
