"""The inference endpoint runner against a fake endpoint on 127.0.0.1: every supported task end to end, images
saved as artifacts, retries with backoff on 429/5xx/lost connections, final errors, timeouts, and its config."""

from __future__ import annotations

import base64
import io
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hub_fake import FakeHub, Reply, allow_loopback_requests
from huggingface_hub import AsyncInferenceClient
from PIL import Image
from tenacity import AsyncRetrying, RetryCallState

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.expert_endpoints import ExpertEndpoint
from hugginggraph.tools.runners import inference_endpoint
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.endpoint_tasks import HUB_TASKS
from hugginggraph.tools.runners.inference_endpoint import EndpointError, EndpointRetries, InferenceEndpointRunner
from hugginggraph.tools.tasks import TASKS

TOKEN = "hf_fake_token_for_tests"
FAST_RETRIES = EndpointRetries(max_attempts=3, base_delay_s=0.01)
SENTIMENT = [[{"label": "POSITIVE", "score": 0.98}, {"label": "NEGATIVE", "score": 0.02}]]


def png(size: tuple[int, int] = (8, 6), mode: str = "RGB") -> bytes:
    out = io.BytesIO()
    Image.new(mode, size, "red" if mode == "RGB" else 255).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    allow_loopback_requests(monkeypatch)
    with FakeHub() as fake:
        yield fake


def served(endpoint: FakeHub, task: str, **options: Any) -> tuple[InferenceEndpointRunner, CatalogEntry]:
    """A runner that sends the model `acme/<task>` to `/models/<task>` on the fake, and that model's card."""
    served_at = ExpertEndpoint(url=f"{endpoint.url}/models/{task}", tasks=(task,), model=f"acme/{task}")
    options.setdefault("retry", FAST_RETRIES)
    return InferenceEndpointRunner(endpoints=[served_at], **options), served_at.card(task)


async def test_text_classification_sends_the_text_and_the_token(endpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    endpoint.reply("POST", "/models/text-classification", Reply(json=SENTIMENT))
    runner, card = served(endpoint, "text-classification")

    output = await runner.run(card, card.task, {"text": "I love it"}, ArtifactStore(tmp_path, 0))

    assert output.text == "POSITIVE (0.98), NEGATIVE (0.02)"
    assert output.data == SENTIMENT[0] and output.artifacts == []
    (request,) = endpoint.requests
    assert json.loads(request.body)["inputs"] == "I love it"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_text_to_image_saves_the_png_as_an_artifact(endpoint, tmp_path):
    endpoint.reply("POST", "/models/text-to-image", Reply(body=png((8, 6)), content_type="image/png"))
    runner, card = served(endpoint, "text-to-image", token=TOKEN)

    output = await runner.run(card, card.task, {"text": "a red square"}, ArtifactStore(tmp_path / "run", 3))

    (artifact,) = output.artifacts
    assert artifact.kind == "image" and artifact.path == str(tmp_path / "run" / "task-3-text-to-image.png")
    assert output.text == artifact.path
    with Image.open(artifact.path) as saved:
        assert saved.size == (8, 6) and saved.getpixel((0, 0)) == (255, 0, 0)
    (request,) = endpoint.requests
    assert json.loads(request.body)["inputs"] == "a red square" and request.headers["accept"] == "image/png"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"


async def test_text_to_speech_saves_the_audio_file_as_it_came(endpoint, tmp_path):
    wav = b"RIFF\x24\x00\x00\x00WAVEfmt fake-samples"
    endpoint.reply("POST", "/models/text-to-speech", Reply(body=wav, content_type="audio/wav"))
    runner, card = served(endpoint, "text-to-speech")

    output = await runner.run(card, card.task, {"text": "hello"}, ArtifactStore(tmp_path, 2))

    (artifact,) = output.artifacts
    assert artifact.kind == "audio" and artifact.path == str(tmp_path / "task-2-text-to-speech.wav")
    assert Path(artifact.path).read_bytes() == wav and output.text == artifact.path


@pytest.mark.parametrize(
    ("failures", "attempts"),
    [([Reply(429, {"error": "rate limited"})], 2), ([Reply(503, {"error": "loading"})] * 2, 3)],
    ids=["429-once", "503-twice"],
)
async def test_transient_failures_are_retried_until_the_call_succeeds(endpoint, tmp_path, caplog, failures, attempts):
    endpoint.reply("POST", "/models/text-classification", *failures, Reply(json=SENTIMENT))
    runner, card = served(endpoint, "text-classification", token=TOKEN)

    output = await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))

    assert output.text.startswith("POSITIVE")
    assert len(endpoint.requests) == attempts
    assert f"retrying (attempt {attempts - 1} of 3)" in caplog.text and TOKEN not in caplog.text


async def test_a_persistent_500_fails_after_the_last_attempt(endpoint, tmp_path):
    endpoint.reply("POST", "/models/text-classification", Reply(500, {"error": "boom"}))
    runner, card = served(endpoint, "text-classification")

    with pytest.raises(EndpointError, match=r"still failing after 3 attempts \(HTTP 500: boom\)"):
        await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))
    assert len(endpoint.requests) == 3


async def test_backoff_doubles_between_attempts(endpoint, tmp_path):
    endpoint.reply("POST", "/models/text-classification", Reply(503))
    runner, card = served(endpoint, "text-classification", retry=EndpointRetries(max_attempts=3, base_delay_s=0.1))
    started = time.monotonic()

    with pytest.raises(EndpointError):
        await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))
    assert 0.1 + 0.2 <= time.monotonic() - started < 2
    wait = EndpointRetries(base_delay_s=1, max_delay_s=5).wait()
    assert [wait(after(attempt)) for attempt in (1, 2, 3, 4)] == [1, 2, 4, 5]


def after(attempt: int) -> RetryCallState:
    """tenacity's state once `attempt` calls have failed, which is all a wait strategy reads."""
    state = RetryCallState(retry_object=AsyncRetrying(), fn=None, args=(), kwargs={})
    state.attempt_number = attempt
    return state


@pytest.mark.parametrize("status", [404, 400, 401])
async def test_a_client_error_other_than_429_is_not_retried(endpoint, tmp_path, status):
    endpoint.reply("POST", "/models/text-classification", Reply(status, {"error": "Model acme/x does not exist"}))
    runner, card = served(endpoint, "text-classification")

    with pytest.raises(EndpointError, match=rf"HTTP {status}: Model acme/x does not exist\) and retrying will not"):
        await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))
    assert len(endpoint.requests) == 1


async def test_a_slow_endpoint_times_out_with_a_clear_error_and_no_retry(endpoint, tmp_path):
    endpoint.reply("POST", "/models/text-classification", Reply(json=SENTIMENT, delay_s=10))
    runner, card = served(endpoint, "text-classification", timeout_s=0.2)
    started = time.monotonic()

    with pytest.raises(EndpointError, match=r"did not answer within 0\.2 s; give slow models a larger timeout_s"):
        await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))
    assert time.monotonic() - started < 2
    assert len(endpoint.requests) == 1


async def test_a_refused_connection_is_retried_then_reported(tmp_path, monkeypatch):
    allow_loopback_requests(monkeypatch)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    gone = ExpertEndpoint(url=url, tasks=("text-classification",), model="acme/gone")
    card = gone.card("text-classification")
    runner = InferenceEndpointRunner(endpoints=[gone], retry=EndpointRetries(max_attempts=2, base_delay_s=0.01))

    with pytest.raises(EndpointError, match=r"acme/gone at .* still failing after 2 attempts \(ConnectError"):
        await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))


async def test_hub_cards_go_to_the_inference_providers_by_model_id(endpoint, tmp_path, monkeypatch):
    """The providers' URLs are fixed when huggingface_hub is imported, so the client is redirected to the fake
    after checking what the runner asked of it."""
    asked: list[tuple[str | None, str | None]] = []

    class Redirected(AsyncInferenceClient):
        def __init__(self, model: str | None = None, **options: Any) -> None:
            asked.append((model, options["provider"]))
            super().__init__(model=f"{endpoint.url}/models/text-classification", token=options["token"])

    monkeypatch.setattr(inference_endpoint, "AsyncInferenceClient", Redirected)
    endpoint.reply("POST", "/models/text-classification", Reply(json=SENTIMENT))
    card = CatalogEntry(id="acme/sentiment", task="text-classification", source="hub")
    runner = InferenceEndpointRunner(provider="hf-inference")

    output = await runner.run(card, card.task, {"text": "fine"}, ArtifactStore(tmp_path, 0))

    assert asked == [("acme/sentiment", "hf-inference")] and output.text.startswith("POSITIVE")


def test_endpoint_errors_send_the_executor_to_the_next_candidate():
    assert issubclass(EndpointError, ModelLoadError)


def test_the_configuration_decides_which_cards_it_runs():
    tgi = ExpertEndpoint(url="http://127.0.0.1:8080", tasks=("text-generation",), model="acme/tgi")
    runner = InferenceEndpointRunner(endpoints=[tgi])
    endpoint_only = InferenceEndpointRunner(endpoints=[tgi], hub_sources=())

    assert runner.can_run(tgi.card("text-generation"))
    assert not runner.can_run(tgi.card("summarization"))  # not a task it was configured for
    assert runner.can_run(CatalogEntry(id="acme/any", task="summarization", source="hub"))
    assert not runner.can_run(CatalogEntry(id="acme/local", task="summarization", source="local"))
    assert not runner.can_run(CatalogEntry(id="acme/any", task="depth-estimation", source="hub"))
    assert not endpoint_only.can_run(CatalogEntry(id="acme/any", task="summarization", source="hub"))


def test_the_token_stays_out_of_the_runners_repr():
    runner = InferenceEndpointRunner(token=TOKEN)
    assert TOKEN not in repr(vars(runner))


def test_every_task_is_a_hub_task_with_a_client_method_named_after_it():
    for task, hub_task in HUB_TASKS.items():
        assert task in TASKS
        assert callable(getattr(AsyncInferenceClient, hub_task.method))
        assert hub_task.method == task.replace("-", "_") or (task, hub_task.method) == (
            "conversational",
            "chat_completion",
        )


CHAT = {
    "id": "chat-1",
    "created": 0,
    "model": "acme/chat",
    "system_fingerprint": "fake",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Hello!"}}],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}

# task -> (the endpoint's answer as the Hub's hosted models give it, what the runner's text output says)
ANSWERS: dict[str, tuple[Reply, str]] = {
    "token-classification": (
        Reply(json=[{"entity_group": "ORG", "score": 0.9, "word": "Acme", "start": 0, "end": 4}]),
        "Acme: ORG",
    ),
    "text-classification": (Reply(json=SENTIMENT), "POSITIVE (0.98), NEGATIVE (0.02)"),
    "zero-shot-classification": (
        Reply(json=[{"label": "sport", "score": 0.8}, {"label": "food", "score": 0.2}]),
        "sport (0.80), food (0.20)",
    ),
    "summarization": (Reply(json=[{"summary_text": "Short."}]), "Short."),
    "translation": (Reply(json=[{"translation_text": "Bonjour."}]), "Bonjour."),
    "question-answering": (Reply(json={"answer": "red", "score": 0.9, "start": 14, "end": 17}), "red"),
    "text-generation": (Reply(json=[{"generated_text": "Once upon a time"}]), "Once upon a time"),
    "conversational": (Reply(json=CHAT), "Hello!"),
    "feature-extraction": (Reply(json=[0.25, 0.5]), "2"),
    "fill-mask": (
        Reply(json=[{"sequence": "a fine day", "score": 0.9, "token": 7, "token_str": "fine"}]),
        "a fine day",
    ),
    "image-classification": (Reply(json=[{"label": "cat", "score": 0.75}]), "cat (0.75)"),
    "object-detection": (
        Reply(json=[{"label": "cat", "score": 0.5, "box": {"xmin": 0, "ymin": 0, "xmax": 4, "ymax": 4}}]),
        "cat (0.50)",
    ),
    "image-segmentation": (
        Reply(json=[{"label": "cat", "score": 0.5, "mask": base64.b64encode(png(mode="L")).decode()}]),
        "cat (0.50)",
    ),
    "image-to-text": (Reply(json=[{"generated_text": "a red square"}]), "a red square"),
    "visual-question-answering": (Reply(json=[{"answer": "red", "score": 0.9}]), "red"),
    "document-question-answering": (Reply(json=[{"answer": "42", "score": 0.9, "start": 3, "end": 3}]), "42"),
    "text-to-image": (Reply(body=png(), content_type="image/png"), "{artifact}"),
    "image-to-image": (Reply(body=png(), content_type="image/png"), "{artifact}"),
    "automatic-speech-recognition": (Reply(json={"text": "hello world"}), "hello world"),
    "audio-classification": (Reply(json=[{"label": "dog", "score": 0.6}]), "dog (0.60)"),
    "text-to-speech": (Reply(body=b"fLaC-fake", content_type="audio/flac"), "{artifact}"),
    "audio-to-audio": (
        Reply(json=[{"label": "voice", "content-type": "audio/flac", "blob": base64.b64encode(b"fLaC").decode()}]),
        "{artifact}",
    ),
}


def inputs_for(task: str, folder: Path) -> dict[str, str]:
    (folder / "in.png").write_bytes(png())
    (folder / "in.wav").write_bytes(b"RIFF\x24\x00\x00\x00WAVEfmt ")
    files = {"image": str(folder / "in.png"), "audio": str(folder / "in.wav")}
    given = {name: files.get(name, "Is it red?") for name in TASKS[task].inputs}
    return given | {"labels": "sport, food", "context": "The square is red."}


def test_every_supported_task_has_an_answer_here():
    assert set(ANSWERS) == set(HUB_TASKS)


@pytest.mark.parametrize("task", sorted(ANSWERS))
async def test_each_task_runs_end_to_end(endpoint, tmp_path, task):
    reply, expected = ANSWERS[task]
    path = f"/models/{task}/v1/chat/completions" if task == "conversational" else f"/models/{task}"
    endpoint.reply("POST", path, reply)
    runner, card = served(endpoint, task)

    output = await runner.run(card, task, inputs_for(task, tmp_path), ArtifactStore(tmp_path / "run", 0))

    assert [r.path for r in endpoint.requests] == [path]
    assert expected.format(artifact=output.artifacts[0].path if output.artifacts else "") in output.text
    json.dumps(output.data)  # JSON-safe, whatever the task
    if TASKS[task].output != "text" or task in ("object-detection", "image-segmentation"):  # drawn results
        assert output.artifacts and all(Path(a.path).is_file() for a in output.artifacts)
