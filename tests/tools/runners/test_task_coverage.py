"""Every task type the local transformers runner knows, run on a tiny random model through the real runner.

Inputs are made here (a sentence, a drawn PNG, a synthesised stereo WAV at a rate no model uses, so mixing down
and resampling run too). Outputs are noise: the checks are on types, shapes and files, never on meaning. The
diffusion tasks need the optional `diffusers` package and are skipped without it.
"""

from __future__ import annotations

import math
import struct
import wave
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops, ImageDraw

from hugginggraph.testing.tiny_models import (
    ANSWER_LABELS,
    BUILDERS,
    IMAGE_LABELS,
    SAMPLING_RATE,
    SENTIMENT_LABELS,
    SOUND_LABELS,
    build_tiny_model,
)
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, read_model_folder
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.transformers_local import LOCAL_TASKS, LocalTransformersRunner
from hugginggraph.tools.tasks import TASKS

pytestmark = pytest.mark.slow

SENTENCE = "Paris is the capital of France."
IMAGE_SIZE = (96, 80)
IMAGE, AUDIO = "<drawn PNG>", "<tone WAV>"
"""Stand-ins in `CASES` for the files the `media` fixture makes."""
Check = Callable[[RunnerOutput, dict[str, str]], None]


def make_media(folder: Path) -> dict[str, str]:
    """A drawn PNG and a one-second 440 Hz stereo tone at 22.05 kHz, 16-bit, keyed by their stand-ins in `CASES`
    (a plain function, so benchmarks/runner_tasks.py makes the same files)."""
    image = Image.new("RGB", IMAGE_SIZE, "white")
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, 50, 40), fill="red")
    draw.ellipse((40, 30, 90, 75), fill="blue")
    image.save(folder / "picture.png")
    rate = 22050
    tone = [round(12000 * math.sin(2 * math.pi * 440 * i / rate)) for i in range(rate)]
    with wave.open(str(folder / "tone.wav"), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(b"".join(struct.pack("<hh", sample, -sample // 2) for sample in tone))
    return {IMAGE: str(folder / "picture.png"), AUDIO: str(folder / "tone.wav")}


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return make_media(tmp_path_factory.mktemp("media"))


# Checks: each takes the output and the inputs it was made from.


def text_only(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert isinstance(output.text, str) and output.text
    assert output.artifacts == []


def labels_from(names: list[str]) -> Check:
    def check(output: RunnerOutput, inputs: dict[str, str]) -> None:
        assert output.data and {item["label"] for item in output.data} <= set(names)
        assert all(0.0 <= item["score"] <= 1.0 for item in output.data)
        assert output.text.split(" (")[0] in names

    return check


def generated(key: str) -> Check:
    def check(output: RunnerOutput, inputs: dict[str, str]) -> None:
        text_only(output, inputs)
        (item,) = output.data
        assert item[key] == output.text

    return check


def entities(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert isinstance(output.data, list) and isinstance(output.text, str)
    for entity in output.data:
        assert entity["entity_group"] in {"PER", "LOC"} and isinstance(entity["word"], str)


def zero_shot(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert sorted(output.data["labels"]) == sorted(inputs["labels"].split(","))
    assert len(output.data["scores"]) == 3
    assert output.text.split(" (")[0] == output.data["labels"][0]


def span(output: RunnerOutput, inputs: dict[str, str]) -> None:
    data = output.data
    assert inputs["context"][data["start"] : data["end"]] == data["answer"] == output.text
    assert 0.0 <= data["score"] <= 1.0


def features(output: RunnerOutput, inputs: dict[str, str]) -> None:
    batch, tokens, hidden = len(output.data), len(output.data[0]), len(output.data[0][0])
    assert (batch, hidden) == (1, 32) and tokens > 2
    assert output.text == f"an array of shape [1, {tokens}, 32]"


def filled(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert len(output.data) == 5 and all(isinstance(item["token_str"], str) for item in output.data)
    assert output.text == output.data[0]["sequence"]


def an_image(artifact: Any, size: tuple[int, int] = IMAGE_SIZE) -> None:
    assert artifact.kind == "image"
    with Image.open(artifact.path) as image:
        assert image.format == "PNG" and image.size == size


def drawn_on(artifact: Any, original: str) -> None:
    """`artifact` is the input image with something drawn on it: same size, some pixels changed."""
    an_image(artifact)
    with Image.open(artifact.path) as drawn, Image.open(original) as source:
        assert ImageChops.difference(drawn.convert("RGB"), source.convert("RGB")).getbbox() is not None


def boxes(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert output.data and all(set(item["box"]) == {"xmin", "ymin", "xmax", "ymax"} for item in output.data)
    assert output.text.startswith("cat (") and " at (" in output.text
    (drawn,) = output.artifacts
    drawn_on(drawn, inputs["image"])
    assert drawn.path.endswith("object-detection.png")


def segments(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert output.data and all("mask" not in item for item in output.data)  # masks are files, not data
    tinted, *masks = output.artifacts
    assert tinted.path.endswith("image-segmentation.png") and len(masks) == len(output.data)
    drawn_on(tinted, inputs["image"])
    for mask in masks:
        an_image(mask)


def depth(output: RunnerOutput, inputs: dict[str, str]) -> None:
    (depth_map,) = output.artifacts
    an_image(depth_map)
    assert output.text == depth_map.path


def answers_from(names: list[str]) -> Check:
    def check(output: RunnerOutput, inputs: dict[str, str]) -> None:
        assert output.data and {item["answer"] for item in output.data} <= set(names)
        assert output.text == output.data[0]["answer"]

    return check


def document_answer(output: RunnerOutput, inputs: dict[str, str]) -> None:
    (item,) = output.data
    assert isinstance(item["answer"], str) and output.text == item["answer"]


def transcript(output: RunnerOutput, inputs: dict[str, str]) -> None:
    assert isinstance(output.data["text"], str) and output.text == output.data["text"]


def picture(output: RunnerOutput, inputs: dict[str, str]) -> None:
    (image,) = output.artifacts
    assert image.kind == "image" and output.text == image.path
    with Image.open(image.path) as drawn:
        assert drawn.format == "PNG" and drawn.width > 0


def speech(output: RunnerOutput, inputs: dict[str, str]) -> None:
    (clip,) = output.artifacts
    assert clip.kind == "audio" and output.text == clip.path
    with wave.open(clip.path, "rb") as audio:
        assert audio.getframerate() == SAMPLING_RATE and audio.getnchannels() == 1 and audio.getnframes() > 0


CASES: dict[str, tuple[dict[str, str], Check]] = {
    "token-classification": ({"text": SENTENCE}, entities),
    "text-classification": ({"text": SENTENCE}, labels_from(SENTIMENT_LABELS)),
    "zero-shot-classification": ({"text": SENTENCE, "labels": "travel,cooking,dancing"}, zero_shot),
    "summarization": ({"text": SENTENCE * 3}, generated("summary_text")),
    "translation": ({"text": SENTENCE}, generated("translation_text")),
    "question-answering": ({"text": "What is the capital of France?", "context": SENTENCE}, span),
    "text-generation": ({"text": "Once upon a time"}, generated("generated_text")),
    "conversational": ({"text": "Hello, how are you?"}, generated("generated_text")),
    "feature-extraction": ({"text": SENTENCE}, features),
    "fill-mask": ({"text": "Paris is the [MASK] of France."}, filled),
    "image-classification": ({"image": IMAGE}, labels_from(IMAGE_LABELS)),
    "object-detection": ({"image": IMAGE}, boxes),
    "image-segmentation": ({"image": IMAGE}, segments),
    "depth-estimation": ({"image": IMAGE}, depth),
    "image-to-text": ({"image": IMAGE}, generated("generated_text")),
    "visual-question-answering": ({"image": IMAGE, "text": "How many shapes?"}, answers_from(ANSWER_LABELS)),
    "document-question-answering": ({"image": IMAGE, "text": "What is the total?"}, document_answer),
    "automatic-speech-recognition": ({"audio": AUDIO}, transcript),
    "audio-classification": ({"audio": AUDIO}, labels_from(SOUND_LABELS)),
    "text-to-speech": ({"text": "hello world"}, speech),
    "text-to-image": ({"text": "a red square"}, picture),
    "image-to-image": ({"image": IMAGE, "text": "make it blue"}, picture),
}
"""Hub task id -> the task's arguments (with IMAGE and AUDIO standing for files) and its check."""


def test_the_runner_covers_twenty_hub_tasks_each_with_a_tiny_model_and_a_case():
    assert sum(task.library == "transformers" for task in LOCAL_TASKS.values()) >= 20  # without optional packages
    assert set(LOCAL_TASKS) <= set(TASKS)  # Hub task ids, never synonyms
    assert set(LOCAL_TASKS) == set(BUILDERS) == set(CASES)


def tiny_card(task: str, folder: Path) -> CatalogEntry:
    """The card of a tiny model for `task`, as a catalog reads it. `read_model_folder` wants a `config.json`,
    which a diffusers folder does not have (it has `model_index.json`), so that card is written out here."""
    build_tiny_model(task, folder)
    if LOCAL_TASKS[task].library == "diffusers":
        return CatalogEntry(id=f"tiny-{task}", task=task, path=str(folder), library="diffusers")
    card = read_model_folder(folder)
    assert card is not None
    return card


@pytest.mark.parametrize("task", sorted(CASES))
async def test_each_task_runs_on_a_tiny_model(task: str, tmp_path: Path, media: dict[str, str]):
    if LOCAL_TASKS[task].library == "diffusers":
        pytest.importorskip("diffusers")
    card = tiny_card(task, tmp_path / "model")
    assert card.task == task
    arguments, check = CASES[task]
    inputs = {name: media.get(value, value) for name, value in arguments.items()}
    runner = LocalTransformersRunner(torch_threads=1)
    assert runner.can_run(card)

    output = await runner.run(card, task, inputs, ArtifactStore(tmp_path / "run", 3))

    check(output, inputs)
    for artifact in output.artifacts:
        assert Path(artifact.path).parent == tmp_path / "run" and Path(artifact.path).name.startswith("task-3-")
    output.model_dump_json()  # the result is JSON-safe: it goes into checkpoints
