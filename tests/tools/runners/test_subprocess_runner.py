"""`SubprocessRunner`: the call runs in a child process; its output, its errors and its death come back as the
executor expects, and a call that is cut off leaves no process behind (each call starts an interpreter, ~1 s, so
those tests are slow); `Settings.isolate_models` puts the local runners behind it."""

import asyncio
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from hugginggraph.defaults import default_runners
from hugginggraph.settings import load_settings
from hugginggraph.testing import Fault, FaultyRunner
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.subprocess_runner import ModelCallFailed, ModelProcessDied, SubprocessRunner

CARD = ModelCard(id="m", task="text-classification")


def call(fault: Fault | None, run_dir: Path):
    runner = SubprocessRunner(partial(FaultyRunner, {0: fault} if fault else {}))
    return runner.run(CARD, CARD.task, {"text": "hi"}, ArtifactStore(run_dir, 0))


@pytest.mark.slow
async def test_the_output_comes_back_from_the_child(tmp_path: Path):
    output = await call(None, tmp_path)
    assert output.text == "m#0(hi)"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "error", "message"),
    [
        ("raise", ModelCallFailed, "RuntimeError: injected failure in task 0"),
        ("wrong_type", ModelCallFailed, "TypeError: the runner returned str, not a RunnerOutput"),
        ("unloadable", ModelLoadError, "could not load m: injected"),  # so the executor moves to the next model
        ("exit", ModelProcessDied, r"died before answering \(exit code 3\)"),
        ("sigkill", ModelProcessDied, r"died before answering \(killed by signal 9, Killed\)"),
    ],
)
async def test_errors_and_deaths_in_the_child_are_clear_failures(tmp_path: Path, fault, error, message):
    with pytest.raises(error, match=message):
        await call(fault, tmp_path)


@pytest.mark.slow
async def test_a_call_past_its_timeout_is_killed_with_its_process(tmp_path: Path):
    running = asyncio.ensure_future(asyncio.wait_for(call("hang", tmp_path), 30))
    while not multiprocessing.active_children():
        await asyncio.sleep(0.01)
    (child,) = multiprocessing.active_children()
    running.cancel()  # what asyncio.wait_for does at the task's timeout, and the run's deadline
    with pytest.raises(asyncio.CancelledError):
        await running
    assert child.exitcode is not None and child.exitcode < 0  # stopped by a signal, and reaped
    with pytest.raises(ProcessLookupError):
        os.kill(child.pid, 0)
    assert not multiprocessing.active_children()


PARENT_CALLING_A_HANGING_MODEL = """
import asyncio, multiprocessing, sys, threading, time
from functools import partial
from pathlib import Path
from hugginggraph.testing import FaultyRunner
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner

def report_child():
    while not multiprocessing.active_children():
        time.sleep(0.05)
    print(multiprocessing.active_children()[0].pid, flush=True)

if __name__ == "__main__":
    threading.Thread(target=report_child, daemon=True).start()
    card = ModelCard(id="m", task="text-classification")
    runner = SubprocessRunner(partial(FaultyRunner, {0: "hang"}))
    asyncio.run(runner.run(card, card.task, {"text": "hi"}, ArtifactStore(Path(sys.argv[1]), 0)))
"""


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's parent-death signal is Linux's")
def test_a_child_dies_with_a_parent_killed_by_sigkill(tmp_path: Path):
    script = tmp_path / "parent.py"
    script.write_text(PARENT_CALLING_A_HANGING_MODEL, encoding="utf-8")
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        child_pid = int(parent.stdout.readline())  # type: ignore[union-attr]
    finally:
        parent.send_signal(signal.SIGKILL)  # no cleanup runs: only the kernel can end the child now
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child_pid), "the model's process outlived its killed parent"


def _alive(pid: int) -> bool:
    """Running, not merely a zombie waiting for the init process to reap it."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_isolate_models_setting_runs_local_models_in_child_processes(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("HUGGINGGRAPH_ISOLATE_MODELS", "true")
    settings = load_settings()
    assert settings.isolate_models
    isolated = default_runners(isolate=settings.isolate_models)
    # In-process local runners move into child processes; Piper is its own program already, endpoints are remote.
    own_process = {"PiperRunner", "InferenceEndpointRunner"}
    expected = [name if name in own_process else "SubprocessRunner" for name in map(_name, default_runners())]
    assert list(map(_name, isolated)) == expected and expected.count("SubprocessRunner") >= 3
    assert not any(isinstance(runner, SubprocessRunner) for runner in default_runners())  # off by default


def _name(runner: object) -> str:
    return type(runner).__name__
