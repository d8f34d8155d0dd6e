"""`WorkerProcess`: one child answers call after call with the runner it built once; a call that raised leaves it
ready for the next, a death fails the call in flight, and Ctrl-C is left to its parent. Each worker starts an
interpreter (a second or more), so these tests are slow."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

from hugginggraph.testing import Fault, FaultyRunner
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.worker_process import ModelCallFailed, ModelProcessDied, WorkerProcess

pytestmark = pytest.mark.slow

CARD = CatalogEntry(id="m", task="text-classification")
FAULTS: dict[int, Fault] = {1: "raise", 2: "exit", 3: "hang"}
"""The faults `Tally` injects, by task id; task 0 answers."""


class Tally(FaultyRunner):
    """`FaultyRunner`'s faults; a call that gets through answers `<pid> <calls>`: the process that ran it, and how
    many calls this runner has had, so that a test sees which worker ran a call and that its runner lived on."""

    def __init__(self, faults: dict[int, Fault]) -> None:
        super().__init__(faults)
        self.calls = 0

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        self.calls += 1
        await super().run(card, task, inputs, artifacts)
        return RunnerOutput(text=f"{os.getpid()} {self.calls}")


def answered(output: RunnerOutput) -> tuple[int, int]:
    """`Tally`'s answer: the worker's pid and its runner's count of calls."""
    pid, calls = output.text.split()
    return int(pid), int(calls)


@pytest.fixture
def worker() -> Iterator[WorkerProcess]:
    worker = WorkerProcess(partial(Tally, FAULTS), grace_s=0.5)
    yield worker
    worker.close()
    worker.wait_or_kill(time.monotonic() + 5)


def call(worker: WorkerProcess, task_id: int, run_dir: Path):
    return worker.call(CARD, CARD.task, {"text": "hi"}, ArtifactStore(run_dir, task_id))


async def test_one_runner_answers_call_after_call_and_survives_a_call_that_raised(worker, tmp_path: Path):
    pid, calls = answered(await call(worker, 0, tmp_path))
    with pytest.raises(ModelCallFailed, match="RuntimeError: injected failure in task 1"):
        await call(worker, 1, tmp_path)
    assert answered(await call(worker, 0, tmp_path)) == (pid, calls + 2)
    assert worker.alive and calls == 1


async def test_ctrl_c_is_left_to_the_parent(worker, tmp_path: Path):
    pid, _ = answered(await call(worker, 0, tmp_path))
    os.kill(pid, signal.SIGINT)  # as a terminal's Ctrl-C reaches every process of the foreground group
    await asyncio.sleep(0.2)
    assert answered(await call(worker, 0, tmp_path)) == (pid, 2)


@pytest.mark.parametrize(
    ("death", "task_id", "how"),
    [("in its call", 2, r"exit code 3"), ("while idle", 0, r"killed by signal 9, Killed")],
)
async def test_a_worker_that_dies_fails_its_call_and_is_left_dead(worker, tmp_path: Path, death, task_id, how):
    pid, _ = answered(await call(worker, 0, tmp_path))
    if death == "while idle":  # the out-of-memory killer, say: the next call finds nobody to answer it
        os.kill(pid, signal.SIGKILL)
    with pytest.raises(ModelProcessDied, match=rf"died before answering \({how}\)"):
        await call(worker, task_id, tmp_path)
    assert not worker.alive
