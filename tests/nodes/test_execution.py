"""Hand-offs between tasks: `<GENERATED>-k` becomes text or an artifact path."""

import pytest

from hugginggraph.graph.state import Task, TaskResult
from hugginggraph.nodes.execution import MissingInput, resolve_inputs
from hugginggraph.tools.artifacts import Artifact

DRAWING = TaskResult(
    task_id=0,
    task="text-to-image",
    status="ok",
    text="/runs/t/task-0-image.png",
    artifacts=[Artifact(kind="image", path="/runs/t/task-0-image.png")],
)
CAPTION = TaskResult(task_id=1, task="image-to-text", status="ok", text="a red bus")


def test_text_references_are_spliced_into_their_text():
    task = Task(id=2, task="translation", dep=[1], args={"text": "Translate: <GENERATED>-1!"})
    assert resolve_inputs(task, {1: CAPTION}) == {"text": "Translate: a red bus!"}


def test_media_references_become_the_artifact_path():
    task = Task(id=2, task="image-classification", dep=[0], args={"image": "<GENERATED>-0"})
    assert resolve_inputs(task, {0: DRAWING}) == {"image": "/runs/t/task-0-image.png"}


def test_a_media_reference_to_a_task_without_that_media_is_a_clear_error():
    task = Task(id=2, task="image-classification", dep=[1], args={"image": "<GENERATED>-1"})
    with pytest.raises(MissingInput, match=r"task 1 \(image-to-text\) produced no image"):
        resolve_inputs(task, {1: CAPTION})


async def test_a_dependant_of_a_task_without_an_image_fails_with_that_reason(make_context, run_graph):
    from conftest import echo

    plan = [
        {"task": "text-classification", "id": 0, "args": {"text": "hi"}},
        {"task": "image-classification", "id": 1, "dep": [0], "args": {"image": "<GENERATED>-0"}},
    ]
    context = make_context(plan, {"c": ("text-classification", echo()), "i": ("image-classification", echo())})
    out = await run_graph(context)
    assert out["results"][1].status == "failed"
    assert "produced no image" in out["results"][1].error
