"""`SubprocessRunner`: calls run in long-lived child processes that keep the inner runner and its models; outputs,
errors and deaths come back as the executor expects, a call that is cut off leaves no process behind, a dead worker is
replaced for the next call, and no worker outlives its runner or its parent (each worker starts an interpreter, a
second or more, so those tests are slow); `Settings.isolate_models` puts the local runners behind it."""

import asyncio
import gc
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from test_worker_process import CARD, FAULTS, Tally, answered

from hugginggraph.context_assembly import build_context, default_runners
from hugginggraph.settings import Settings, load_settings
from hugginggraph.testing import Fault, FaultyRunner
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner
from hugginggraph.tools.runners.worker_process import ModelCallFailed, ModelProcessDied


@pytest.fixture
def runners() -> Iterator[Callable[..., SubprocessRunner]]:
    """Makes runners of `Tally` (`max_idle` and the like as keywords), closed when the test ends."""
    made: list[SubprocessRunner] = []

    def make(**options: Any) -> SubprocessRunner:
        made.append(SubprocessRunner(partial(Tally, FAULTS), **options))
        return made[-1]

    yield make
    for runner in made:
        runner.close()


def run(runner: SubprocessRunner, task_id: int, run_dir: Path, model: str = CARD.id):
    card = CARD.model_copy(update={"id": model})
    return runner.run(card, card.task, {"text": "hi"}, ArtifactStore(run_dir, task_id))


def call(fault: Fault | None, run_dir: Path):
    return run(SubprocessRunner(partial(FaultyRunner, {0: fault} if fault else {})), 0, run_dir)


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


@pytest.mark.slow
async def test_a_worker_keeps_its_runner_for_calls_from_any_thread_and_event_loop(runners, tmp_path: Path):
    runner = runners()
    # The first call comes from a thread that ends right after it: the worker must not die with that thread.
    first: list[RunnerOutput] = []
    thread = threading.Thread(target=lambda: first.append(asyncio.run(run(runner, 0, tmp_path))))
    thread.start()
    thread.join()
    pid, _ = answered(first[0])
    with pytest.raises(ModelCallFailed, match="injected failure in task 1"):
        await run(runner, 1, tmp_path)  # a call that raised costs the worker nothing
    assert answered(await run(runner, 0, tmp_path)) == (pid, 3)
    assert [child.pid for child in multiprocessing.active_children()] == [pid]


@pytest.mark.slow
async def test_a_hung_call_holds_up_no_call_of_another_model(runners, tmp_path: Path):
    runner = runners()
    hung = asyncio.ensure_future(run(runner, 3, tmp_path))
    while not multiprocessing.active_children():
        await asyncio.sleep(0.01)
    pid, _ = answered(await asyncio.wait_for(run(runner, 0, tmp_path, model="other"), 30))  # a worker of its own
    hung.cancel()
    with pytest.raises(asyncio.CancelledError):
        await hung
    assert [child.pid for child in multiprocessing.active_children()] == [pid]


@pytest.mark.slow
async def test_calls_of_one_model_past_its_limit_wait_for_a_turn_and_share_its_worker(runners, tmp_path: Path):
    runner = runners()
    outputs = await asyncio.gather(*(run(runner, 0, tmp_path) for _ in range(3)))
    assert len({answered(output)[0] for output in outputs}) == 1  # one worker, one load, three calls in turn
    hung = asyncio.ensure_future(run(runner, 3, tmp_path))
    while not runner._running.get(CARD.id):
        await asyncio.sleep(0.01)
    waiting = asyncio.ensure_future(run(runner, 0, tmp_path))
    await asyncio.sleep(0.5)
    assert not waiting.done()  # behind the hung call of its model
    hung.cancel()  # as its timeout would: its worker is killed, and the turn passes on
    answered(await asyncio.wait_for(waiting, 30))
    two_at_once = runners(calls_per_model=2)
    outputs = await asyncio.gather(*(run(two_at_once, 0, tmp_path) for _ in range(2)))
    assert len({answered(output)[0] for output in outputs}) == 2


@pytest.mark.slow
async def test_a_worker_that_died_or_timed_out_is_replaced_for_the_next_call(runners, tmp_path: Path):
    runner = runners()
    pids = [answered(await run(runner, 0, tmp_path))[0]]
    with pytest.raises(ModelProcessDied, match=r"exit code 3"):
        await run(runner, 2, tmp_path)
    pids.append(answered(await run(runner, 0, tmp_path))[0])
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(run(runner, 3, tmp_path), 1)
    pids.append(answered(await run(runner, 0, tmp_path))[0])
    os.kill(pids[-1], signal.SIGKILL)  # dies while idle, as under the out-of-memory killer
    while _alive(pids[-1]):
        await asyncio.sleep(0.01)
    pids.append(answered(await run(runner, 0, tmp_path))[0])  # not the dead one's ModelProcessDied
    assert len(set(pids)) == 4
    assert [child.pid for child in multiprocessing.active_children()] == pids[-1:]


@pytest.mark.slow
async def test_a_call_goes_to_the_idle_worker_that_ran_its_model(runners, tmp_path: Path):
    runner = runners()
    outputs = await asyncio.gather(run(runner, 0, tmp_path, model="a"), run(runner, 0, tmp_path, model="b"))
    pid_of = {model: answered(output)[0] for model, output in zip("ab", outputs, strict=True)}
    for model in "bab":
        assert answered(await run(runner, 0, tmp_path, model=model))[0] == pid_of[model]


@pytest.mark.slow
async def test_idle_workers_past_max_idle_stop_and_closing_stops_the_rest(runners, tmp_path: Path):
    runner = runners(max_idle=1)
    await asyncio.gather(run(runner, 0, tmp_path, model="a"), run(runner, 0, tmp_path, model="b"))  # two workers
    async with asyncio.timeout(10):  # the one too many ends on its own
        while len(multiprocessing.active_children()) > 1:
            await asyncio.sleep(0.05)
    runner.close()
    assert not multiprocessing.active_children()
    with pytest.raises(RuntimeError, match="closed"):
        await run(runner, 0, tmp_path)


@pytest.mark.slow
async def test_a_runner_garbage_collected_stops_its_workers(tmp_path: Path):
    runner = SubprocessRunner(partial(Tally, FAULTS))
    await run(runner, 0, tmp_path)
    assert multiprocessing.active_children()
    del runner
    gc.collect()
    assert not multiprocessing.active_children()


PARENT_CALLING_A_MODEL = """
import weakref

class Anything:
    pass

# A finalizer made before `multiprocessing` is imported, as a library may make one: weakref's exit handler then runs
# after multiprocessing's, which SIGTERMs daemon children, so the runner must not leave its workers to weakref's.
KEPT = Anything()
weakref.finalize(KEPT, int)

import asyncio, multiprocessing, sys, threading, time
from functools import partial
from pathlib import Path
from hugginggraph.testing import FaultyRunner
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner

class HoldsASemaphore(FaultyRunner):
    # Holds a named semaphore, as libraries do (tqdm's lock): a worker killed before its exit handlers run leaves
    # it to the resource tracker, which warns of it.
    async def run(self, card, task, inputs, artifacts):
        self.lock = multiprocessing.Lock()
        return await super().run(card, task, inputs, artifacts)

def report_worker():
    while not multiprocessing.active_children():
        time.sleep(0.05)
    print(multiprocessing.active_children()[0].pid, flush=True)

if __name__ == "__main__":
    run_dir, how = sys.argv[1:]
    if how == "hang":  # the call never ends: report its worker while it runs
        threading.Thread(target=report_worker, daemon=True).start()
    card = CatalogEntry(id="m", task="text-classification")
    runner = SubprocessRunner(partial(HoldsASemaphore, {0: "hang"} if how == "hang" else {}))
    asyncio.run(runner.run(card, card.task, {"text": "hi"}, ArtifactStore(Path(run_dir), 0)))
    report_worker()  # the call has answered; its worker waits, idle, for the next one
    if how == "idle":
        time.sleep(600)
"""


def parent_calling_a_model(run_dir: Path, how: str) -> list[str]:
    """The command of a program that calls a model through a `SubprocessRunner` and prints its worker's pid: "hang"
    while the call runs, "idle" after it and waits, "end" after it and ends without closing the runner."""
    script = run_dir / "parent.py"
    script.write_text(PARENT_CALLING_A_MODEL, encoding="utf-8")
    return [sys.executable, str(script), str(run_dir), how]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="the kernel's parent-death signal is Linux's")
@pytest.mark.parametrize("worker", ["hang", "idle"])
def test_a_child_dies_with_a_parent_killed_by_sigkill(tmp_path: Path, worker: str):
    parent = subprocess.Popen(parent_calling_a_model(tmp_path, worker), stdout=subprocess.PIPE, text=True)
    try:
        child_pid = int(parent.stdout.readline())  # type: ignore[union-attr]
    finally:
        parent.send_signal(signal.SIGKILL)  # no cleanup runs: only the kernel can end the child now
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child_pid), "the model's process outlived its killed parent"


@pytest.mark.slow
def test_a_program_that_ends_without_closing_its_runner_ends_its_worker_cleanly(tmp_path: Path):
    parent = subprocess.run(parent_calling_a_model(tmp_path, "end"), capture_output=True, text=True, timeout=120)
    assert parent.returncode == 0, parent.stderr
    assert not _alive(int(parent.stdout))
    assert "leaked" not in parent.stderr  # the resource tracker's warning: the worker was killed, not ended


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
    assert not any(isinstance(runner, SubprocessRunner) for runner in default_runners())


@pytest.mark.parametrize(
    ("setting", "resident", "isolated"),
    [(None, True, True), (None, False, False), (False, True, False), (True, False, True)],
)
def test_unset_isolation_is_on_where_the_process_stays(tmp_path: Path, setting, resident: bool, isolated: bool):
    settings = Settings(model="openai:gpt-4o-mini", api_key="sk-test", hub=False, isolate_models=setting)
    runners = build_context(settings, tmp_path, resident=resident).runners
    assert any(isinstance(runner, SubprocessRunner) for runner in runners) == isolated


def _name(runner: object) -> str:
    return type(runner).__name__
