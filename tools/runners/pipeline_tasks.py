"""Tasks that `transformers.pipeline` still serves in 5.x, and how one call reads each task's arguments.

A `PipelineTask` names the pipeline and a small function from (pipeline, arguments) to the pipeline's raw
output; `outputs.py` turns that output into a `RunnerOutput`. The Hub task id is the key; where 5.x calls the
pipeline differently (`text-to-speech` is `text-to-audio`) the value says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from hugginggraph.tools.runners.task_inputs import (
    Inputs,
    Predictor,
    candidate_labels,
    read_audio,
    read_image,
    with_mask_token,
)
from hugginggraph.tools.runners.transformers_names import transformers_names

MAX_NEW_TOKENS = 20
"""Generation budget per call: enough for a reply, small enough that a CPU answers in seconds."""

_GENERATION = {"max_new_tokens": MAX_NEW_TOKENS, "return_full_text": False, "handle_long_generation": "hole"}
"""Long prompts lose their start ("hole") rather than overrunning the model's position table."""


@dataclass(frozen=True)
class PipelineTask:
    """A task served by a `transformers` pipeline."""

    library: ClassVar[str] = "transformers"

    pipeline: str
    """The `transformers.pipeline` task name in 5.x."""
    call: Callable[[Any, Inputs], Any]
    """Calls the loaded pipeline on the task's arguments and returns its raw output."""

    def load(self, model: str, device: str) -> Predictor:
        (pipeline,) = transformers_names("pipeline")
        pipe = pipeline(self.pipeline, model=model, device=device, trust_remote_code=False)
        return partial(self.call, pipe)


def _classify_text(pipe: Any, inputs: Inputs) -> Any:
    return pipe(inputs["text"], truncation=True)


def _tag_tokens(pipe: Any, inputs: Inputs) -> Any:
    # Whole words with one label each ("Paris: LOC"), not word pieces with B-/I- tags.
    return pipe(inputs["text"], aggregation_strategy="simple")


def _classify_zero_shot(pipe: Any, inputs: Inputs) -> Any:
    return pipe(inputs["text"], candidate_labels=candidate_labels(inputs), truncation=True)


def _generate(pipe: Any, inputs: Inputs) -> Any:
    return pipe(inputs["text"], **_GENERATION)


def _reply(pipe: Any, inputs: Inputs) -> Any:
    """One chat turn: the text as a user message when the model has a chat template; a model without one is
    not a chat model, and continuing the text is the best it can do."""
    prompt = [{"role": "user", "content": inputs["text"]}] if pipe.tokenizer.chat_template else inputs["text"]
    return pipe(prompt, **_GENERATION)


def _fill_mask(pipe: Any, inputs: Inputs) -> Any:
    return pipe(with_mask_token(inputs["text"], pipe.tokenizer.mask_token), tokenizer_kwargs={"truncation": True})


def _extract_features(pipe: Any, inputs: Inputs) -> Any:
    # A tensor rather than nested lists: its size decides whether it is inlined or summarised by its shape.
    return pipe(inputs["text"], return_tensors=True, tokenize_kwargs={"truncation": True})


def _look(pipe: Any, inputs: Inputs) -> Any:
    return pipe(read_image(inputs["image"]))


def _read_document(pipe: Any, inputs: Inputs) -> Any:
    return pipe(image=read_image(inputs["image"]), question=inputs["text"])


def _listen(pipe: Any, inputs: Inputs) -> Any:
    # A fresh dict each call: the speech recognition pipeline pops keys from the one it is given.
    rate = pipe.feature_extractor.sampling_rate
    return pipe({"raw": read_audio(inputs["audio"], rate), "sampling_rate": rate})


def _speak(pipe: Any, inputs: Inputs) -> Any:
    return pipe(inputs["text"])


PIPELINE_TASKS: dict[str, PipelineTask] = {
    "token-classification": PipelineTask("token-classification", _tag_tokens),
    "text-classification": PipelineTask("text-classification", _classify_text),
    "zero-shot-classification": PipelineTask("zero-shot-classification", _classify_zero_shot),
    "text-generation": PipelineTask("text-generation", _generate),
    "conversational": PipelineTask("text-generation", _reply),
    "feature-extraction": PipelineTask("feature-extraction", _extract_features),
    "fill-mask": PipelineTask("fill-mask", _fill_mask),
    "image-classification": PipelineTask("image-classification", _look),
    "object-detection": PipelineTask("object-detection", _look),
    "image-segmentation": PipelineTask("image-segmentation", _look),
    "depth-estimation": PipelineTask("depth-estimation", _look),
    "document-question-answering": PipelineTask("document-question-answering", _read_document),
    "automatic-speech-recognition": PipelineTask("automatic-speech-recognition", _listen),
    "audio-classification": PipelineTask("audio-classification", _listen),
    "text-to-speech": PipelineTask("text-to-audio", _speak),
}
"""Hub task id -> the pipeline that runs it."""
