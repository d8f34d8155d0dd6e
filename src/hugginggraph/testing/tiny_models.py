"""Tiny random-weight Hugging Face model folders, built from configs, for tests.

Tests must run offline (the Hub cannot be reached here) and in seconds, yet exercise the real `transformers`
code path: config, weights, tokenizer, image processor or feature extractor, loaded from a folder the way the
local runner loads a downloaded model. So every model is built from a tiny config under a fixed seed
(`tiny_architectures`), with a tokenizer built at run time (`tiny_tokenizers`). This module says which
architecture serves each Hub task, with which labels, and writes each folder's `README.md` model card with flat
front matter (`pipeline_tag`, `downloads`, `model_id`), which is what `read_model_folder` reads.

The weights are random, so outputs are meaningless but deterministic (the same bytes in every process). The labels
and audio rate are public, so tests can check outputs against them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import torch
from transformers import (
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
)

from hugginggraph.testing.tiny_architectures import (
    bart,
    bert,
    blip,
    donut,
    dpt,
    gpt2,
    segformer,
    stable_diffusion,
    vilt,
    vit,
    vits,
    wav2vec2_classifier,
    wav2vec2_ctc,
    yolos,
)

SEED = 0

SENTIMENT_LABELS = ["NEGATIVE", "POSITIVE"]
NLI_LABELS = ["contradiction", "neutral", "entailment"]
"""Zero-shot classification reads the entailment score, so the pipeline looks for a label named so."""
ENTITY_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
IMAGE_LABELS = ["cat", "dog", "bird"]
ANSWER_LABELS = ["yes", "no", "two", "red"]
SOUND_LABELS = ["speech", "music", "silence"]

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
"""A minimal chat template, so the conversational model formats messages the way a chat model does."""

SAMPLING_RATE = 16000
"""The rate (Hz) the audio models hear and speak at, as real speech models do."""


def build_tiny_model(task: str, folder: Path, *, downloads: int = 0, model_id: str | None = None) -> Path:
    """Build a tiny random model for the Hub task id `task` into `folder` (created) and return the folder."""
    if task not in BUILDERS:
        raise ValueError(f"no tiny model for task {task!r}; known: {', '.join(sorted(BUILDERS))}")
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    architecture = BUILDERS[task](folder)
    _write_card(folder, task, downloads, model_id or f"tiny-{task}", architecture)
    return folder


def _write_card(folder: Path, task: str, downloads: int, model_id: str, architecture: str) -> None:
    library = "diffusers" if (folder / "model_index.json").is_file() else "transformers"
    front_matter = (
        f"pipeline_tag: {task}\nlibrary_name: {library}\ndownloads: {downloads}\nmodel_id: {model_id}\n"
        "random_weights: true"
    )
    body = f"Tiny random {architecture} for tests."
    (folder / "README.md").write_text(f"---\n{front_matter}\n---\n\n{body}\n", encoding="utf-8")


BUILDERS: dict[str, Callable[[Path], str]] = {
    "token-classification": partial(bert, model_class=BertForTokenClassification, labels=ENTITY_LABELS),
    "text-classification": partial(bert, model_class=BertForSequenceClassification, labels=SENTIMENT_LABELS),
    "zero-shot-classification": partial(bert, model_class=BertForSequenceClassification, labels=NLI_LABELS),
    "summarization": bart,
    "translation": bart,
    "question-answering": partial(bert, model_class=BertForQuestionAnswering),
    "text-generation": gpt2,
    "conversational": partial(gpt2, chat_template=CHAT_TEMPLATE),
    "feature-extraction": partial(bert, model_class=BertModel),
    "fill-mask": partial(bert, model_class=BertForMaskedLM),
    "image-classification": partial(vit, labels=IMAGE_LABELS),
    "object-detection": partial(yolos, labels=IMAGE_LABELS),
    "image-segmentation": partial(segformer, labels=IMAGE_LABELS),
    "depth-estimation": dpt,
    "image-to-text": blip,
    "visual-question-answering": partial(vilt, labels=ANSWER_LABELS),
    "document-question-answering": donut,
    "automatic-speech-recognition": partial(wav2vec2_ctc, sampling_rate=SAMPLING_RATE),
    "audio-classification": partial(wav2vec2_classifier, labels=SOUND_LABELS, sampling_rate=SAMPLING_RATE),
    "text-to-speech": partial(vits, sampling_rate=SAMPLING_RATE),
    "text-to-image": stable_diffusion,
    "image-to-image": stable_diffusion,
}
"""Hub task id -> a function that saves a model folder there and returns the architecture's name."""
