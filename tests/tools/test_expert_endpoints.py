"""Configured inference servers: what a configuration may say, the probe that tells whether a server is up, and the
catalog that offers the servers that answer, in configuration order."""

from __future__ import annotations

import socket

import pytest
from hub_fake import FakeHub, Reply, allow_loopback_requests
from pydantic import ValidationError

from hugginggraph.tools.expert_endpoints import (
    ENDPOINT_LIBRARY,
    ENDPOINT_SOURCE,
    PROBE_TTL_S,
    EndpointCatalog,
    ExpertEndpoint,
    server_answers,
)

TGI = ExpertEndpoint(url="http://tgi:80/", tasks=("text-generation", "conversational"))
VLLM = ExpertEndpoint(url="http://vllm:8000/v1", tasks=("text-generation",), model="Qwen/Qwen2.5-7B", protocol="openai")
TEI = ExpertEndpoint(url="http://tei:80", tasks=("feature-extraction",), model="BAAI/bge-small-en-v1.5")


def test_a_server_is_named_by_its_model_or_its_host_and_its_url_loses_the_trailing_slash():
    assert (TGI.name, TGI.url) == ("tgi:80", "http://tgi:80")
    assert VLLM.name == "Qwen/Qwen2.5-7B"


def test_its_cards_say_where_the_model_runs_and_no_local_runner_claims_them():
    card = TEI.card("feature-extraction")
    assert (card.id, card.task, card.source, card.library) == (
        "BAAI/bge-small-en-v1.5",
        "feature-extraction",
        ENDPOINT_SOURCE,
        ENDPOINT_LIBRARY,
    )
    assert "http://tei:80" in card.description


@pytest.mark.parametrize(
    ("given", "complaint"),
    [
        ({"url": "tgi:80", "tasks": ["text-generation"]}, "must be an http"),
        ({"url": "http://tgi", "tasks": []}, "at least 1 item"),
        ({"url": "http://tgi", "tasks": ["depth-estimation"]}, "cannot serve depth-estimation"),
        ({"url": "http://vllm", "tasks": ["summarization"], "model": "m", "protocol": "openai"}, "serves conversat"),
        ({"url": "http://vllm", "tasks": ["text-generation"], "protocol": "openai"}, "needs `model`"),
        ({"url": "http://tgi", "tasks": ["text-generation"], "protocol": "grpc"}, "'hf' or 'openai'"),
        ({"url": "http://tgi", "tasks": ["text-generation"], "weights": "x"}, "Extra inputs"),
    ],
)
def test_a_configuration_it_cannot_honour_is_refused_saying_why(given, complaint):
    with pytest.raises(ValidationError, match=complaint):
        ExpertEndpoint.model_validate(given)


def test_its_token_stays_out_of_its_repr():
    secret = ExpertEndpoint(url="https://x.endpoints.huggingface.cloud", tasks=("summarization",), token="hf_secret")
    assert "hf_secret" not in repr(secret) and secret.token and secret.token.get_secret_value() == "hf_secret"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    allow_loopback_requests(monkeypatch)
    with FakeHub() as fake:
        yield fake


@pytest.mark.parametrize(("status", "up"), [(200, True), (401, True), (404, True), (503, False), (500, False)])
def test_a_server_answers_with_any_status_below_500(server, status, up):
    server.reply("GET", "/health", Reply(status))
    assert server_answers(server.url) is up
    assert [request.path for request in server.requests] == ["/health"]


def test_a_server_that_refuses_connections_or_takes_too_long_does_not_answer(server, monkeypatch):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    assert not server_answers(f"http://127.0.0.1:{port}")
    server.reply("GET", "/health", Reply(200, delay_s=5))
    assert not server_answers(server.url, timeout_s=0.2)


class Probes:
    """Plays the probe: which URLs answer, and how often each was asked."""

    def __init__(self, *up: str) -> None:
        self.up = set(up)
        self.asked: list[str] = []

    def __call__(self, url: str) -> bool:
        self.asked.append(url)
        return url in self.up


def test_the_candidates_are_the_servers_for_the_task_that_answer_in_configuration_order(monkeypatch):
    allow_loopback_requests(monkeypatch)
    backup = ExpertEndpoint(url="http://tgi-2:80", tasks=("text-generation",), model="backup")
    probes = Probes("http://tgi:80", "http://tgi-2:80")
    catalog = EndpointCatalog([VLLM, TGI, backup], answers=probes)

    assert [card.id for card in catalog.candidates("text-generation")] == ["tgi:80", "backup"]  # vLLM is down
    assert [card.id for card in catalog.candidates("conversational")] == ["tgi:80"]
    assert catalog.candidates("summarization") == []
    assert catalog.get("Qwen/Qwen2.5-7B") == VLLM.card("text-generation")  # found, down or not
    assert catalog.get("nobody") is None


def test_a_probe_stands_for_its_time_to_live_then_the_server_is_asked_again(monkeypatch):
    allow_loopback_requests(monkeypatch)
    probes = Probes()
    catalog = EndpointCatalog([TGI], answers=probes)
    clock = [1000.0]
    monkeypatch.setattr("hugginggraph.tools.expert_endpoints.time.monotonic", lambda: clock[0])

    assert catalog.candidates("text-generation") == [] and catalog.candidates("conversational") == []
    probes.up.add(TGI.url)  # the server comes up
    clock[0] += PROBE_TTL_S - 1
    assert catalog.candidates("text-generation") == []
    clock[0] += 2
    assert [card.id for card in catalog.candidates("text-generation")] == ["tgi:80"]
    assert probes.asked == [TGI.url, TGI.url]


def test_in_huggingface_hubs_offline_mode_no_server_is_offered_nor_probed(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    probes = Probes(TGI.url)
    assert EndpointCatalog([TGI], answers=probes).candidates("text-generation") == []
    assert probes.asked == []
