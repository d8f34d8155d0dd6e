"""`hugginggraph run / plan / chat / resume / history / runs` as a user drives them: in a subprocess, against a
local OpenAI-compatible server as the controller, which is also the expert (it summarizes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from openai_fake import FakeOpenAI

pytestmark = pytest.mark.slow

STEP = "summarize the text"
PLAN = [{"step": STEP, "task": "summarization", "id": 0, "dep": [-1], "args": {"text": "what a fine day"}}]
ANSWER = "The text is about a fine day."
PROXIES = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}
TERMINAL = {"FORCE_COLOR", "TTY_COMPATIBLE"}  # would make rich draw for a terminal even into a pipe


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    replies = {"plan": json.dumps({"tasks": PLAN}), "respond": ANSWER, "chat": "A fine day."}
    with FakeOpenAI(replies) as fake:
        yield fake


@pytest.fixture
def cli(tmp_path: Path, server: FakeOpenAI):
    """Runs `hugginggraph ARGS` with the fake controller and a fresh data directory."""
    env = {key: value for key, value in os.environ.items() if key not in PROXIES | TERMINAL}
    env.update(HUGGINGGRAPH_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-test", HF_HUB_OFFLINE="1")
    configuration = ["--model", "openai:fake-model", "--base-url", server.base_url]

    def run(*args: str, stdin: str = "", configured: bool = True) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "hugginggraph", *args, *(configuration if configured else [])]
        return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

    return run


def test_run_shows_plan_progress_answer_and_thread(cli, server):
    out = cli("run", "is this text positive?", "--thread", "first")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["Plan (1 task):", "  [0] summarization  text=what a fine day"]
    assert "[0] summarization started" in lines
    assert any(line.startswith("[0] summarization ok (controller-llm/summarization") for line in lines)
    assert lines[lines.index("Answer:") + 1] == ANSWER
    # The answer was streamed from the controller as it wrote it, and printed once.
    assert [request.body.get("stream") for request in server.requests_for("respond")] == [True]
    assert out.stdout.count(ANSWER) == 1
    assert "Pydantic serializer warnings" not in out.stderr  # langchain-openai's, on streamed structured output
    assert lines[-1] == "Thread first: `hugginggraph history first` shows its steps."


def test_plan_prints_the_validated_plan_and_runs_nothing(cli, server):
    out = cli("plan", "is this text positive?")
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert printed["plan"] == [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "what a fine day"}}]
    assert printed["error"] is None and printed["cannot_run"] == {}
    assert server.requests_for("respond") == []


def test_plan_in_a_thread_sees_the_conversation_and_leaves_it_as_it_was(cli, server):
    assert cli("run", "is this text positive?", "--thread", "talk").returncode == 0
    steps = cli("history", "talk").stdout
    out = cli("plan", "now summarize it again", "--thread", "talk")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["plan"][0]["task"] == "summarization"
    seen = json.dumps(server.requests_for("plan")[-1].body["messages"])
    assert "is this text positive?" in seen and ANSWER in seen and "now summarize it again" in seen
    assert cli("history", "talk").stdout == steps  # no new turn, no new checkpoint
    unknown = cli("plan", "anything", "--thread", "nope")
    assert unknown.returncode == 1 and "nothing was saved on thread 'nope'" in unknown.stderr


def test_run_approve_runs_what_the_user_edited_and_n_runs_nothing(cli, server):
    edited = cli("run", "is this text positive?", "--approve", stdin="e\n0 text=what a dreadful day\n\n")
    assert edited.returncode == 0, edited.stderr
    lines = edited.stdout.splitlines()
    assert "  [0] summarization  text=what a fine day  model controller-llm/summarization" in lines
    assert "Approve? [y]es / [n]o / [e]dit: e" in lines
    assert lines.index("  [0] summarization  text=what a dreadful day") < lines.index("[0] summarization started")
    rejected = cli("run", "is this text positive?", "--approve", stdin="n\nnot now\n")
    assert rejected.returncode == 1
    assert "I stopped before running any model: the user rejected the plan: not now." in rejected.stdout
    assert len(server.requests_for("respond")) == 1  # the edited run's answer only


def test_chat_keeps_one_thread_and_history_and_runs_show_it(cli):
    out = cli("chat", "--thread", "talk", stdin="hello\nis this text positive?\nexit\nnever sent\n")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Answer:") == 2 and "never sent" not in out.stdout
    assert "Deserializing unregistered type" not in out.stderr  # our state types are on the allowlist
    assert cli("runs").stdout.split() == ["talk"]
    history = cli("history", "talk")
    assert history.returncode == 0
    steps = history.stdout.splitlines()
    assert steps[0].startswith("step -1:") and steps[-1].endswith("next done")
    assert sum(step.endswith("next respond") for step in steps) == 2  # one answer per turn


def test_resume_of_a_finished_run_reports_it_again(cli):
    assert cli("run", "is this text positive?", "--thread", "again").returncode == 0
    out = cli("resume", "again")
    assert out.returncode == 0 and ANSWER in out.stdout


def test_a_missing_input_file_fails_that_task_with_a_clear_reason(cli, server):
    server.replies["plan"] = json.dumps(
        {"tasks": [{"step": "say what cat.png shows", "task": "image-to-text", "id": 0, "args": {"image": "cat.png"}}]}
    )
    out = cli("run", "what is in cat.png?", "--file", "cat.png")
    assert out.returncode == 0
    assert "cannot run [0]: input file 'cat.png' not found" in out.stdout


def test_an_unreachable_controller_is_one_clear_line_and_exit_1(cli, tmp_path):
    out = cli("run", "hello", "--model", "openai:fake-model", "--base-url", "http://127.0.0.1:9/v1", configured=False)
    assert out.returncode == 1
    assert "I could not carry out this request: " in out.stdout and "could not be reached" in out.stdout
    assert "Traceback" not in out.stderr


def test_demo_copies_its_samples_and_runs_a_request_over_them(cli, tmp_path):
    out = cli("demo", "--dir", str(tmp_path / "demo"), "--thread", "demo")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in (tmp_path / "demo").iterdir()) == ["memo.wav", "sign.png"]
    assert out.stdout.startswith(f"Demo in {tmp_path / 'demo'}: Transcribe memo.wav")
    assert ANSWER in out.stdout
    assert not list((tmp_path / "home").glob("models/tiny-*"))  # the demo builds no random-weight model
