"""Training the step chooser: the data recipe (TaskBench's steps stripped of numbering, tool names and files; DAG
steps only where they name their tool; never the held-out part), a fit that learns its labels, and the command
retraining on a tiny set with MiniLM, so the script cannot rot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import word_vectors

from hugginggraph.cli import main
from hugginggraph.taskbench.records import TaskBenchRecord, split
from hugginggraph.taskbench.step_chooser_training import fit, tool_steps, training_records
from hugginggraph.tools.demo_bank import minilm_embedder
from hugginggraph.tools.step_chooser import ChooserWeights, StepChooser
from hugginggraph.tools.tasks import TASKS

TOOLS = {"text-to-speech", "translation", "image-to-text"}


def record(steps: list[str], tasks: list[str], shape: str = "chain", record_id: str = "1") -> TaskBenchRecord:
    return TaskBenchRecord.model_validate(
        {
            "id": record_id,
            "instruction": "a request",
            "type": shape,
            "task_nodes": [{"task": task, "arguments": []} for task in tasks],
            "task_steps": steps,
        }
    )


def test_steps_lose_their_numbering_tool_names_and_files():
    chain = record(
        ["Step 1: Use the Image-to-Text tool to caption photo.jpg", "2. Read the caption aloud with Text to Speech"],
        ["Image-to-Text", "Text-to-Speech"],
    )
    assert tool_steps([chain], TOOLS) == [
        ("Use it to caption it", "image-to-text"),
        ("Read the caption aloud with it", "text-to-speech"),
    ]


def test_dag_steps_count_only_where_they_name_their_tool():
    dag = record(
        ["Step 1: translate the text with the Translation model", "Step 2: read it aloud"],
        ["Translation", "Text-to-Speech"],
        shape="dag",
    )
    assert tool_steps([dag], TOOLS) == [("translate the text with it", "translation")]


def test_records_whose_steps_and_nodes_differ_in_number_and_unknown_tools_give_nothing():
    uneven = record(["Step 1: caption it"], ["Image-to-Text", "Text-to-Speech"])
    unknown = record(["Step 1: do something"], ["Image to Text Conversion"])
    assert tool_steps([uneven, unknown], TOOLS) == []


def test_odd_task_steps_read_as_none():
    odd = TaskBenchRecord.model_validate(
        {"id": "1", "instruction": "x", "type": "single", "task_nodes": [{"task": "Translation"}], "task_steps": "one"}
    )
    assert odd.task_steps == []


def test_training_never_reads_the_held_out_part_nor_the_sample_left_out():
    records = [record([], [], record_id=str(i)) for i in range(260)]
    test, tune = split(records, 200, 0)
    trained_on = training_records(records)
    assert {r.id for r in trained_on} == {r.id for r in tune}
    left = training_records(records, leave_out=20, seed=1)
    assert len(left) == 40
    assert {r.id for r in left}.isdisjoint({r.id for r in test})


def test_a_fit_learns_its_labels_and_gives_the_same_weights_twice():
    steps = [
        ("read it aloud", "text-to-speech"),
        ("translate it into french", "translation"),
        ("caption it", "image-to-text"),
    ]
    weights = fit(steps, word_vectors)
    again = fit(steps, word_vectors)
    assert np.array_equal(weights.weights, again.weights)
    chooser = StepChooser(weights, word_vectors)
    assert chooser.tasks_for_steps([phrase for phrase, _ in steps], TASKS) == [task for _, task in steps]


@pytest.mark.slow
def test_the_command_retrains_the_chooser_on_a_tiny_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    if minilm_embedder() is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    kinds: list[tuple[str, str]] = [
        ("Use the Text-to-Speech tool to read the story out loud", "Text-to-Speech"),
        ("Translate the story into German", "Translation"),
    ]
    lines: list[dict[str, Any]] = [
        {
            "id": str(i),
            "instruction": "a request",
            "type": "single",
            "task_nodes": [{"task": kinds[i % 2][1], "arguments": []}],
            "task_steps": [f"Step 1: {kinds[i % 2][0]}"],
        }
        for i in range(220)  # the evaluator's held-out part takes 200 of them
    ]
    data = tmp_path / "records.jsonl"
    data.write_text("\n".join(json.dumps(line) for line in lines), encoding="utf-8")
    tools = [{"id": "Text-to-Speech", "input-type": ["text"], "output-type": ["audio"]}]
    tools.append({"id": "Translation", "input-type": ["text"], "output-type": ["text"]})
    (tmp_path / "tool_desc.json").write_text(json.dumps({"nodes": tools}), encoding="utf-8")
    out = tmp_path / "chooser.npz"
    assert main(["train-step-chooser", "--data", str(data), "--out", str(out)]) == 0
    assert "trained on 20 records" in capsys.readouterr().out
    weights = ChooserWeights.read(out.read_bytes())
    embed = minilm_embedder()
    assert embed is not None
    chooser = StepChooser(weights, embed)
    assert chooser.tasks_for_steps(["say the poem out loud", "put the poem into German"], TASKS) == [
        "text-to-speech",
        "translation",
    ]
