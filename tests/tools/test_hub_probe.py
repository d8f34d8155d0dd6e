"""The Hub probe against the fake Hub on 127.0.0.1, a closed port and servers that are not the Hub: one request per
endpoint and process, a quick no when nothing answers, and no request at all in offline mode."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from hub_fake import FakeHub, Reply, allow_loopback_requests

from hugginggraph.tools.hub_probe import hub_reachable

pytestmark = pytest.mark.usefixtures("fresh_hub_probes")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    allow_loopback_requests(monkeypatch)
    with FakeHub([{"id": "acme/model", "pipeline_tag": "text-classification"}]) as fake:
        yield fake


def probes(hub: FakeHub) -> list[dict[str, list[str]]]:
    return [request.query for request in hub.requests_to("/api/models")]


def test_the_fake_hub_is_reachable_and_asked_once_per_process(hub: FakeHub):
    assert hub_reachable(hub.url) and hub_reachable(hub.url + "/")
    assert probes(hub) == [{"limit": ["1"]}]


def test_a_closed_port_is_unreachable_at_once(monkeypatch: pytest.MonkeyPatch):
    allow_loopback_requests(monkeypatch)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = time.monotonic()
    assert not hub_reachable(f"http://127.0.0.1:{port}")
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize("variable", ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"])
def test_offline_mode_is_unreachable_without_a_request(hub: FakeHub, monkeypatch: pytest.MonkeyPatch, variable):
    monkeypatch.setenv(variable, "1")
    assert not hub_reachable(hub.url)
    assert probes(hub) == []


def test_offline_mode_wins_over_an_earlier_answer(hub: FakeHub, monkeypatch: pytest.MonkeyPatch):
    assert hub_reachable(hub.url)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not hub_reachable(hub.url)
    assert len(probes(hub)) == 1


@pytest.mark.parametrize(
    "answer",
    [
        Reply(404, body=b"", content_type="text/plain"),  # a sandbox's proxy answering for every address
        Reply(body=b"<html>Sign in to the Wi-Fi</html>", content_type="text/html"),  # a captive portal
        Reply(503, {"error": "down for maintenance"}),
    ],
)
def test_a_server_that_is_not_a_working_hub_is_unreachable(hub: FakeHub, answer: Reply):
    hub.reply("GET", "/api/models", answer)
    assert not hub_reachable(hub.url)


def test_a_hub_slower_than_the_timeout_is_unreachable(hub: FakeHub):
    hub.reply("GET", "/api/models", Reply(json=[], delay_s=5))
    started = time.monotonic()
    assert not hub_reachable(hub.url, timeout_s=0.2)
    assert time.monotonic() - started < 1.0
