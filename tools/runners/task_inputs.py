"""How a task's arguments (all strings) become what a local model takes: files are read, pairs are split.

The planner hands every task a flat `{name: string}` mapping, media as file paths. The conventions:

- Text tasks read `text`; image tasks read `image` (a path, opened as RGB); audio tasks read `audio` (a path to
  a sound file in one of `tasks.AUDIO_EXTENSIONS`, mixed down to mono float32 and resampled to the model's rate).
- `question-answering` reads the question from `text` and the passage from `context`. Planners often write
  both into `text`, so without `context` the first sentence of `text` that ends in "?" is the question and the
  rest of `text` is the passage.
- `visual-question-answering` and `document-question-answering` read the picture or page from `image` and the
  question from `text`.
- `zero-shot-classification` reads its candidate labels from `labels`, comma separated; without it the text is
  labelled with `DEFAULT_LABELS`.
- `fill-mask` reads `text` with the blank written as `[MASK]` or `<mask>`, whichever the model's own token is.
- `sentence-similarity` compares `text` with `text2`, e.g. `{"text": "A man plays a guitar.", "text2":
  "<GENERATED>-0"}`. A planner that writes the sentences into `text` as a list, `{"text": ["A", "B", "C"]}` (plan
  validation turns it into the JSON string `["A", "B", "C"]`), gets the first compared with each of the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggraph.tools.tasks import AUDIO_EXTENSIONS

if TYPE_CHECKING:
    import numpy as np
    from PIL.Image import Image

Inputs = Mapping[str, str]
"""A task's arguments by name, as the executor resolved them."""

Predictor = Callable[[Inputs], Any]
"""A loaded model as a function: the task's arguments in, the raw model output (pipeline-shaped) out."""

DEFAULT_LABELS = ("positive", "negative", "neutral")
"""Zero-shot labels for a request that names none: the sentiment a bare "classify this" usually means."""

MASK_SPELLINGS = ("[MASK]", "<mask>")

_QUESTION = re.compile(r"[^.!?\n]*\?")


def read_image(path: str) -> Image:
    """The image at `path` as RGB (models want three channels; PNGs may carry alpha or a palette)."""
    from PIL import Image

    with Image.open(path) as image:
        return image.convert("RGB")


def read_audio(path: str, sampling_rate: int) -> np.ndarray:
    """Mono float32 samples in [-1, 1] at `sampling_rate`, from a sound file; a ValueError naming the formats read
    when the file is none of them.

    libsndfile (through soundfile) tells the format from the content, not the name. The file is opened here so that a
    missing one is a FileNotFoundError: libsndfile reports only "System error".
    """
    import soundfile
    import soxr

    with open(path, "rb") as source:
        try:
            samples, rate = soundfile.read(source, dtype="float32", always_2d=True)
        except soundfile.LibsndfileError as error:
            name = Path(path).name
            raise ValueError(
                f"{name} could not be decoded as sound ({error.error_string}): local audio tasks read "
                f"{', '.join(AUDIO_EXTENSIONS)}; convert it first, e.g. `ffmpeg -i {name} sound.wav`"
            ) from None
    mono = samples.mean(axis=1)
    return mono if rate == sampling_rate else soxr.resample(mono, rate, sampling_rate)


def question_and_context(inputs: Inputs) -> tuple[str, str]:
    """The question and the passage that answers it, by the convention in this module's docstring."""
    text = inputs["text"].strip()
    if inputs.get("context", "").strip():
        return text, inputs["context"].strip()
    match = _QUESTION.search(text)
    context = (text[: match.start()] + text[match.end() :]).strip() if match else ""
    if not match or not context:
        raise ValueError(
            "question-answering needs a question and a passage: pass the passage as `context`, "
            "or write both in `text` with the question ending in '?'"
        )
    return match.group().strip(), context


def candidate_labels(inputs: Inputs) -> list[str]:
    """The labels to choose from: the comma-separated `labels` argument, or `DEFAULT_LABELS`."""
    labels = [label.strip() for label in inputs.get("labels", "").split(",") if label.strip()]
    return labels or list(DEFAULT_LABELS)


def with_mask_token(text: str, mask_token: str) -> str:
    """`text` with its blank written in the model's own mask token (BERT says `[MASK]`, RoBERTa `<mask>`)."""
    for spelling in MASK_SPELLINGS:
        text = text.replace(spelling, mask_token)
    if mask_token not in text:
        raise ValueError(f"fill-mask needs a blank in the text, written {' or '.join(MASK_SPELLINGS)}")
    return text


SIMILARITY_ARGUMENTS = 'sentence-similarity needs two texts: give "text" and "text2", or "text" as a list ["A", "B"]'


def sentences_to_compare(inputs: dict[str, str]) -> list[str]:
    """The sentence to compare first, then the sentences to compare it with (see the module docstring)."""
    text = inputs.get("text", "")
    if "text2" in inputs:
        return [text, inputs["text2"]]
    sentences = _json_string_list(text)
    if len(sentences) < 2:
        raise ValueError(SIMILARITY_ARGUMENTS)
    return sentences


def _json_string_list(text: str) -> list[str]:
    """`text` read as a JSON list of strings, or an empty list when it is anything else."""
    if not text.lstrip().startswith("["):
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [str(item) for item in value] if isinstance(value, list) else []
