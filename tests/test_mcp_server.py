"""`hugginggraph mcp` as an agent app drives it: the MCP SDK's own client spawns the command and speaks the protocol
to it over stdio. The controller is a scripted OpenAI-compatible server, or the embedded default; the experts are
the real offline ones. Last, the `/mcp` route of `langgraph dev` (docs/mcp.md), called with the SDK's HTTP client.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import pytest
from langgraph_server import langgraph_dev
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from openai_fake import FakeOpenAI

from hugginggraph.graph.state import TaskResult
from hugginggraph.mcp_server import reply
from hugginggraph.runs import athreads
from hugginggraph.tools.artifacts import Artifact

slow = pytest.mark.slow  # the tests that start a server process

COMMAND = str(Path(sys.executable).with_name("hugginggraph"))
READ_ALOUD = [
    {"step": "read the text on sign.png", "task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "sign.png"}},
    {"step": "read it aloud", "task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
]
SUMMARY = [
    {"step": "summarize the text", "task": "summarization", "id": 0, "dep": [-1], "args": {"text": "a fine day"}}
]
ANSWER = "The sign is read, and read aloud."


@pytest.fixture
def controller() -> Iterator[FakeOpenAI]:
    with FakeOpenAI({"plan": json.dumps({"tasks": READ_ALOUD}), "respond": ANSWER}) as fake:
        yield fake


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """The folder the server runs in, holding the bundled picture of a sign."""
    folder = tmp_path / "work"
    folder.mkdir()
    with as_file(files("hugginggraph").joinpath("samples", "sign.png")) as sample:
        shutil.copyfile(sample, folder / "sign.png")
    return folder


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data folder for the module's servers: the demo bank's vectors, computed on a cold start (most of a first
    request's time on 2 cores), are saved there once."""
    return tmp_path_factory.mktemp("home")


@asynccontextmanager
async def connected(workspace: Path, home: Path, *configuration: str) -> AsyncIterator[ClientSession]:
    """A session with `hugginggraph mcp CONFIGURATION` started in `workspace`, saving its runs in `runs.sqlite`
    beside it. The client passes on only the environment given here (and PATH, HOME and the like), so no proxy, key
    or setting of the developer's reaches the server. What the server logs is in `server.log`, printed on failure."""
    root = workspace.parent
    environment = {
        "HUGGINGGRAPH_HOME": str(home),
        "HUGGINGGRAPH_CONFIG": str(root / "no-config.toml"),
        "HF_HUB_OFFLINE": "1",
        "OPENAI_API_KEY": "sk-test",
    }
    arguments = ["mcp", "--checkpoints", str(root / "runs.sqlite"), *configuration]
    server = StdioServerParameters(command=COMMAND, args=arguments, env=environment, cwd=workspace)
    with (root / "server.log").open("w") as log:
        try:
            async with stdio_client(server, errlog=log) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                yield session
        finally:
            print(f"--- server log ---\n{(root / 'server.log').read_text(errors='replace')[-6000:]}")


def text_of(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


def test_a_run_stopped_short_is_a_tool_error_that_still_gives_its_answer_and_files():
    wav = Artifact(kind="audio", path="/data/artifacts/t1/task-1-audio.wav")
    results = {
        1: TaskResult(task_id=1, task="text-to-speech", status="ok", model_id="piper", artifacts=[wav]),
        0: TaskResult(task_id=0, task="image-to-text", status="failed", error="no text"),
    }
    state = {"answer": "I stopped: the run took too long.", "stopped": "run timeout", "results": results}
    result = reply({**state, "thread_id": "t1"})
    assert result.is_error
    assert text_of(result) == f"{state['answer']}\naudio: {wav.path}\nthread_id: t1"
    assert result.structured_content == {
        "answer": state["answer"],
        "thread_id": "t1",
        "tasks": [
            {"id": 0, "task": "image-to-text", "status": "failed", "model": None, "error": "no text", "files": []},
            {"id": 1, "task": "text-to-speech", "status": "ok", "model": "piper", "error": None, "files": [wav.path]},
        ],
        "files": [wav.path],
    }


@slow
async def test_a_request_with_a_file_is_answered_with_the_files_the_experts_wrote(
    controller: FakeOpenAI, workspace: Path, home: Path
):
    async with connected(workspace, home, "--model", "openai:x", "--base-url", controller.base_url) as session:
        (tool,) = (await session.list_tools()).tools
        assert tool.name == "hugginggraph" and "thread_id" in (tool.description or "")
        assert tool.input_schema["required"] == ["request"]
        assert set(tool.output_schema["properties"]) == {"answer", "thread_id", "tasks", "files"}

        result = await session.call_tool("hugginggraph", {"request": "Read sign.png aloud.", "files": ["sign.png"]})

    assert not result.is_error, text_of(result)
    out = result.structured_content
    assert out["answer"].startswith(ANSWER)
    assert [(task["task"], task["status"]) for task in out["tasks"]] == [
        ("image-to-text", "ok"),
        ("text-to-speech", "ok"),
    ]
    (speech,) = out["files"]
    assert Path(speech).is_absolute() and Path(speech).is_file() and speech.endswith(".wav")
    assert Path(speech).is_relative_to(home / "artifacts" / out["thread_id"])
    text = text_of(result)
    assert text.startswith(ANSWER) and f"audio: {speech}" in text and f"thread_id: {out['thread_id']}" in text
    plan_request = controller.requests_for("plan")[0].body["messages"]
    assert "sign.png" in json.dumps(plan_request)  # the planner was told of the input file
    assert out["thread_id"] in await athreads(checkpoint_path=workspace.parent / "runs.sqlite")


@slow
async def test_a_missing_file_is_a_tool_error_and_the_thread_carries_on(
    controller: FakeOpenAI, workspace: Path, home: Path
):
    controller.replies.update(plan=json.dumps({"tasks": SUMMARY}), chat="A fine day.")  # the controller summarizes
    async with connected(workspace, home, "--model", "openai:x", "--base-url", controller.base_url) as session:
        first = await session.call_tool("hugginggraph", {"request": "Summarize: a fine day."})
        thread_id = first.structured_content["thread_id"]

        missing = await session.call_tool(
            "hugginggraph", {"request": "What is in cat.png?", "files": ["cat.png"], "thread_id": thread_id}
        )
        assert missing.is_error
        assert f"input file 'cat.png' not found (looked in {workspace})" in text_of(missing)
        assert len(controller.requests_for("plan")) == 1  # refused before anything was planned

        again = {"request": "Summarize it once more: a fine day.", "thread_id": thread_id}
        later = await session.call_tool("hugginggraph", again)

    assert not later.is_error and later.structured_content["thread_id"] == thread_id
    _, later_plan = controller.requests_for("plan")
    assert "Summarize: a fine day." in json.dumps(later_plan.body["messages"])  # the conversation so far


@slow
@pytest.mark.first_run  # a cold process on the 1.5B: minutes on 2 cores; the browser test runs it in CI
@pytest.mark.timeout(900)
async def test_the_embedded_controller_reads_a_sign_for_an_mcp_client(workspace: Path, home: Path):
    async with connected(workspace, home) as session:  # the default controller, local:qwen2.5-coder-1.5b
        result = await session.call_tool(
            "hugginggraph", {"request": "Read the text on sign.png.", "files": ["sign.png"]}
        )

    assert not result.is_error, text_of(result)
    out = result.structured_content
    assert any(task["task"] == "image-to-text" and task["status"] == "ok" for task in out["tasks"]), out
    assert "closed for repairs" in out["answer"].lower(), out["answer"]


@slow
async def test_the_langgraph_server_serves_the_graph_at_its_mcp_route(tmp_path: Path):
    replies = {"plan": json.dumps({"tasks": SUMMARY}), "respond": ANSWER, "chat": "A fine day."}
    with langgraph_dev(tmp_path, replies) as server:
        async with streamable_http_client(f"{server.url}/mcp") as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            (tool,) = (await session.list_tools()).tools
            result = await session.call_tool(tool.name, {"request": "Summarize: a fine day."})

    assert tool.name == "hugginggraph"
    assert set(tool.input_schema["properties"]) == {"request", "files", "mode", "approval"}  # the graph's input
    assert not result.is_error and result.structured_content is None
    state: dict[str, Any] = ast.literal_eval(text_of(result))  # the whole output state, as a Python repr
    assert state["answer"].startswith(ANSWER) and state["results"]["0"]["status"] == "ok"
