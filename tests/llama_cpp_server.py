"""A real OpenAI-compatible server for tests: llama-cpp-python's own (`python -m llama_cpp.server`, its `server`
extra) serving the embedded controller's smaller GGUF on a free port of 127.0.0.1, under a model alias, formatted
by the GGUF's own chat template as the embedded controller formats it.

Where the server or the weights are missing, the test fails and says what to install, rather than skip: a test
that claims HuggingGraph works with OpenAI-compatible servers must not pass unseen without one. A server that dies
or does not answer in time fails the test too, with the end of its log.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import httpx
import pytest
from langgraph_server import free_port

from hugginggraph.tools.llama_cpp.gguf_weights import ControllerNotInstalled, gguf_path
from hugginggraph.tools.llama_cpp.local_llama import LLAMA_CPP_BUILD, LLAMA_CPP_REQUIREMENT, available_cores

CONTROLLER = "qwen2.5-coder-0.5b"
"""The smaller controller: it plans about twice as fast as the default, and these tests check the wiring, not plans."""
ALIAS = "qwen-local"
"""The model name the server answers to, as `openai:qwen-local` names it."""
N_CTX = 4096
"""The server's context window (its own default is 2,048). A plan's prompt with its retrieved demos takes about
1,300 tokens; a fix pass sends that prompt again with the first plan and its problems, which 2,048 may not hold."""
STARTUP_S = 120
"""Loading the 0.5B's 490 MB takes a few seconds; a slow disk or a busy machine gets the rest."""
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
"""What `python -m llama_cpp.server` imports: llama-cpp-python and its `server` extra."""
SERVER_REQUIREMENT = LLAMA_CPP_REQUIREMENT.replace("llama-cpp-python", "llama-cpp-python[server]")


@dataclass(frozen=True)
class LlamaCppServer:
    url: str
    """The server's root, `http://127.0.0.1:PORT`."""
    model: str
    """The alias it serves the GGUF under: `openai:{model}` names it."""
    gguf: Path
    log: Path
    """The server's stdout and stderr: llama.cpp's load report, uvicorn's access lines, timings per completion."""

    @property
    def base_url(self) -> str:
        """What a client takes as `base_url` (`--base-url`): the API's root."""
        return f"{self.url}/v1"

    def log_size(self) -> int:
        return self.log.stat().st_size

    def log_since(self, start: int) -> str:
        with self.log.open("rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace")


@contextmanager
def llama_cpp_server(root: Path, controller: str = CONTROLLER, n_ctx: int = N_CTX) -> Iterator[LlamaCppServer]:
    """`python -m llama_cpp.server` on the weights of `controller`, its log in `root / "llama_cpp_server.log"`;
    yields once `GET /v1/models` answers, and stops the server on exit."""
    missing = [module for module in SERVER_MODULES if find_spec(module) is None]
    if missing:
        pytest.fail(
            f"llama-cpp-python's server cannot run here ({', '.join(missing)} not installed): "
            f"{LLAMA_CPP_BUILD} pip install '{SERVER_REQUIREMENT}'"
        )
    try:
        gguf = gguf_path(controller)
    except ControllerNotInstalled as error:
        pytest.fail(str(error))
    port = free_port()
    cores = str(available_cores())  # the server's own default decodes on one thread
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", ALIAS),
        *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)),
        *("--n_threads", cores, "--n_threads_batch", cores),
    ]
    log = root / "llama_cpp_server.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(command, cwd=root, stdout=sink, stderr=subprocess.STDOUT)
        try:
            server = LlamaCppServer(f"http://127.0.0.1:{port}", ALIAS, gguf, log)
            _wait_until_ready(process, server)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def _wait_until_ready(process: subprocess.Popen[bytes], server: LlamaCppServer) -> None:
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {process.returncode}:\n{_tail(server.log)}")
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2, trust_env=False).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.25)
    pytest.fail(f"llama_cpp.server did not answer GET /v1/models within {STARTUP_S} s:\n{_tail(server.log)}")


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-6000:]
