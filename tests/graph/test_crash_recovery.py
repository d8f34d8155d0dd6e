"""A run SIGKILLed in the middle of execution resumes on its thread, re-runs only unfinished tasks, and ends
with the same results as a run that was never interrupted.

`check_sigkill_and_resume` is the whole scenario for any checkpointer; test_postgres.py runs it on PostgreSQL, and
test_crash_points.py kills the same worker at 30 other points with the helpers below.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from langgraph.checkpoint.base import CheckpointTuple

from hugginggraph import open_checkpointer
from hugginggraph.graph.checkpoint import checkpoint_serializer
from hugginggraph.tools.call_journal import read_record

WORKER = Path(__file__).with_name("crash_worker.py")

pytestmark = pytest.mark.slow


def worker(
    mode: str,
    workdir: Path,
    thread_id: str,
    slow_seconds: float,
    checkpoint_url: str | None = None,
    kill: str | None = None,
) -> subprocess.Popen:
    """crash_worker.py in a process of its own; `kill` ("STAGE:INDEX:DELAY") makes it SIGKILL itself there."""
    url = [checkpoint_url] if checkpoint_url else []
    kill_at = ["--kill", kill] if kill else []
    return subprocess.Popen(
        [sys.executable, str(WORKER), mode, str(workdir), thread_id, str(slow_seconds), *url, *kill_at],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def calls(workdir: Path) -> list[str]:
    log = workdir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def saved_checkpoint(workdir: Path, thread_id: str, checkpoint_url: str | None) -> CheckpointTuple | None:
    """The run's latest checkpoint, read through the saver, which works for every backend."""

    async def read() -> CheckpointTuple | None:
        async with open_checkpointer(checkpoint_url, workdir / "checkpoints.sqlite") as saver:
            return await saver.aget_tuple({"configurable": {"thread_id": thread_id}})

    return asyncio.run(read())


def saved_task_ids(saved: CheckpointTuple | None) -> set[int]:
    """The plan tasks whose result a checkpoint holds: in the state once the execute node has ended, else as pending
    writes, since each LangGraph `@task` (only the execute node has them) saves its return value as a pending
    write on the `__return__` channel as soon as it ends."""
    if saved is None:
        return set()
    returned = {value.task_id for _, channel, value in saved.pending_writes or [] if channel == "__return__"}
    return returned | set(saved.checkpoint["channel_values"].get("results", {}))


def recorded_task_ids(workdir: Path, thread_id: str) -> set[int]:
    """The plan tasks whose result the run's call journal holds: the execute node records each successful call there
    before its task ends, in `calls/` of the turn's artifacts folder (nodes/execution.py)."""
    records = (workdir / "artifacts" / thread_id / "turn-1" / "calls").glob("*/*.call")
    return {read_record(path, checkpoint_serializer()).task_id for path in records}


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the worker")
        time.sleep(0.05)


def finished(process: subprocess.Popen) -> None:
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output.decode()


def check_sigkill_and_resume(tmp_path: Path, checkpoint_url: str | None = None) -> None:
    """Kill a run once two tasks are saved and the third is running, resume it, and check that only the unfinished
    tasks ran again and that the results equal an uninterrupted run's. Both runs save to `checkpoint_url` (default:
    SQLite in their own folder) on threads named after their folders, `interrupted` and `reference`."""
    interrupted = tmp_path / "interrupted"
    reference = tmp_path / "reference"
    interrupted.mkdir()
    reference.mkdir()

    process = worker("run", interrupted, "interrupted", 60, checkpoint_url)
    wait_for(lambda: "start m-summarization" in calls(interrupted))
    # the two finished tasks are checkpointed
    wait_for(lambda: len(saved_task_ids(saved_checkpoint(interrupted, "interrupted", checkpoint_url))) == 2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before_resume = calls(interrupted)
    assert "finish m-text-generation" in before_resume and "finish m-text-classification" in before_resume
    assert "finish m-summarization" not in before_resume

    finished(worker("resume", interrupted, "interrupted", 0.1, checkpoint_url))
    after_resume = calls(interrupted)[len(before_resume) :]
    assert after_resume == [
        "start m-summarization",
        "finish m-summarization",
        "start m-translation",
        "finish m-translation",
    ]

    finished(worker("run", reference, "reference", 0.1, checkpoint_url))
    resumed = json.loads((interrupted / "interrupted.json").read_text())
    uninterrupted = json.loads((reference / "reference.json").read_text())
    assert resumed == uninterrupted
    assert {r["status"] for r in resumed["results"].values()} == {"ok"}


def test_sigkill_during_execution_resumes_without_rerunning_finished_tasks(tmp_path: Path):
    check_sigkill_and_resume(tmp_path)
