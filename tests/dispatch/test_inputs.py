"""Hand-offs between tasks: `<GENERATED>-k` becomes text or an artifact path; input files are read only inside the
workspace, and outputs are written only inside the run's folder."""

from pathlib import Path

import pytest

from hugginggraph.dispatch.inputs import MissingInput, resolve_inputs
from hugginggraph.graph.state import Task, TaskResult
from hugginggraph.tools.artifacts import Artifact, InputFileError
from hugginggraph.tools.runners.base import RunnerOutput

DRAWING = TaskResult(
    task_id=0,
    task="text-to-image",
    status="ok",
    text="/runs/t/task-0-image.png",
    artifacts=[Artifact(kind="image", path="/runs/t/task-0-image.png")],
)
CAPTION = TaskResult(task_id=1, task="image-to-text", status="ok", text="a red bus")


def test_text_references_are_spliced_into_their_text(tmp_path: Path):
    task = Task(id=2, task="translation", dep=[1], args={"text": "Translate: <GENERATED>-1!"})
    assert resolve_inputs(task, {1: CAPTION}, tmp_path) == {"text": "Translate: a red bus!"}


def test_media_references_become_the_artifact_path(tmp_path: Path):
    task = Task(id=2, task="image-classification", dep=[0], args={"image": "<GENERATED>-0"})
    assert resolve_inputs(task, {0: DRAWING}, tmp_path) == {"image": "/runs/t/task-0-image.png"}


def test_a_media_reference_to_a_task_without_that_media_is_a_clear_error(tmp_path: Path):
    task = Task(id=2, task="image-classification", dep=[1], args={"image": "<GENERATED>-1"})
    with pytest.raises(MissingInput, match=r"task 1 \(image-to-text\) produced no image"):
        resolve_inputs(task, {1: CAPTION}, tmp_path)


def test_an_input_file_swapped_for_a_symlink_leading_out_after_validation_is_refused(tmp_path: Path):
    workspace, outside = tmp_path / "workspace", tmp_path / "secret.png"
    workspace.mkdir()
    outside.write_bytes(b"secret")
    (workspace / "cat.png").symlink_to(outside)  # validation saw a real file here; now it points out
    task = Task(id=0, task="image-classification", args={"image": str(workspace / "cat.png")})
    with pytest.raises(InputFileError, match="outside the workspace"):
        resolve_inputs(task, {}, workspace)


def test_text_naming_a_text_file_in_the_workspace_is_its_contents(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("Ship on Friday.", encoding="utf-8")
    task = Task(id=0, task="summarization", args={"text": "notes.txt"})
    assert resolve_inputs(task, {}, tmp_path) == {"text": "Ship on Friday."}


async def test_a_model_reads_a_named_text_file_and_one_no_one_gave_fails_only_its_task(
    make_context, run_graph, tmp_path: Path
):
    from conftest import echo

    (tmp_path / "notes.txt").write_text("Ship on Friday.", encoding="utf-8")
    plan = [
        {"task": "summarization", "id": 0, "args": {"text": "notes.txt"}},
        {"task": "summarization", "id": 1, "args": {"text": "minutes.txt"}},
    ]
    context = make_context(plan, {"s": ("summarization", echo())})
    results = (await run_graph(context))["results"]
    read, missing = results[0], results[1]
    assert read.status == "ok" and read.text == "s(Ship on Friday.)"
    assert missing.status == "failed" and "input file 'minutes.txt' not found" in missing.error


async def test_a_task_reading_an_image_from_a_text_task_fails_with_that_reason(make_context, run_graph):
    from conftest import echo

    plan = [
        {"task": "text-classification", "id": 0, "args": {"text": "hi"}},
        {"task": "image-classification", "id": 1, "dep": [0], "args": {"image": "<GENERATED>-0"}},
    ]
    context = make_context(plan, {"c": ("text-classification", echo()), "i": ("image-classification", echo())})
    out = await run_graph(context)
    assert out["results"][0].status == "ok"
    assert out["results"][1].status == "failed"
    assert "task 0 makes text and no earlier task makes image" in out["results"][1].error


async def test_outputs_stay_in_the_artifacts_folder_whatever_the_thread_id(make_context, run_graph, tmp_path: Path):
    async def speak(card, task, inputs, artifacts) -> RunnerOutput:
        return RunnerOutput(text="said", artifacts=[artifacts.save_bytes(b"RIFF", ".wav", "audio")])

    plan = [{"task": "text-to-speech", "id": 0, "args": {"text": "hello"}}]
    context = make_context(plan, {"tts": ("text-to-speech", speak)})
    for thread_id in ("../../escaped", "/tmp/escaped", "a/b", ""):
        out = await run_graph(context, thread_id=thread_id)
        (artifact,) = out["results"][0].artifacts
        assert Path(artifact.path).resolve().is_relative_to(context.artifacts_dir.resolve()), thread_id
    assert not (tmp_path.parent / "escaped").exists()


async def test_a_runner_returning_the_wrong_type_fails_that_attempt_and_falls_back(make_context, run_graph):
    from conftest import echo

    async def broken(card, task, inputs, artifacts):
        return "text, not a RunnerOutput"

    plan = [{"task": "text-classification", "id": 0, "args": {"text": "hi"}}]
    context = make_context(
        plan,
        {"broken": ("text-classification", broken), "backup": ("text-classification", echo())},
        downloads={"broken": 1000, "backup": 10},
        attempts_per_model=1,
    )
    context.llm.select = '{"model_id": "broken", "reason": "most downloaded"}'
    result = (await run_graph(context))["results"][0]
    assert result.status == "ok" and result.model_id == "backup"
    assert result.attempts == ["broken: TypeError: the runner returned str, not a RunnerOutput"]
