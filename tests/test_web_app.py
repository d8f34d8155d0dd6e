"""The web app (`hugginggraph ui`) on a scripted controller and scripted experts: the runs behind the page
(hugginggraph.web_app_runs) on the real graph and a real SQLite checkpointer, then the page itself served in this
process and driven over Gradio's API, then the `hugginggraph ui` command as a user starts it. The page in a real
browser is tests/test_web_app_browser.py."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import lead
from langgraph_server import DROPPED, free_port
from openai_fake import FakeOpenAI

from hugginggraph.approval_dialog import edit_decision
from hugginggraph.graph.checkpoint import NothingSaved
from hugginggraph.nodes.approval import ApprovalDecision
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.web_app_runs import WebRuns
from hugginggraph.web_app_view import Media, Message, RunView, conversation, phase

SAMPLES = Path(__file__).resolve().parents[1] / "src" / "hugginggraph" / "samples"
MEMO = SAMPLES / "memo.wav"
REQUEST = "Transcribe memo.wav, read the transcript aloud and draw a sign"
PLAN = [
    {"task": "automatic-speech-recognition", "id": 0, "dep": [-1], "args": {"audio": "memo.wav"}},
    {"task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
    {"task": "text-to-image", "id": 2, "dep": [-1], "args": {"text": "a sign"}},
]
ANSWER = "I transcribed memo.wav, read it aloud and drew a sign."
STARTUP_S = 120


async def transcribe(card, task, inputs, artifacts) -> RunnerOutput:
    return RunnerOutput(text=f"{card.id} heard {Path(inputs['audio']).name}")


async def speak(card, task, inputs, artifacts) -> RunnerOutput:
    spoken = artifacts.save_wav([0.0, 0.2, 0.0, -0.2] * 4000, 16000, "speech")
    return RunnerOutput(text=spoken.path, artifacts=[spoken])


async def draw(card, task, inputs, artifacts) -> RunnerOutput:
    from PIL import Image

    drawn = artifacts.save_image(Image.new("RGB", (96, 48), "navy"), "image")
    return RunnerOutput(text=drawn.path, artifacts=[drawn])


MODELS = {
    "whisper": ("automatic-speech-recognition", transcribe),
    "whisper-tiny": ("automatic-speech-recognition", transcribe),
    "piper": ("text-to-speech", speak),
    "painter": ("text-to-image", draw),
}


def scripted_runs(make_context, root: Path) -> WebRuns:
    """The runs behind the page, on scripted models, saving to a checkpoint file under `root`."""
    context = make_context(PLAN, MODELS, downloads={"whisper": 10})
    context.llm.respond = ANSWER
    return WebRuns(context, root / "uploads", checkpoint_path=root / "checkpoints.sqlite")


@pytest.fixture
def web_runs(make_context, tmp_path: Path) -> WebRuns:
    return scripted_runs(make_context, tmp_path)


async def views_of(stream) -> list[RunView]:
    return [view async for view in stream]


# --- the runs behind the page ---------------------------------------------------------------------------------


async def test_a_request_streams_from_planning_to_the_answer_with_its_outputs(web_runs):
    names = web_runs.receive("t", [str(MEMO)])
    assert names == ["memo.wav"] and (web_runs.workspace("t") / "memo.wav").read_bytes() == MEMO.read_bytes()
    phases, bubbles = [], []
    async for view in web_runs.start("t", REQUEST, names, approval=False):
        phases.append(phase(view))
        bubbles = conversation(view)  # the view is one object, updated in place: read it as it streams
    assert phases[-1] == "Answered." and "Running the tasks: 0 of 3 ended." in phases
    assert "Writing the answer…" in phases  # the answer streamed, token by token
    assert bubbles[:2] == [
        Message("user", REQUEST),
        Message("user", media=Media("audio", str(web_runs.workspace("t") / "memo.wav"))),
    ]
    # Each task read the file from the thread's own workspace, and its outputs follow its bubble.
    assert (
        Message("assistant", "whisper heard memo.wav", title="[0] automatic-speech-recognition", log=bubbles[2].log)
        in bubbles
    )
    media = [bubble.media for bubble in bubbles if bubble.role == "assistant" and bubble.media]
    assert [item.kind for item in media] == ["audio", "image"]
    assert all(
        Path(item.path).is_file() and Path(item.path).is_relative_to(web_runs.context.artifacts_dir) for item in media
    )
    assert lead(bubbles[-1].text) == ANSWER


async def test_each_thread_keeps_its_uploads_apart(web_runs, tmp_path: Path):
    for thread, words in (("a", "first"), ("b", "second")):
        upload = tmp_path / thread / "notes.txt"
        upload.parent.mkdir()
        upload.write_text(words)
        web_runs.receive(thread, [str(upload)])
    assert (web_runs.workspace("a") / "notes.txt").read_text() == "first"
    assert (web_runs.workspace("b") / "notes.txt").read_text() == "second"
    assert web_runs.workspace("../x").parent == web_runs.uploads  # a thread id cannot steer the folder out


async def test_threads_are_listed_and_reopen_with_their_earlier_turns(web_runs):
    web_runs.receive("t", [str(MEMO)])
    for request in ("first request", "second request"):
        await views_of(web_runs.start("t", request, ["memo.wav"], approval=False))
    assert await web_runs.threads() == ["t"]
    history, view = await web_runs.reopen("t")
    assert history[0].text == "first request" and lead(history[1].text) == ANSWER and len(history) == 2
    assert view.request == "second request" and view.ended and len(view.rows) == 3
    assert [bubble.media.kind for bubble in conversation(view) if bubble.media] == ["audio", "audio", "image"]
    with pytest.raises(NothingSaved):
        await web_runs.reopen("nobody")


async def test_approval_pauses_before_any_model_and_the_answer_carries_the_run_on(web_runs):
    web_runs.receive("t", [str(MEMO)])
    paused = (await views_of(web_runs.start("t", REQUEST, ["memo.wav"], approval=True)))[-1]
    assert phase(paused) == "Waiting for your approval." and web_runs.context.runners[0].calls == []
    asked = await web_runs.question("t")
    assert asked == paused.question and [task.model for task in asked.tasks] == ["whisper", "piper", "painter"]
    decision = edit_decision(asked, ["0 model=whisper-tiny"])
    views = await views_of(web_runs.answer("t", decision))
    assert len(views[0].rows) == 3  # the plan shown again before the first task event: restored from the checkpoint
    assert phase(views[-1]) == "Answered." and views[-1].rows[0].result.model_id == "whisper-tiny"
    assert await web_runs.question("t") is None


async def test_a_rejected_plan_runs_nothing_and_says_why(web_runs):
    web_runs.receive("t", [str(MEMO)])
    await views_of(web_runs.start("t", REQUEST, ["memo.wav"], approval=True))
    ended = (await views_of(web_runs.answer("t", ApprovalDecision(action="reject", feedback="not now"))))[-1]
    assert phase(ended) == "Stopped: the user rejected the plan: not now"
    assert web_runs.context.runners[0].calls == []
    with pytest.raises(NothingSaved):
        await views_of(web_runs.answer("nobody", ApprovalDecision(action="approve")))


# --- the page, served in this process and driven over Gradio's API --------------------------------------------


@contextmanager
def served(runs: WebRuns) -> Iterator[str]:
    """The app on a free loopback port, in this process; its address."""
    pytest.importorskip("gradio", reason="gradio is not installed: pip install '.[ui]'")
    from hugginggraph.web_app import build_app, launch

    app = build_app(runs)
    try:
        yield launch(app, runs, "127.0.0.1", free_port(), block=False)
    finally:
        app.close()


@pytest.fixture
def page(web_runs) -> Iterator[str]:
    with served(web_runs) as url:
        yield url


def client(url: str) -> Any:
    from gradio_client import Client

    return Client(url, verbose=False, download_files=False)


OUTPUTS = ["chat", "status", "question", "dag", "tasks", "thread", "threads", "request", "uploads", "edits", "reason"]
"""What a streaming event returns over the API, in order (the session state and the approval panel's visibility
are not sent to API clients)."""


def shown(result: tuple[Any, ...]) -> dict[str, Any]:
    return dict(zip(OUTPUTS, result, strict=True))


def components(chat: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [
        part
        for message in chat
        for part in message["content"]
        if part.get("type") == "component" and part["component"] == kind
    ]


def test_the_page_takes_an_upload_and_shows_the_plan_outputs_and_answer(page, web_runs):
    from gradio_client import handle_file

    job = client(page).submit(REQUEST, [handle_file(str(MEMO))], False, api_name="/run")
    result = shown(job.result())
    assert result["status"] == "Answered."
    first = shown(job.outputs()[0])
    assert first["request"] == "" and first["uploads"] is None  # cleared at once, for the next request
    assert len(job.outputs()) > 4  # the page changed as the run went, not only at its end
    chat = result["chat"]
    assert chat[0]["content"][0]["text"] == REQUEST and chat[-1]["content"][0]["text"].startswith(ANSWER)
    task = next(message for message in chat if (message.get("metadata") or {}).get("title") == "[1] text-to-speech")
    assert task["metadata"]["log"].startswith("done") and "status" not in task["metadata"]
    # The uploaded recording and the spoken output, each as a player; the drawing as an image: all served.
    players = components(chat, "audio")
    assert [player["value"]["orig_name"] for player in players] == ["memo.wav", "task-1-speech.wav"]
    for served in [*players, *components(chat, "image")]:
        answer = httpx.get(served["value"]["url"], timeout=10)
        assert answer.status_code == 200 and answer.content == Path(served["value"]["path"]).read_bytes()
    assert "  t0 --> t1" in result["dag"] and ":::ok" in result["dag"]
    assert [row[0] for row in result["tasks"]["data"]] == ["0", "1", "2"]
    thread = result["thread"].split("`")[1]
    assert [choice[0] for choice in result["threads"]["choices"]] == [thread]
    assert (web_runs.workspace(thread) / "memo.wav").is_file()


def test_the_plan_is_approved_or_rejected_from_the_page(page, web_runs):
    from gradio_client import handle_file

    tab = client(page)  # one session: the page's thread carries from one event to the next
    asked = shown(tab.predict(REQUEST, [handle_file(str(MEMO))], True, api_name="/run"))
    assert asked["status"] == "Waiting for your approval."
    assert "| 1 | text-to-speech | text=&lt;GENERATED>-0 | piper |" in asked["question"].splitlines()
    assert web_runs.context.runners[0].calls == []
    edited = shown(tab.predict("0 model=whisper-tiny", api_name="/edit"))
    assert edited["status"] == "Answered." and "done" in edited["tasks"]["data"][0][5]
    assert edited["tasks"]["data"][0][4] == "whisper-tiny"
    shown(tab.predict("Transcribe memo.wav again", None, True, api_name="/run"))
    rejected = shown(tab.predict("not now", api_name="/reject"))
    assert rejected["status"] == "Stopped: the user rejected the plan: not now"


def test_a_past_thread_reopens_where_it_stands(page, web_runs):
    web_runs.receive("earlier", [str(MEMO)])

    async def two_turns() -> None:
        for request in ("first request", "second request"):
            await views_of(web_runs.start("earlier", request, ["memo.wav"], approval=False))

    asyncio.run(two_turns())
    opened = client(page).predict("earlier", api_name="/open")
    chat, status, thread = opened[0], opened[1], opened[5]
    texts = [message["content"][0].get("text") for message in chat]
    assert texts[0] == "first request" and lead(texts[1]) == ANSWER and texts[2] == "second request"
    assert status == "Answered." and "earlier" in thread


def test_the_page_loads_nothing_from_outside_the_machine(page):
    html = httpx.get(page, timeout=10).text
    assert "<script" in html
    for outside in ("https://", "http://", "//cdn", "fonts.googleapis"):
        attributes = [f'src="{outside}', f"src='{outside}", f'href="{outside}', f"href='{outside}"]
        assert not any(attribute in html for attribute in attributes), outside


# --- `hugginggraph ui` as a user starts it ---------------------------------------------------------------------


class ConnectionRecorder:
    """A proxy that answers nothing and records each request for it: the first line of every connection."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(2)
                try:
                    self.seen.append(connection.recv(4096).split(b"\r\n")[0].decode(errors="replace"))
                except TimeoutError:
                    self.seen.append("(a connection that sent nothing)")

    def __enter__(self) -> ConnectionRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._server.close()


def ui_environment(home: Path, proxy: str | None = None) -> dict[str, str]:
    """The environment of a user with a fresh data folder and no settings of their own; with `proxy`, every HTTP
    client that honours the proxy variables sends what is not for loopback there."""
    env = {key: value for key, value in os.environ.items() if key not in DROPPED}
    env.update(HUGGINGGRAPH_HOME=str(home), HUGGINGGRAPH_CONFIG=str(home / "no-config.toml"), HF_HUB_OFFLINE="1")
    if proxy:
        env.update(HTTP_PROXY=proxy, HTTPS_PROXY=proxy, ALL_PROXY=proxy, NO_PROXY="127.0.0.1,localhost")
    return env


@contextmanager
def hugginggraph_ui(root: Path, env: dict[str, str], *flags: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`hugginggraph ui` on a free port, its output in `root / "ui.log"`; yields its address and process once the
    page answers, and stops it on exit if it still runs."""
    port = free_port()
    log = root / "ui.log"
    command = [sys.executable, "-m", "hugginggraph", "ui", "--port", str(port), *flags]
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=root, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}/"
            deadline = time.monotonic() + STARTUP_S
            while not _answers(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"hugginggraph ui did not start:\n{log.read_text(errors='replace')}")
                time.sleep(0.5)
            yield url, process
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.slow
def test_hugginggraph_ui_serves_on_loopback_answers_and_reaches_nothing_outside(tmp_path: Path):
    pytest.importorskip("gradio", reason="gradio is not installed: pip install '.[ui]'")
    psutil = pytest.importorskip("psutil", reason="psutil is not installed: pip install '.[test]'")
    replies = {
        "plan": '{"tasks": [{"step": "summarize the text", "task": "summarization", "id": 0, "dep": [-1], '
        '"args": {"text": "what a fine day"}}]}',
        "respond": "The text is about a fine day.",
        "chat": "A fine day.",  # the controller as the summarization expert
    }
    with FakeOpenAI(replies) as controller, ConnectionRecorder() as outside:
        env = {**ui_environment(tmp_path / "home", outside.url), "OPENAI_API_KEY": "sk-test"}
        # Static demos: MiniLM, which retrieval would load, has tests of its own and would only slow this one.
        flags = ("--model", "openai:fake-model", "--base-url", controller.base_url, "--set", "planning.demos=static")
        with hugginggraph_ui(tmp_path, env, *flags) as (url, process):
            sockets = psutil.Process(process.pid).net_connections(kind="inet")
            listening = {entry.laddr.ip for entry in sockets if entry.status == psutil.CONN_LISTEN}
            result = shown(client(url).predict("summarise: what a fine day", None, False, api_name="/run"))
            process.send_signal(signal.SIGINT)  # Ctrl-C
            assert process.wait(timeout=30) == 0
    assert result["status"] == "Answered." and result["chat"][-1]["content"][0]["text"].startswith("The text is")
    assert listening == {"127.0.0.1"}
    assert outside.seen == []  # no analytics, no version check, no share link, no CDN
    assert (tmp_path / "home" / "checkpoints.sqlite").is_file()
