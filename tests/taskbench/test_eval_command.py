"""`hugginggraph eval`'s logic: plan TaskBench-format records with a controller, score them, write the report; with
a scripted controller and with `ChatOpenAI` against a fake OpenAI-compatible server."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import weights_for
from langchain_openai import ChatOpenAI
from openai_fake import FakeOpenAI, isolate_client
from pydantic import SecretStr

from hugginggraph.planning.plan_schema import MAX_PLANNED_TASKS
from hugginggraph.taskbench.eval_command import EvalMismatch, EvalOptions, add_arguments, evaluate, run_command
from hugginggraph.taskbench.predictions import Prediction, read_predictions
from hugginggraph.taskbench.records import load_records, split
from hugginggraph.taskbench.report import EvalReport
from hugginggraph.testing import ScriptedChatModel

TOOLS = [
    {"id": "Image-to-Text", "desc": "Describes an image. Long text.", "input-type": ["image"], "output-type": ["text"]},
    {"id": "Text-to-Speech", "desc": "Reads text aloud.", "input-type": ["text"], "output-type": ["audio"]},
    {"id": "Translation", "desc": "Translates text.", "input-type": ["text"], "output-type": ["text"]},
    {"id": "Sentence Similarity", "desc": "Compares texts.", "input-type": ["text", "text"], "output-type": []},
]
RECORDS = [
    {
        "id": "1",
        "type": "single",
        "instruction": "What is in 'cat.jpg'?",
        "task_nodes": [{"task": "Image-to-Text", "arguments": ["cat.jpg"]}],
    },
    {
        "id": "2",
        "type": "chain",
        "instruction": "Describe cat.jpg and read the description aloud.",
        "task_nodes": [
            {"task": "Image-to-Text", "arguments": ["cat.jpg"]},
            {"task": "Text-to-Speech", "arguments": ["<node-0>"]},
        ],
    },
]
# The plan the controller gives for every request: record 2's exactly, record 1's and one task more.
PLAN: list[dict[str, Any]] = [
    {"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "cat.jpg"}},
    {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
]
# By hand. Record 1: nodes TP 1 FP 1; links FP 1; argument names and values TP 1 FP 1 (text-to-speech's).
# Record 2: all match: nodes TP 2, links TP 1, names and values TP 2.
# Overall: nodes 2·3 / (2·3 + 1) = 6/7; links 2·1 / (2·1 + 1) = 2/3; names and values 6/7 as the nodes.
OVERALL = {"n-F1": 600 / 7, "e-F1": 200 / 3, "t-F1": 600 / 7, "v-F1": 600 / 7}
SINGLE = {"n-F1": 200 / 3, "e-F1": 0.0, "t-F1": 200 / 3, "v-F1": 200 / 3}  # record 1: 2·1 / (2·1 + 1), links 0
CHAIN = {"n-F1": 100.0, "e-F1": 100.0, "t-F1": 100.0, "v-F1": 100.0}
NOTHING = {"n-F1": None, "e-F1": None, "t-F1": None, "v-F1": None}  # no dag records


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "taskbench"
    folder.mkdir()
    (folder / "tool_desc.json").write_text(json.dumps({"nodes": TOOLS}), encoding="utf-8")
    path = folder / "records.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in RECORDS), encoding="utf-8")
    return path


def options(data: Path, out: Path, **changes: Any) -> EvalOptions:
    return EvalOptions(data=data, out=out, **{"demos": "static", **changes})  # no MiniLM in these tests


def assert_scores(report: EvalReport) -> None:
    expected: dict[str, Mapping[str, float | None]] = {
        "overall": OVERALL,
        "single": SINGLE,
        "chain": CHAIN,
        "dag": NOTHING,
    }
    assert report.scores == {
        group: {metric: pytest.approx(value) if value else value for metric, value in scores.items()}
        for group, scores in expected.items()
    }
    assert report.group_sizes == {"overall": 2, "single": 1, "chain": 1, "dag": 0}


async def test_an_evaluation_writes_predictions_scores_summary_and_chart(data, tmp_path):
    out = tmp_path / "results"
    llm = ScriptedChatModel(plan=PLAN)
    report = await evaluate(options(data, out), llm, "scripted", progress=False)

    assert llm.calls == ["plan", "plan"]
    assert_scores(report)
    assert (report.model, report.records, report.parse_failures, report.fixed_plans) == ("scripted", 2, 0, 0)
    assert report.aids == {
        "demos": "static",
        "demo_count": 4,
        "modalities": True,
        "constrained": True,
        "fix_pass": True,
        "steps": "inline",
        "step_vote": True,
        "step_chooser": "trained",
        "back_references": True,
        "direct_gate": True,
        "repair": True,
    }
    assert report.sample == str(data)  # all the records: no part, sample or limit to describe
    assert report.skipped == {}

    predictions = [
        Prediction.model_validate_json(line) for line in (out / "predictions.jsonl").read_text().splitlines()
    ]
    assert [p.id for p in predictions] == ["1", "2"]
    assert predictions[0].task_nodes == [
        {"task": "image-to-text", "arguments": ["cat.jpg"]},
        {"task": "text-to-speech", "arguments": ["<node-0>"]},
    ]
    assert EvalReport.model_validate_json((out / "scores.json").read_text()) == report
    summary = (out / "summary.md").read_text()
    assert "| group | records | n-F1 | e-F1 | t-F1 | v-F1 |" in summary
    assert "Malformed records skipped: 0." in summary
    assert "| overall | 2 | 85.7 | 66.7 | 85.7 | 85.7 |" in summary
    assert "| dag | 0 |" in summary  # a row without scores
    assert "| *GPT-4 (published)* | | 81.5 | 54.7 | 77.3 | 60.9 |" in summary
    # Record 1's plan adds text-to-speech and a link; record 2's is the truth: 3 task types of 4 right, 1 link of 2.
    assert report.counts["overall"] == {"tasks": [3, 1, 0], "links": [1, 1, 0]}
    assert "| overall | 3 | 4 | 3 | 1 | 2 | 1 |" in summary
    assert "Links the truth has and the plans lack: 0, of which 0 join two task types the plan has" in summary
    assert "the plans lack, most often: none." in summary
    assert "where the truth has none, most often: text-to-speech (1)." in summary
    assert (out / "scores.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


async def test_first_replies_of_an_earlier_evaluation_are_replayed_and_only_for_the_same_controller(data, tmp_path):
    first = await evaluate(options(data, tmp_path / "first"), ScriptedChatModel(plan=PLAN), "scripted", progress=False)
    assert first.replayed_replies == 0

    replaying = ScriptedChatModel(plan=[])  # would plan nothing, were it asked
    again = options(data, tmp_path / "again", replies_from=tmp_path / "first")
    report = await evaluate(again, replaying, "scripted", progress=False)
    assert replaying.calls == [] and report.replayed_replies == 2
    assert_scores(report)
    assert "First replies replayed from an earlier evaluation: 2." in (tmp_path / "again" / "summary.md").read_text()

    with pytest.raises(EvalMismatch, match="holds replies of scripted, not other"):
        await evaluate(options(data, tmp_path / "other", replies_from=tmp_path / "first"), replaying, "other")


async def test_a_second_run_resumes_whatever_records_it_scores_and_other_planning_options_are_refused(data, tmp_path):
    out = tmp_path / "results"
    await evaluate(options(data, out, limit=1), ScriptedChatModel(plan=PLAN), "scripted", progress=False)

    resumed = ScriptedChatModel(plan=PLAN)  # which records are scored may change: record 1 is not planned again
    assert_scores(await evaluate(options(data, out), resumed, "scripted", progress=False))
    assert resumed.calls == ["plan"]
    sampled = ScriptedChatModel(plan=PLAN)
    report = await evaluate(options(data, out, sample=1, seed=3), sampled, "scripted", progress=False)
    assert (report.records, sampled.calls) == (1, [])
    assert "1 sampled with seed 3" in report.sample

    tools = data.parent / "tools.json"
    tools.write_text(json.dumps({"nodes": TOOLS[:3]}), encoding="utf-8")
    for other, model in [
        (options(data, out, fix_pass=False), "scripted"),
        (options(data, out, demos="none"), "scripted"),
        (options(data, out, constrained=False), "scripted"),
        (options(data, out, repair=False), "scripted"),
        (options(data, out, tools=tools), "scripted"),
        (options(data, out), "another-model"),
    ]:
        with pytest.raises(EvalMismatch, match="with other options"):
            await evaluate(other, ScriptedChatModel(plan=PLAN), model, progress=False)
    assert len((out / "predictions.jsonl").read_text().splitlines()) == 2  # untouched


async def test_files_the_plans_depend_on_count_by_their_content_when_a_run_resumes(data, tmp_path):
    out, weights, moved = tmp_path / "results", tmp_path / "chooser.npz", tmp_path / "elsewhere.npz"
    weights_for({"read": "text-to-speech"}).save(weights)
    first = options(data, out, limit=1, step_vote=False, chooser_weights=weights)
    await evaluate(first, ScriptedChatModel(plan=PLAN), "scripted", progress=False)

    weights.rename(moved)
    tools = data.parent / "copy.json"
    tools.write_bytes((data.parent / "tool_desc.json").read_bytes())
    resumed = ScriptedChatModel(plan=PLAN)  # the same weights moved, the same tools given by another path
    await evaluate(
        options(data, out, step_vote=False, chooser_weights=moved, tools=tools), resumed, "scripted", progress=False
    )
    assert resumed.calls == ["plan"]  # record 2 only

    weights_for({"read": "translation"}).save(moved)
    with pytest.raises(EvalMismatch, match="with other options"):
        changed = options(data, out, step_vote=False, chooser_weights=moved)
        await evaluate(changed, ScriptedChatModel(), "scripted", progress=False)


async def test_the_test_and_tune_parts_split_the_records(data, tmp_path):
    out = tmp_path / "results"
    test = await evaluate(
        options(data, out, part="test", test_size=1), ScriptedChatModel(plan=PLAN), "s", progress=False
    )
    tune = await evaluate(
        options(data, out, part="tune", test_size=1), ScriptedChatModel(plan=PLAN), "s", progress=False
    )
    assert (test.records, tune.records) == (1, 1)
    assert "test part of a 1-record split with seed 0" in test.sample
    saved = [Prediction.model_validate_json(line).id for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert sorted(saved) == ["1", "2"]  # one record each, not the same one

    # Another sample seed draws other tune records, never held-out ones; only --split-seed changes the test part.
    held_out = {record.id for record in split(load_records(data), 1, seed=0)[0]}
    reseeded, other_split = tmp_path / "reseeded", tmp_path / "other-split"
    await evaluate(options(data, reseeded, part="tune", test_size=1, seed=1), ScriptedChatModel(plan=PLAN), "s", False)
    await evaluate(
        options(data, other_split, part="test", test_size=1, split_seed=1), ScriptedChatModel(plan=PLAN), "s", False
    )
    planned = [set(read_predictions(out / "predictions.jsonl")) for out in (reseeded, other_split)]
    assert planned[0] == planned[1] == set(saved) - held_out


def command_line(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_the_command_line_options_reach_the_evaluation(data, tmp_path, capsys):
    out = tmp_path / "cli"
    flags = [
        "--demos",
        "none",
        "--no-fix-pass",
        "--no-step-vote",
        "--no-back-references",
        "--no-repair",
        "--limit",
        "1",
    ]
    args = command_line("--data", str(data), "--out", str(out), *flags)
    llm = ScriptedChatModel(plan=[PLAN[1], PLAN[0]])  # listed backwards: scored as written without repair

    assert run_command(args, llm, "scripted") == 0
    assert llm.calls == ["plan"]
    saved = json.loads((out / "options.json").read_text())
    chosen = ("demos", "fix_pass", "step_vote", "back_references", "repair", "constrained", "steps")
    assert tuple(saved[key] for key in chosen) == ("none", False, False, False, False, True, "inline")
    (prediction,) = [Prediction.model_validate_json(line) for line in (out / "predictions.jsonl").read_text().split()]
    assert prediction.task_nodes[0] == {"task": "text-to-speech", "arguments": ["<node-1>"]}
    printed = capsys.readouterr().out
    assert "| group | records |" in printed and f"results in {out}/" in printed


def test_malformed_records_are_skipped_and_counted_by_reason_and_the_others_score_as_ever(data, tmp_path, capsys):
    noisy = data.parent / "noisy.jsonl"
    lines = [
        json.dumps(RECORDS[0]),
        "{not json",
        json.dumps({**RECORDS[1], "id": "3", "task_nodes": {"task": "Translation", "arguments": ["hi"]}}),
        json.dumps({key: value for key, value in RECORDS[1].items() if key != "instruction"} | {"id": "4"}),
        json.dumps({**RECORDS[1], "task_links": "Image-to-Text, Text-to-Speech", "task_steps": None}),  # never read
        json.dumps(RECORDS[0]),
    ]
    noisy.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "results"
    args = command_line("--data", str(noisy), "--out", str(out), "--demos", "static")

    assert run_command(args, ScriptedChatModel(plan=PLAN), "scripted") == 0

    report = EvalReport.model_validate_json((out / "scores.json").read_text())
    assert_scores(report)  # records 1 and 2, scored as in a file of their own
    reasons = {"not a JSON object": 1, "task_nodes not a list": 1, "no request": 1, "repeated id": 1}
    assert report.skipped == reasons
    said = f"Malformed records skipped: 4 ({', '.join(f'{reason}: 1' for reason in reasons)})."
    assert said in (out / "summary.md").read_text() and said in capsys.readouterr().out


@pytest.fixture
def openai_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    isolate_client(monkeypatch)
    with FakeOpenAI() as fake:
        yield fake


async def test_an_openai_compatible_controller_plans_through_strict_structured_output(data, tmp_path, openai_server):
    unused = dict.fromkeys(("text", "image", "audio", "video"))  # strict mode writes every argument, null if unused
    openai_server.replies = {
        "plan": json.dumps({"tasks": [{"step": "a step", **task, "args": {**unused, **task["args"]}} for task in PLAN]})
    }
    llm = ChatOpenAI(base_url=openai_server.base_url, api_key=SecretStr("sk-test"), model="fake-model", max_retries=0)

    report = await evaluate(options(data, tmp_path / "results"), llm, "fake-model", progress=False)

    assert [(r.stage, r.status) for r in openai_server.requests] == [("plan", 200)] * 2  # no refusal, no retry
    json_schema = openai_server.requests[0].json_schema
    assert json_schema is not None and (json_schema["name"], json_schema["strict"]) == ("PlanOutput", True)
    schema = json_schema["schema"]
    tasks = schema["properties"]["tasks"]
    assert tasks["maxItems"] == MAX_PLANNED_TASKS
    task = schema["$defs"][tasks["items"]["$ref"].removeprefix("#/$defs/")]
    assert task["properties"]["task"]["enum"] == [
        "image-to-text",
        "text-to-speech",
        "translation",
        "sentence-similarity",
    ]
    assert_scores(report)
    assert report.parse_failures == 0
