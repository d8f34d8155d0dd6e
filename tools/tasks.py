"""The task types HuggingGraph can plan, named by their Hugging Face Hub task ids.

One source of truth for the planner prompt (which tasks exist and what they take), the validator (which
argument names carry which modality) and the runners (what a task returns). Names are the Hub's own
(`image-to-text`, `automatic-speech-recognition`, ...); no synonyms are invented.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

Modality = Literal["text", "image", "audio", "video"]

MEDIA_MODALITIES: tuple[Modality, ...] = ("image", "audio", "video")

AUDIO_EXTENSIONS = ("wav", "mp3", "flac", "ogg")
"""Sound files the local audio tasks decode (libsndfile, in `runners.task_inputs.read_audio`); only these are offered
as media. AAC (`m4a`) is left out because libsndfile cannot read it."""

EXTENSIONS_OF: dict[Modality, tuple[str, ...]] = {
    "image": ("jpe?g", "png", "gif", "bmp", "tiff", "webp"),
    "audio": AUDIO_EXTENSIONS,
    "video": ("mp4", "avi", "mov", "mkv", "webm"),
}
"""Each media kind's file-name endings, as regular expressions."""

FILE_NAME_OF: dict[Modality, re.Pattern[str]] = {
    kind: re.compile(rf"[\w\-]+\.(?:{'|'.join(endings)})\b", re.IGNORECASE) for kind, endings in EXTENSIONS_OF.items()
}
"""A file name of each media kind as it is found in text (a request, a step): "photo.png" in "edit photo.png"."""

MEDIA_EXTENSIONS = "|".join(ending for endings in EXTENSIONS_OF.values() for ending in endings)
"""File-name endings read as media files wherever a file name is looked for in text (requests, steps, answers),
as a regular-expression alternation."""

TEXT_EXTENSIONS = "txt|md"
"""File-name endings read as text documents: a text argument that is only such a name is the file's words."""


class TaskSpec(BaseModel):
    """What one task type consumes and produces."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The Hub task id (pipeline tag)."""
    inputs: tuple[Modality, ...]
    """Argument names the task reads; each name is also the modality of its value."""
    output: Modality
    """What the task produces: text (incl. labels and JSON) or a media artifact."""
    description: str
    """One line for the planner prompt."""


def _spec(task_id: str, inputs: tuple[Modality, ...], output: Modality, description: str) -> TaskSpec:
    return TaskSpec(id=task_id, inputs=inputs, output=output, description=description)


TASKS: dict[str, TaskSpec] = {
    spec.id: spec
    for spec in (
        _spec("token-classification", ("text",), "text", "label each word, e.g. named entities"),
        _spec("text-classification", ("text",), "text", "label a text, e.g. sentiment"),
        _spec("zero-shot-classification", ("text",), "text", "label a text with labels given in the request"),
        _spec("summarization", ("text",), "text", "shorten a text"),
        _spec("translation", ("text",), "text", "translate a text"),
        _spec("question-answering", ("text",), "text", "answer a question from a given context text"),
        _spec("text-generation", ("text",), "text", "continue or write text"),
        _spec("conversational", ("text",), "text", "reply in a conversation"),
        _spec("sentence-similarity", ("text",), "text", 'score how similar two texts are ("text" and "text2")'),
        _spec("feature-extraction", ("text",), "text", "embed a text as a vector"),
        _spec("fill-mask", ("text",), "text", "fill in a masked word"),
        _spec("image-classification", ("image",), "text", "label what an image shows"),
        _spec("object-detection", ("image",), "text", "find and box the objects in an image"),
        _spec("image-segmentation", ("image",), "image", "split an image into labelled regions"),
        _spec("depth-estimation", ("image",), "image", "estimate a depth map of an image"),
        _spec("image-to-text", ("image",), "text", "describe an image in words"),
        _spec("visual-question-answering", ("image", "text"), "text", "answer a question about an image"),
        _spec(
            "document-question-answering",
            ("image", "text"),
            "text",
            "answer a question about a scanned document",
        ),
        _spec("text-to-image", ("text",), "image", "draw an image from a description"),
        _spec("image-to-image", ("image", "text"), "image", "change an image as described"),
        _spec("automatic-speech-recognition", ("audio",), "text", "transcribe speech to text"),
        _spec("text-to-speech", ("text",), "audio", "read a text aloud"),
        _spec("audio-classification", ("audio",), "text", "label a sound"),
        _spec("audio-to-audio", ("audio",), "audio", "enhance or separate audio"),
        _spec("text-to-video", ("text",), "video", "make a short video from a description"),
    )
}


def normalize_task_name(name: str) -> str:
    """The Hub task id for a name as planners write it ("Image-to-Text", "image_to_text", " image to text ")."""
    return re.sub(r"[\s_]+", "-", name.strip().lower())
