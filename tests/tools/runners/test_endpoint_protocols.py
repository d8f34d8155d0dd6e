"""The inference servers a deployment runs, each played by a fake on 127.0.0.1 that answers only the routes the real
server serves, in its own shapes: Text Generation Inference (`POST /` for generation, OpenAI's chat route for chat),
Text Embeddings Inference (`POST /` for embeddings and classification), vLLM (OpenAI's routes only, checking the
served model's name) and a dedicated Inference Endpoint (which wants its own token)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hub_fake import FakeHub, Reply, allow_loopback_requests

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.expert_endpoints import ExpertEndpoint
from hugginggraph.tools.runners.inference_endpoint import EndpointError, EndpointRetries, InferenceEndpointRunner

FAST = EndpointRetries(max_attempts=2, base_delay_s=0.01)
HF_TOKEN = "hf_users_own_token"


def chat_completion(model: str, text: str) -> dict[str, object]:
    """A chat completion as TGI's and vLLM's OpenAI routes return it."""
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    allow_loopback_requests(monkeypatch)
    monkeypatch.setenv("HF_TOKEN", HF_TOKEN)
    with FakeHub() as fake:
        yield fake


async def call(endpoint: ExpertEndpoint, task: str, inputs: dict[str, str], tmp_path) -> str:
    runner = InferenceEndpointRunner(endpoints=[endpoint], retry=FAST, hub_sources=())
    card = endpoint.card(task)
    assert runner.can_run(card)
    output = await runner.run(card, task, inputs, ArtifactStore(tmp_path, 0))
    return output.text


async def test_text_generation_inference_generates_at_its_root_and_chats_on_the_openai_route(server, tmp_path):
    server.reply("POST", "/", Reply(json=[{"generated_text": "Once upon a time"}]))
    server.reply("POST", "/v1/chat/completions", Reply(json=chat_completion("tgi", "Hi there.")))
    tgi = ExpertEndpoint(url=server.url, tasks=("text-generation", "conversational"), model="llama-8b")

    assert await call(tgi, "text-generation", {"text": "Tell a story"}, tmp_path) == "Once upon a time"
    assert await call(tgi, "conversational", {"text": "Hello"}, tmp_path) == "Hi there."

    generate, chat = server.requests
    assert json.loads(generate.body)["inputs"] == "Tell a story"
    assert json.loads(chat.body)["messages"] == [{"role": "user", "content": "Hello"}]
    assert {generate.headers["authorization"], chat.headers["authorization"]} == {f"Bearer {HF_TOKEN}"}


async def test_text_embeddings_inference_embeds_and_classifies_at_its_root(server, tmp_path):
    server.reply("POST", "/", Reply(json=[[0.1, 0.2, 0.3]]), Reply(json=[{"label": "positive", "score": 0.9}]))
    tei = ExpertEndpoint(url=server.url, tasks=("feature-extraction", "text-classification"), model="bge")

    assert await call(tei, "feature-extraction", {"text": "a sentence"}, tmp_path) == "an array of shape [1, 3]"
    assert await call(tei, "text-classification", {"text": "great"}, tmp_path) == "positive (0.90)"
    assert [json.loads(request.body)["inputs"] for request in server.requests] == ["a sentence", "great"]


async def test_vllm_gets_every_text_task_as_a_chat_naming_its_served_model(server, tmp_path):
    server.reply("POST", "/v1/chat/completions", Reply(json=chat_completion("Qwen/Qwen2.5-7B", "Paris.")))
    vllm = ExpertEndpoint(
        url=f"{server.url}/v1", tasks=("text-generation",), model="Qwen/Qwen2.5-7B", protocol="openai"
    )

    assert await call(vllm, "text-generation", {"text": "Capital of France?"}, tmp_path) == "Paris."

    (request,) = server.requests  # nothing at the root, which vLLM does not serve
    assert request.path == "/v1/chat/completions"
    body = json.loads(request.body)
    assert body["model"] == "Qwen/Qwen2.5-7B"
    assert body["messages"] == [{"role": "user", "content": "Capital of France?"}]


async def test_a_dedicated_inference_endpoint_gets_its_own_token_not_the_users(server, tmp_path):
    server.reply("POST", "/", Reply(json=[{"summary_text": "Short."}]))
    dedicated = ExpertEndpoint(url=server.url, tasks=("summarization",), model="bart", token="hf_endpoint_token")

    assert await call(dedicated, "summarization", {"text": "A long text."}, tmp_path) == "Short."
    (request,) = server.requests
    assert request.headers["authorization"] == "Bearer hf_endpoint_token"


async def test_a_task_the_server_was_not_configured_for_is_refused_without_a_call(server, tmp_path):
    tgi = ExpertEndpoint(url=server.url, tasks=("text-generation",), model="llama-8b")
    runner = InferenceEndpointRunner(endpoints=[tgi], retry=FAST)

    assert not runner.can_run(tgi.card("summarization"))
    with pytest.raises(EndpointError, match="summarization is not a task this runner sends to llama-8b at"):
        await runner.run(tgi.card("summarization"), "summarization", {"text": "x"}, ArtifactStore(tmp_path, 0))
    assert server.requests == []


async def test_in_huggingface_hubs_offline_mode_the_call_fails_saying_what_to_set(server, tmp_path, monkeypatch):
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)
    tgi = ExpertEndpoint(url=server.url, tasks=("text-generation",), model="llama-8b")

    with pytest.raises(EndpointError, match=r"HF_HUB_OFFLINE=1 .* set HUGGINGGRAPH_HUB=false"):
        await call(tgi, "text-generation", {"text": "x"}, tmp_path)
    assert server.requests == []
