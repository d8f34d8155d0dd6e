"""The local transformers runner on tiny real models: one load per model id, bounded pool, artifacts."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest
from PIL import Image

from hugginggraph.testing.tiny_models import build_tiny_model
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, read_model_folder
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner, best_device, device_memory

pytestmark = pytest.mark.slow


async def test_concurrent_calls_load_a_model_once(tmp_path: Path):
    card = read_model_folder(build_tiny_model("text-classification", tmp_path / "cls"))
    runner = LocalTransformersRunner(torch_threads=1)
    outputs = await asyncio.gather(
        *(runner.run(card, card.task, {"text": f"text {i}"}, ArtifactStore(tmp_path, i)) for i in range(4))
    )
    assert runner.loads == 1
    assert all(output.text.split(" (")[0] in {"NEGATIVE", "POSITIVE"} for output in outputs)


@pytest.mark.parametrize("bound", [{"max_loaded": 1}, {"max_bytes": 1}])
async def test_the_pool_evicts_the_least_recently_used(bound: dict[str, int], tmp_path: Path):
    cards = [
        read_model_folder(build_tiny_model(t, tmp_path / t)) for t in ("text-classification", "token-classification")
    ]
    cards = [c for c in cards if c is not None]
    runner = LocalTransformersRunner(torch_threads=1, **bound)
    for card in [*cards, cards[0]]:
        await runner.run(card, card.task, {"text": "a fine day"}, ArtifactStore(tmp_path, 0))
    assert runner.loads == 3


async def test_the_auto_device_and_memory_bound_are_decided_at_the_first_load(tmp_path: Path):
    card = read_model_folder(build_tiny_model("text-classification", tmp_path / "cls"))
    runner = LocalTransformersRunner(torch_threads=1)
    assert runner.device == "auto" and runner.pool.max_bytes is None
    await runner.run(card, card.task, {"text": "a fine day"}, ArtifactStore(tmp_path, 0))
    assert runner.device == best_device()
    memory = device_memory(runner.device)
    assert memory and runner.pool.max_bytes == memory // 2
    assert 0 < runner.pool.loaded_bytes < runner.pool.max_bytes


async def test_long_text_is_truncated_not_a_crash(tmp_path: Path):
    card = read_model_folder(build_tiny_model("text-classification", tmp_path / "cls"))
    output = await LocalTransformersRunner(torch_threads=1).run(
        card, card.task, {"text": "word " * 2000}, ArtifactStore(tmp_path, 0)
    )
    assert output.text


async def test_depth_map_becomes_an_image_artifact_and_stays_out_of_data(tmp_path: Path):
    card = read_model_folder(build_tiny_model("depth-estimation", tmp_path / "depth"))
    Image.effect_noise((96, 80), 64).convert("RGB").save(tmp_path / "in.png")
    output = await LocalTransformersRunner(torch_threads=1).run(
        card, card.task, {"image": str(tmp_path / "in.png")}, ArtifactStore(tmp_path / "run", 7)
    )
    (artifact,) = output.artifacts
    assert artifact.path == str(tmp_path / "run" / "task-7-depth.png") and Path(artifact.path).is_file()
    assert output.text == artifact.path
    assert output.data["predicted_depth"]["shape"]  # the large tensor is summarised, not inlined


async def test_a_folder_without_weights_is_a_load_error(tmp_path: Path):
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "README.md").write_text("---\npipeline_tag: text-classification\n---\n")
    with pytest.raises(ModelLoadError, match="could not load broken"):
        await LocalTransformersRunner().run(
            read_model_folder(folder), "text-classification", {"text": "x"}, ArtifactStore(tmp_path, 0)
        )


def test_cards_are_taken_by_task_and_library_and_only_when_the_library_is_installed():
    runner = LocalTransformersRunner()
    assert runner.can_run(CatalogEntry(id="a", task="text-classification"))
    assert not runner.can_run(CatalogEntry(id="b", task="text-classification", library="diffusers"))
    assert not runner.can_run(CatalogEntry(id="c", task="text-to-video"))
    diffusers_installed = importlib.util.find_spec("diffusers") is not None
    assert runner.can_run(CatalogEntry(id="d", task="text-to-image", library="diffusers")) == diffusers_installed
