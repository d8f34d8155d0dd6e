"""A real `langgraph dev` server on langgraph.json, for the tests that drive HuggingGraph over HTTP.

The controller is a fake OpenAI-compatible server on loopback, the experts whatever models the test put in the
server's home folder; the environment is stripped of keys, proxies and the developer's own settings, so nothing
leaves loopback and no local configuration leaks in.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from openai_fake import FakeOpenAI, Replies

from hugginggraph.settings import environment_variables

REPO = Path(__file__).resolve().parents[1]
GRAPH = "hugginggraph"
STARTUP_S = 120
OFFLINE = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "HF_HUB_OFFLINE": "1",
    "LOG_COLOR": "false",
}
PROXIES = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}
DROPPED = {
    *("LANGSMITH_API_KEY", "LANGCHAIN_API_KEY", "LANGSMITH_ENDPOINT", "FORCE_COLOR"),
    *PROXIES,
    *environment_variables(),
}
"""Keys that would reach LangSmith, proxies that would carry loopback calls, and the developer's own settings."""


@dataclass
class Server:
    url: str
    log: Path
    controller: FakeOpenAI

    def log_tail(self, since: int = 0) -> str:
        return self.log.read_text(errors="replace")[since:][-6000:]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until_ready(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"langgraph dev exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"langgraph dev was not ready after {STARTUP_S} s:\n{log.read_text(errors='replace')}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """The whole process group: `langgraph dev` runs the API server in children of its own."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
            process.wait(timeout=grace)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def langgraph_dev(
    root: Path, replies: Replies, jobs: int = 1, settings: Mapping[str, str] | None = None
) -> Iterator[Server]:
    """`langgraph dev` with its home in `root / "home"` (put model folders in its `models`), the controller
    answering with `replies`, and its log in `root / "server.log"`; stopped, with all its children, on exit.
    `jobs` is how many runs it carries on at once: `langgraph dev` queues the rest, and runs one at a time unless
    told otherwise (`--n-jobs-per-worker`, whose help says 10 while langgraph-api's dev entry point sets 1).
    `settings`: environment variables of the server's own settings (`HUGGINGGRAPH_...`), since the developer's
    are not passed on."""
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in DROPPED}
    env.update(
        OFFLINE,
        HUGGINGGRAPH_HOME=str(root / "home"),
        HUGGINGGRAPH_CONFIG=str(root / "no-config.toml"),
        HF_HOME=str(root / "hf"),
        HUGGINGGRAPH_MODEL="openai:fake-model",
        OPENAI_API_KEY="sk-test",
        HUGGINGGRAPH_RANDOM_MODELS="1",  # tiny models a test puts in the home's `models` are offered (and labelled)
    )
    env.update(settings or {})
    log = root / "server.log"
    with FakeOpenAI(replies) as controller, log.open("wb") as sink:
        env["OPENAI_BASE_URL"] = controller.base_url
        command = [
            *(sys.executable, "-m", "langgraph_cli", "dev"),
            *("--config", str(REPO / "langgraph.json"), "--port", str(port), "--no-browser", "--no-reload"),
            *("--n-jobs-per-worker", str(jobs)),
        ]
        process = subprocess.Popen(
            command, cwd=root, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_ready(process, url, log)
            yield Server(url, log, controller)
        finally:
            stop(process)
