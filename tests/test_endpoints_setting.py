"""The `endpoints` setting from the environment and the config file to a run: a configured inference server is the
first candidate of its tasks, chosen without asking the controller, while it answers; when it fails, the task falls
back to the next candidate; `models list` shows each server and whether it answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from configured import settings_from
from hub_fake import FakeHub, Reply, allow_loopback_requests

from hugginggraph import arun
from hugginggraph.context_assembly import build_context, default_catalog, default_runners
from hugginggraph.graph.context import HuggingGraphContext, PlanningAids
from hugginggraph.settings import ConfigurationError
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.tools.expert_endpoints import ENDPOINT_SOURCE, ExpertEndpoint
from hugginggraph.tools.runners.inference_endpoint import InferenceEndpointRunner
from hugginggraph.tools.runners.llm_runner import LLMRunner

SUMMARY = [{"summary_text": "Costs rose; the plan holds."}]
PLAN = [{"task": "summarization", "id": 0, "dep": [-1], "args": {"text": "A long report about costs and plans."}}]


@pytest.fixture
def tgi(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A summarization server, up (its health route answers)."""
    allow_loopback_requests(monkeypatch)
    with FakeHub() as fake:
        fake.reply("GET", "/health", Reply(200))
        yield fake


def served_by(server: FakeHub) -> ExpertEndpoint:
    return ExpertEndpoint(url=server.url, tasks=("summarization",), model="acme/bart-large-cnn")


def test_the_environment_sets_the_servers_as_a_json_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    listed = [
        {"url": "http://tgi:80", "tasks": ["text-generation"], "model": "llama"},
        {"url": "http://tei", "tasks": ["feature-extraction"]},
    ]
    settings = settings_from(monkeypatch, {"HUGGINGGRAPH_ENDPOINTS": json.dumps(listed)}, tmp_path / "no.toml")
    assert [(endpoint.name, endpoint.tasks) for endpoint in settings.endpoints] == [
        ("llama", ("text-generation",)),
        ("tei", ("feature-extraction",)),
    ]


def test_the_config_file_sets_the_servers_as_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "config.toml"
    config.write_text(
        '[[endpoints]]\nurl = "http://vllm:8000/v1"\ntasks = ["text-generation"]\nmodel = "Qwen/Qwen2.5-7B"\n'
        'protocol = "openai"\ntoken = "sk-local"\n'
    )
    (vllm,) = settings_from(monkeypatch, {}, config).endpoints
    assert (vllm.protocol, vllm.url, vllm.token and vllm.token.get_secret_value()) == (
        "openai",
        "http://vllm:8000/v1",
        "sk-local",
    )


def test_a_server_that_cannot_serve_its_task_is_a_configuration_error(tmp_path: Path, monkeypatch):
    bad = json.dumps([{"url": "http://vllm", "tasks": ["summarization"], "model": "m", "protocol": "openai"}])
    with pytest.raises(ConfigurationError, match=r"endpoints.0: Value error, http://vllm \(openai\) cannot serve"):
        settings_from(monkeypatch, {"HUGGINGGRAPH_ENDPOINTS": bad}, tmp_path / "no.toml")


def test_a_configured_context_offers_the_server_first_and_runs_it_remotely(tgi, tmp_path, monkeypatch):
    listed = json.dumps([served_by(tgi).model_dump(mode="json")])
    settings = settings_from(
        monkeypatch, {"HUGGINGGRAPH_ENDPOINTS": listed, "HUGGINGGRAPH_HUB": "false"}, tmp_path / "no.toml"
    )

    context = build_context(settings, tmp_path)

    first, *others = context.catalog.candidates("summarization")
    assert (first.id, first.source) == ("acme/bart-large-cnn", ENDPOINT_SOURCE)
    assert others and all(card.source != ENDPOINT_SOURCE for card in others)  # what it falls back to
    assert isinstance(context.runner_for(first), InferenceEndpointRunner)


def scripted_context(server: FakeHub, tmp_path: Path) -> HuggingGraphContext:
    """The default catalog and runners with the server configured, and a scripted controller."""
    llm = ScriptedChatModel(plan=PLAN, chat="The controller's own summary.", respond="Here is the summary.")
    expert = LLMRunner(llm)
    endpoints = [served_by(server)]
    return HuggingGraphContext(
        llm=llm,
        catalog=default_catalog(hub=False, llm_runner=expert, endpoints=endpoints),
        runners=default_runners(expert, endpoints=endpoints),
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        planning=PlanningAids(demos="static"),
    )


async def test_a_run_sends_the_task_to_its_server_without_asking_the_controller(tgi, tmp_path):
    tgi.reply("POST", "/", Reply(json=SUMMARY))
    context = scripted_context(tgi, tmp_path)

    state = await arun("Summarize this report", context, checkpoint_path=tmp_path / "runs.sqlite")

    result, choice = state["results"][0], state["choices"][0]
    assert (result.status, result.model_id, result.text) == ("ok", "acme/bart-large-cnn", "Costs rose; the plan holds.")
    assert choice.model_ids[0] == "acme/bart-large-cnn" and not choice.asked_llm
    assert choice.reason == "the inference server configured for summarization"
    assert "select" not in context.llm.calls
    assert json.loads(tgi.requests_to("/", "POST")[0].body)["inputs"] == PLAN[0]["args"]["text"]


async def test_when_the_server_fails_the_task_falls_back_to_the_next_candidate(tgi, tmp_path):
    tgi.reply("POST", "/", Reply(500, {"error": "CUDA out of memory"}))
    context = scripted_context(tgi, tmp_path)
    endpoint_runner = next(r for r in context.runners if isinstance(r, InferenceEndpointRunner))
    endpoint_runner.retry = endpoint_runner.retry.model_copy(update={"max_attempts": 2, "base_delay_s": 0.01})

    state = await arun("Summarize this report", context, checkpoint_path=tmp_path / "runs.sqlite")

    result = state["results"][0]
    assert result.status == "ok" and result.model_id != "acme/bart-large-cnn"
    assert any(
        "acme/bart-large-cnn" in attempt and "HTTP 500: CUDA out of memory" in attempt for attempt in result.attempts
    )


def test_models_list_shows_each_server_and_whether_it_answers(tgi, tmp_path: Path):
    down = ExpertEndpoint(url="http://127.0.0.1:9", tasks=("text-generation",), model="gone")
    listed = json.dumps([served_by(tgi).model_dump(mode="json"), down.model_dump(mode="json")])
    env = {**os.environ, "HUGGINGGRAPH_HOME": str(tmp_path), "HUGGINGGRAPH_ENDPOINTS": listed}
    env.pop("HF_HUB_OFFLINE", None)
    env.pop("TRANSFORMERS_OFFLINE", None)
    env["HUGGINGGRAPH_HUB"] = "false"
    out = subprocess.run(
        [sys.executable, "-m", "hugginggraph", "models", "list"], capture_output=True, text=True, env=env, timeout=120
    )

    assert out.returncode == 0, out.stderr
    servers = [
        " ".join(line.split())
        for line in out.stdout.split("Inference servers (settings: endpoints):\n")[1].splitlines()
    ]
    assert servers[1:] == [
        f"acme/bart-large-cnn {tgi.url} hf summarization answering",
        "gone http://127.0.0.1:9 hf text-generation not answering",
    ]
    rows = [line.split() for line in out.stdout.splitlines()]
    assert ["summarization", "acme/bart-large-cnn", "endpoint", "inference-endpoint", "0", "real"] in rows
    assert len(tgi.requests_to("/health", "GET")) == 1  # the table shows the listing's own probe
