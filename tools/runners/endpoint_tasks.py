"""How each task's call goes to an inference server: the `AsyncInferenceClient` method named after the task, how
the task's inputs become that method's arguments (text as is, image and audio files as bytes), and how its typed
output becomes a `RunnerOutput` (text, JSON-safe data, images and audio saved through the `ArtifactStore`).

One table a protocol: `HUB_TASKS` for Hugging Face's inference API (the Hub's providers, TGI, TEI, Inference
Endpoints), `CHAT_TASKS` for servers that speak only OpenAI's chat completions (vLLM, llama.cpp's server, Ollama).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from huggingface_hub import AudioToAudioOutputElement, ChatCompletionOutput

from hugginggraph.tools.artifacts import ArtifactStore, is_remote
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.outputs import jsonable, to_runner_output
from hugginggraph.tools.runners.task_inputs import Inputs, candidate_labels, question_and_context

if TYPE_CHECKING:
    from PIL.Image import Image

Arguments = Callable[[Inputs], dict[str, Any]]


class Result(Protocol):
    """Turns a client method's typed output into a `RunnerOutput` (`to_runner_output` is one)."""

    def __call__(self, raw: Any, store: ArtifactStore, /, *, task: str, inputs: Inputs) -> RunnerOutput: ...


@dataclass(frozen=True)
class HubTask:
    """How one Hub task runs on `AsyncInferenceClient`."""

    method: str
    """The client method, named after the task."""
    arguments: Arguments
    """The method's keyword arguments from the task's inputs (by the conventions of `task_inputs`)."""
    result: Result = to_runner_output
    """The method's output as a `RunnerOutput`."""


def _media(value: str) -> bytes | str:
    """A file's bytes; a URL is passed on for the endpoint to fetch."""
    return value if is_remote(value) else Path(value).read_bytes()


def _text(inputs: Inputs) -> dict[str, Any]:
    return {"text": inputs["text"]}


def _prompt(inputs: Inputs) -> dict[str, Any]:
    return {"prompt": inputs["text"]}


def _chat(inputs: Inputs) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": inputs["text"]}]}


def _text_and_labels(inputs: Inputs) -> dict[str, Any]:
    return {"text": inputs["text"], "candidate_labels": candidate_labels(inputs)}


def _question_and_context(inputs: Inputs) -> dict[str, Any]:
    question, context = question_and_context(inputs)
    return {"question": question, "context": context}


def _image(inputs: Inputs) -> dict[str, Any]:
    return {"image": _media(inputs["image"])}


def _image_and_question(inputs: Inputs) -> dict[str, Any]:
    return {"image": _media(inputs["image"]), "question": inputs["text"]}


def _image_and_prompt(inputs: Inputs) -> dict[str, Any]:
    return {"image": _media(inputs["image"]), "prompt": inputs["text"]}


def _audio(inputs: Inputs) -> dict[str, Any]:
    return {"audio": _media(inputs["audio"])}


def _saved_image(image: Image, store: ArtifactStore, *, task: str, inputs: Inputs) -> RunnerOutput:
    """The image as the task's artifact, and nothing in `data` (a PIL image has no JSON form)."""
    artifact = store.save_image(image, task)
    return RunnerOutput(text=artifact.path, artifacts=[artifact])


MEDIA_SIGNATURES: dict[bytes, str] = {b"RIFF": ".wav", b"fLaC": ".flac", b"OggS": ".ogg", b"ID3": ".mp3"}
"""Leading bytes -> file suffix: the client returns audio without its content type, so the bytes say what it is."""


def _suffix(audio: bytes) -> str:
    found = (suffix for signature, suffix in MEDIA_SIGNATURES.items() if audio.startswith(signature))
    return next(found, ".flac")  # what the Hub's hosted speech models send by default


def _saved_audio(raw: bytes, store: ArtifactStore, /, *, task: str, inputs: Inputs) -> RunnerOutput:
    """The encoded audio as the task's artifact, written as it came."""
    artifact = store.save_bytes(raw, _suffix(raw), "audio", task)
    return RunnerOutput(text=artifact.path, artifacts=[artifact])


def _saved_clips(
    raw: list[AudioToAudioOutputElement], store: ArtifactStore, /, *, task: str, inputs: Inputs
) -> RunnerOutput:
    """Each clip (separated sources, an enhanced recording) as an artifact named after its label."""
    artifacts = [store.save_bytes(clip.blob, _suffix(clip.blob), "audio", clip.label) for clip in raw]
    data = [{"label": clip.label, "content_type": clip.content_type} for clip in raw]
    return RunnerOutput(text=artifacts[0].path if artifacts else "no audio", data=data, artifacts=artifacts)


def _chat_reply(raw: ChatCompletionOutput, store: ArtifactStore, *, task: str, inputs: Inputs) -> RunnerOutput:
    return RunnerOutput(text=raw.choices[0].message.content or "", data=jsonable(raw))


HUB_TASKS: dict[str, HubTask] = {
    "token-classification": HubTask("token_classification", _text),
    "text-classification": HubTask("text_classification", _text),
    "zero-shot-classification": HubTask("zero_shot_classification", _text_and_labels),
    "summarization": HubTask("summarization", _text),
    "translation": HubTask("translation", _text),
    "question-answering": HubTask("question_answering", _question_and_context),
    "text-generation": HubTask("text_generation", _prompt),
    "conversational": HubTask("chat_completion", _chat, _chat_reply),
    "feature-extraction": HubTask("feature_extraction", _text),
    "fill-mask": HubTask("fill_mask", _text),
    "image-classification": HubTask("image_classification", _image),
    "object-detection": HubTask("object_detection", _image),
    "image-segmentation": HubTask("image_segmentation", _image),
    "image-to-text": HubTask("image_to_text", _image),
    "visual-question-answering": HubTask("visual_question_answering", _image_and_question),
    "document-question-answering": HubTask("document_question_answering", _image_and_question),
    "text-to-image": HubTask("text_to_image", _prompt, _saved_image),
    "image-to-image": HubTask("image_to_image", _image_and_prompt, _saved_image),
    "automatic-speech-recognition": HubTask("automatic_speech_recognition", _audio),
    "audio-classification": HubTask("audio_classification", _audio),
    "text-to-speech": HubTask("text_to_speech", _text, _saved_audio),
    "audio-to-audio": HubTask("audio_to_audio", _audio, _saved_clips),
}
"""The Hub tasks this runner serves. Not here: `sentence-similarity` (it needs several texts where a plan gives
one), `depth-estimation` (no client method) and `text-to-video` (only some providers serve it, no endpoint URL)."""


CHAT_TASKS: dict[str, HubTask] = {
    "text-generation": HubTask("chat_completion", _chat, _chat_reply),
    "conversational": HubTask("chat_completion", _chat, _chat_reply),
}
"""What a server speaking only OpenAI's chat completions serves: the text goes in as the user's turn."""

EndpointProtocol = Literal["hf", "openai"]

PROTOCOL_TASKS: dict[EndpointProtocol, dict[str, HubTask]] = {"hf": HUB_TASKS, "openai": CHAT_TASKS}
"""Each protocol's task table."""
