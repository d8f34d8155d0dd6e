"""The real graph on real components: tiny `transformers` models built from configs, found by the local folder
catalog, run by the local transformers runner, checkpointed in SQLite. Outputs are noise; the tests check
types, files and wiring, never meaning."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from hugginggraph import HuggingGraphContext, Limits
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.testing.tiny_models import build_tiny_model
from hugginggraph.tools.catalog import LocalFolderCatalog
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

pytestmark = pytest.mark.slow

PLAN = [
    {"task": "text-generation", "id": 0, "dep": [-1], "args": {"text": "Once upon a time"}},
    {"task": "text-classification", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
    {"task": "depth-estimation", "id": 2, "dep": [-1], "args": {"image": "street.png"}},
    {"task": "image-classification", "id": 3, "dep": [2], "args": {"image": "<GENERATED>-2"}},
]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    Image.effect_noise((48, 40), 64).convert("RGB").save(tmp_path / "street.png")
    return tmp_path


@pytest.fixture
def models(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    for task in ("text-generation", "text-classification", "depth-estimation", "image-classification"):
        build_tiny_model(task, root / f"tiny-{task}", downloads=10)
    return root


def real_context(models: Path, workspace: Path, llm: ScriptedChatModel) -> HuggingGraphContext:
    return HuggingGraphContext(
        llm=llm,
        catalog=LocalFolderCatalog([models]),
        runners=[LocalTransformersRunner(torch_threads=1)],
        workspace=workspace,
        artifacts_dir=workspace / "artifacts",
        limits=Limits(task_timeout_s=120),
    )


async def test_four_tasks_hand_off_text_and_an_image_through_real_models(models, workspace, run_graph):
    context = real_context(models, workspace, ScriptedChatModel(plan=PLAN))
    out = await run_graph(context, request="write, label, map depth, classify", files=["street.png"])

    results = out["results"]
    assert {r.status for r in results.values()} == {"ok"}, {i: r.error for i, r in results.items()}
    assert {r.model_id for r in results.values()} == {f"tiny-{t['task']}" for t in PLAN}
    story, label, depth, kind = (results[i] for i in range(4))
    assert isinstance(story.text, str) and story.text
    assert label.data and label.data[0]["label"] in {"NEGATIVE", "POSITIVE"}  # classified the generated text
    (depth_map,) = depth.artifacts
    assert depth_map.kind == "image" and Path(depth_map.path).is_file()
    assert Image.open(depth_map.path).size == (48, 40)
    assert kind.data[0]["label"] in {"cat", "dog", "bird"}  # classified the depth map: the image hand-off
    # Tiny models have random weights: the answer reports each result as noise, and the controller writes none of it.
    assert context.llm.calls == ["plan"] and out["answer"].count("random weights: this is noise") == 4
    assert depth_map.path in out["answer"]
    assert [task.id for task in out["plan"]] == [0, 1, 2, 3] and out["plan_repairs"] == []


async def test_a_model_that_fails_to_load_falls_back_to_the_next_real_model(models, workspace, run_graph):
    broken = models / "broken-classifier"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "bert"}')
    (broken / "README.md").write_text("---\npipeline_tag: text-classification\ndownloads: 1000\n---\nNo weights.\n")
    plan = [{"task": "text-classification", "id": 0, "args": {"text": "a fine day"}}]
    llm = ScriptedChatModel(plan=plan, select='{"model_id": "broken-classifier", "reason": "most downloaded"}')
    out = await run_graph(real_context(models, workspace, llm))
    result = out["results"][0]
    assert result.status == "ok" and result.model_id == "tiny-text-classification"
    assert len(result.attempts) == 1 and result.attempts[0].startswith("broken-classifier: could not load")


async def test_a_question_planned_without_its_passage_is_answered_from_the_summary_of_a_named_text_file(
    tmp_path: Path, workspace: Path, run_graph
):
    """The planner's wiring (`nodes.back_references`) gives the question the earlier result as its passage, and the
    executor reads notes.txt's words, not its name: both checked on real models."""
    models = tmp_path / "models"
    for task in ("summarization", "question-answering"):
        build_tiny_model(task, models / f"tiny-{task}", downloads=10)
    (workspace / "notes.txt").write_text("The team ships the release on Friday after the review.", encoding="utf-8")
    plan = [
        {"task": "summarization", "id": 0, "args": {"text": "notes.txt"}},
        {"task": "question-answering", "id": 1, "args": {"text": "When does the team ship?"}},
    ]
    context = real_context(models, workspace, ScriptedChatModel(plan=plan))
    out = await run_graph(context, request="summarize notes.txt, then tell me when the team ships")

    assert out["plan"][1].args == {"text": "When does the team ship?", "context": "<GENERATED>-0"}
    assert out["plan"][1].dep == [0]
    summary, answer = out["results"][0], out["results"][1]
    assert summary.status == answer.status == "ok", (summary.error, answer.error)
    assert answer.text and answer.text in summary.text  # a span of the passage it was given
