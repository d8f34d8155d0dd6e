"""A run SIGKILLed in the middle of execution resumes on its thread, re-runs only unfinished tasks, and ends
with the same results as a run that was never interrupted."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

WORKER = Path(__file__).with_name("crash_worker.py")

pytestmark = pytest.mark.slow


def worker(mode: str, workdir: Path, thread_id: str, slow_seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), mode, str(workdir), thread_id, str(slow_seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def calls(workdir: Path) -> list[str]:
    log = workdir / "calls.log"
    return log.read_text().splitlines() if log.exists() else []


def saved_task_results(workdir: Path) -> int:
    """How many plan tasks have their result in the checkpoint (LangGraph `@task` returns under `execute`)."""
    with sqlite3.connect(workdir / "checkpoints.sqlite") as db:
        query = "SELECT COUNT(*) FROM writes WHERE channel = '__return__' AND task_path LIKE '%execute%'"
        return int(db.execute(query).fetchone()[0])


def wait_for(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the worker")
        time.sleep(0.05)


def finished(process: subprocess.Popen) -> None:
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 0, output.decode()


def test_sigkill_during_execution_resumes_without_rerunning_finished_tasks(tmp_path: Path):
    interrupted = tmp_path / "interrupted"
    reference = tmp_path / "reference"
    interrupted.mkdir()
    reference.mkdir()

    process = worker("run", interrupted, "story", slow_seconds=60)
    wait_for(lambda: "start m-summarization" in calls(interrupted))
    wait_for(lambda: saved_task_results(interrupted) == 2)  # the two finished tasks are checkpointed
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    before_resume = calls(interrupted)
    assert "finish m-text-generation" in before_resume and "finish m-text-classification" in before_resume
    assert "finish m-summarization" not in before_resume

    finished(worker("resume", interrupted, "story", slow_seconds=0.1))
    after_resume = calls(interrupted)[len(before_resume) :]
    assert after_resume == [
        "start m-summarization",
        "finish m-summarization",
        "start m-translation",
        "finish m-translation",
    ]

    finished(worker("run", reference, "story", slow_seconds=0.1))
    resumed = json.loads((interrupted / "story.json").read_text())
    uninterrupted = json.loads((reference / "story.json").read_text())
    assert resumed == uninterrupted
    assert {r["status"] for r in resumed["results"].values()} == {"ok"}
