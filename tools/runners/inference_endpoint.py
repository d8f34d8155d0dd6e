"""Run models remotely with huggingface_hub's `AsyncInferenceClient`: on the Hub's inference providers by model id,
or on a self-hosted endpoint (TGI, TEI, a dedicated Inference Endpoint) by URL.

`HUB_TASKS` maps each Hub task id to the client method named after it, to how the task's inputs become that
method's arguments (text as is, image and audio files as bytes), and to how its typed output becomes a
`RunnerOutput` (text, JSON-safe data, images and audio saved through the `ArtifactStore`).

Failures: 429, 5xx and dropped connections are retried by tenacity with exponential backoff (`EndpointRetries`); any
other HTTP error (404: no such model; 400/422: inputs it refuses; 401/403: the token) is final, and so is an attempt
that takes longer than `timeout_s`. All end as an `EndpointError`, a `ModelLoadError`: calling the same model again at
once is pointless, so the executor moves on to its next candidate instead of multiplying these retries by its own.

The token is `token=`, else whatever huggingface_hub finds for each request (`HF_TOKEN`, then the `hf auth login`
token). It goes to the Hub's providers and to the endpoint URLs configured here, and never into logs or messages.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx2
from huggingface_hub import AsyncInferenceClient, AudioToAudioOutputElement, ChatCompletionOutput
from huggingface_hub.errors import HfHubHTTPError
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential

from hugginggraph.tools.artifacts import ArtifactStore, is_remote
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.model_sources import check_hub_id
from hugginggraph.tools.runners.outputs import jsonable, to_runner_output
from hugginggraph.tools.runners.task_inputs import Inputs, candidate_labels, question_and_context

if TYPE_CHECKING:
    from PIL.Image import Image

logger = logging.getLogger(__name__)


class EndpointError(ModelLoadError):
    """A remote model call failed for good (refused, timed out, or still failing after the retries)."""


class EndpointRetries(BaseModel):
    """How a remote call's transient failures (429, 5xx, dropped connections) are retried, waiting twice as long each
    time. Not LangGraph's `RetryPolicy`, which retries a whole node: these retries stay inside one model call."""

    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(default=4, ge=1)
    """Calls in all, the first included."""
    base_delay_s: float = Field(default=1.0, ge=0)
    """The wait after the first failure; tests make it tiny."""
    max_delay_s: float = Field(default=20.0, ge=0)
    """The longest wait between two attempts, however many failed before."""

    def wait(self) -> wait_exponential:
        """The wait after attempt n: `base_delay_s` * 2**(n - 1), at most `max_delay_s`."""
        return wait_exponential(multiplier=self.base_delay_s, max=self.max_delay_s)


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


class InferenceEndpointRunner:
    """Sends cards to remote inference: those named in `endpoints` to their URL, those whose `source` is in
    `hub_sources` to the Hub's inference providers by model id."""

    def __init__(
        self,
        *,
        endpoints: Mapping[str, str] | None = None,
        hub_sources: Collection[str] = ("hub",),
        provider: str | None = None,
        token: str | None = None,
        timeout_s: float = 120.0,
        retry: EndpointRetries | None = None,
    ) -> None:
        """
        Args:
            endpoints: model id → URL of the self-hosted endpoint serving it.
            hub_sources: card sources to send to the Hub's providers by id; empty to use `endpoints` only.
            provider: the Hub inference provider; None lets huggingface_hub pick (`auto`). Unused for URLs.
            token: sent as the bearer token; None lets huggingface_hub find one (`HF_TOKEN`, saved login).
            timeout_s: the longest one attempt may take.
            retry: how transient failures are retried.
        """
        self.endpoints = dict(endpoints or {})
        for model_id, url in self.endpoints.items():
            if not is_remote(url):
                raise ValueError(f"the endpoint of {model_id} must be an http(s) URL, not {url!r}")
        self.hub_sources = frozenset(hub_sources)
        self.provider = provider
        self.timeout_s = timeout_s
        self.retry = retry or EndpointRetries()
        self._token = SecretStr(token) if token is not None else None

    def can_run(self, card: CatalogEntry) -> bool:
        return card.task in HUB_TASKS and (card.id in self.endpoints or card.source in self.hub_sources)

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        hub_task = HUB_TASKS.get(task)
        if hub_task is None:
            raise EndpointError(f"{task} is not a task this runner sends to inference endpoints")
        target = self.endpoints.get(card.id) or check_hub_id(card.id)  # an id goes into the providers' URLs
        arguments = await asyncio.to_thread(hub_task.arguments, inputs)
        async with AsyncInferenceClient(
            model=target,
            provider=self.provider,  # type: ignore[arg-type]  # a provider's name; huggingface_hub checks it
            token=self._token.get_secret_value() if self._token else None,
        ) as client:
            method = getattr(client, hub_task.method)
            raw = await self._with_retries(_name(card, target), lambda: method(**arguments))
        return await asyncio.to_thread(hub_task.result, raw, artifacts, task=task, inputs=inputs)

    async def _with_retries(self, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
        attempts = self.retry.max_attempts

        def log_retry(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            reason = _reason(error) if error else "failed"
            logger.warning("%s: %s; retrying (attempt %d of %d)", name, reason, state.attempt_number, attempts)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self.retry.wait(),
            retry=retry_if_exception(_is_transient),
            before_sleep=log_retry,
            reraise=True,
        )
        try:
            return await retrying(self._attempt, call)
        except TimeoutError as error:
            raise EndpointError(
                f"{name} did not answer within {self.timeout_s:g} s; give slow models a larger timeout_s, "
                "or use another model"
            ) from error
        except httpx2.HTTPError as error:  # HTTP statuses and transport failures alike
            if not _is_transient(error):
                raise EndpointError(
                    f"{name} failed ({_reason(error)}) and retrying will not help: check the model id, the inputs "
                    "and HF_TOKEN"
                ) from error
            raise EndpointError(
                f"{name} still failing after {attempts} attempts ({_reason(error)}); the service may be "
                "down or overloaded: try later or another model"
            ) from error

    async def _attempt(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """One call, bounded by `timeout_s` (a TimeoutError, which is never retried)."""
        async with asyncio.timeout(self.timeout_s):
            return await call()


def _http_status(error: BaseException) -> int | None:
    """The HTTP status behind `error`; TGI's typed errors (`OverloadedError`, ...) keep it on their cause."""
    for candidate in (error, error.__cause__):
        if isinstance(candidate, HfHubHTTPError):
            return candidate.response.status_code
    return None


def _is_transient(error: BaseException) -> bool:
    """Whether calling again may succeed: a 429, a 5xx or a dropped connection; never a timeout of our own."""
    if not isinstance(error, httpx2.HTTPError):
        return False
    status = _http_status(error)
    if status is not None:
        return status == 429 or status >= 500
    return isinstance(error, httpx2.NetworkError | httpx2.RemoteProtocolError)


def _reason(error: BaseException) -> str:
    status = _http_status(error)
    if status is None:
        return f"{type(error).__name__}: {error}"
    message = error.server_message if isinstance(error, HfHubHTTPError) else str(error)
    return f"HTTP {status}: {message}" if message else f"HTTP {status}"


def _name(card: CatalogEntry, target: str) -> str:
    return card.id if target == card.id else f"{card.id} at {target}"
