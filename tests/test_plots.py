"""The plan picture: tasks in columns by dependency depth, boxes coloured by status, drawn to PNG offline."""

from __future__ import annotations

from io import BytesIO

import pytest

from hugginggraph.graph.state import Task, TaskResult
from hugginggraph.plots import STATUS_COLOURS, plan_figure, plan_layers

DAG = [
    Task(id=0, task="image-to-text", args={"image": "street.png"}),
    Task(id=1, task="automatic-speech-recognition", args={"audio": "memo.wav"}),
    Task(id=2, task="sentence-similarity", dep=[0, 1], args={"text": "<GENERATED>-0", "text2": "<GENERATED>-1"}),
]


def png(figure) -> bytes:
    buffer = BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def test_layers_follow_dependency_depth():
    assert [[task.id for task in layer] for layer in plan_layers(DAG)] == [[0, 1], [2]]


def test_a_missing_or_later_dependency_counts_as_none():
    plan = [Task(id=0, task="a", dep=[1]), Task(id=1, task="b", dep=[0]), Task(id=2, task="c", dep=[9])]
    assert [[task.id for task in layer] for layer in plan_layers(plan)] == [[0, 2], [1]]


def test_a_dag_draws_one_box_per_task_and_one_arrow_per_dependency():
    pytest.importorskip("matplotlib", reason="pip install '.[eval]'")
    results = {
        0: TaskResult(task_id=0, task="image-to-text", status="ok"),
        1: TaskResult(task_id=1, task="automatic-speech-recognition", status="failed", error="no model"),
    }
    figure = plan_figure(DAG, results)

    assert png(figure).startswith(b"\x89PNG")
    texts = figure.axes[0].texts
    boxes = {text.get_text(): text for text in texts if text.get_text()}
    assert set(boxes) == {
        "0: image-to-text\nok",
        "1: automatic-speech-recognition\nfailed",
        "2: sentence-similarity\nnot run",
    }
    assert boxes["2: sentence-similarity\nnot run"].xy[0] == 1  # second column: it needs both others
    from matplotlib.colors import to_rgba

    assert boxes["1: automatic-speech-recognition\nfailed"].get_bbox_patch().get_facecolor() == to_rgba(
        STATUS_COLOURS["failed"]
    )
    assert len([text for text in texts if not text.get_text()]) == 2  # arrows


def test_an_empty_plan_draws():
    pytest.importorskip("matplotlib", reason="pip install '.[eval]'")
    assert png(plan_figure([])).startswith(b"\x89PNG")
