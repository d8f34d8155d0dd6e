"""A run SIGKILLed at any point resumes to the result it would have had: 30 kills at seeded-random points spread
over planning, selection, execution and the response, each resumed by another process on the SQLite checkpoint.

Each run ends with the plan, results and answer of one uninterrupted reference run (the scripted controller's
answer quotes every result, so equal answers mean equal results), and no model call whose result was saved before
the kill runs again: checkpointed, or, when the kill came before LangGraph's background save of it, recorded in
the run's call journal (`repeated_calls`, 0). The summary also counts calls run again at all after finishing
(`rerun`), usually 0 but not asserted: the journal is written in a thread (a server such as `langgraph dev` forbids
disk calls on the event loop), and a kill can land in the moment between a call's end and that write, when the
result exists nowhere but in the dying process's memory. Runs are saved with "sync" durability, so even a kill
inside the planner's first call finds the request saved: every run is resumed, and none has to be sent again
(`restarted`, 0).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from crash_worker import PLAN
from test_crash_recovery import calls, finished, recorded_task_ids, saved_checkpoint, saved_task_ids, worker

pytestmark = pytest.mark.slow

SEED = 20261130
RUNS = 30
STAGES = {"plan": "planning", "select": "selection", "execute": "execution", "respond": "response"}
HOOKS = {"plan": 1, "select": len(PLAN), "execute": len(PLAN), "respond": 1}
"""How often each stage reaches its hook in one run: one controller call per task to select, one model per task."""
SUMMARIZATION_S = 0.1
MODEL_OF_TASK = {task["id"]: f"m-{task['task']}" for task in PLAN}
MODEL_DELAY_S = 0.3
"""The longest delay after a model call starts: about the execution stage's length (crash_worker.DELAYS)."""
LLM_DELAY_S = 0.05
"""The longest delay after a controller call: enough to reach the next stage now and then."""
WORKERS = 2
"""Runs killed and resumed at once: each is mostly a process starting, so two keep two cores busy."""


@dataclass(frozen=True)
class KillPoint:
    stage: str
    index: int
    delay: float
    """Seconds from the hook to the kill: 0 kills inside the hook; more lets the run go on to a random point."""

    @property
    def spec(self) -> str:
        return f"{self.stage}:{self.index}:{self.delay:.3f}"


def kill_points(seed: int = SEED, runs: int = RUNS) -> list[KillPoint]:
    """`runs` points, at least 5 per stage. Half the kills are exact (inside a controller or model call); the
    others come after a random delay, so they land between checkpoints too."""
    rng = random.Random(seed)
    stages = [stage for stage in STAGES for _ in range(5)]
    stages += rng.choices(list(STAGES), k=runs - len(stages))
    points = []
    for stage in stages:
        delay = 0.0 if rng.random() < 0.5 else rng.uniform(0, MODEL_DELAY_S if stage == "execute" else LLM_DELAY_S)
        points.append(KillPoint(stage, rng.randrange(HOOKS[stage]), round(delay, 3)))
    return points


@dataclass
class Outcome:
    point: KillPoint
    equal: bool
    repeated: list[str]
    """Models that ran again although their result was saved before the kill (checkpointed or recorded)."""
    rerun: int
    """Calls that finished before the kill and ran again all the same: saved or not (see the module docstring)."""
    restarted: bool
    """Killed before its first checkpoint, so run again from the request rather than resumed."""
    problem: str = ""


def kill_and_resume(workdir: Path, point: KillPoint, reference: dict) -> Outcome:
    """Kill a run at `point`, then finish it in another process: resumed from its checkpoint, or run again should
    the kill have come before its first checkpoint was written (nothing to resume then, not even the request)."""
    workdir.mkdir()
    process = worker("run", workdir, "crash", SUMMARIZATION_S, kill=point.spec)
    output, _ = process.communicate(timeout=120)
    if process.returncode != -9:
        problem = f"the worker was not killed (exit {process.returncode}): {output.decode()[-2000:]}"
        return Outcome(point, False, [], 0, False, problem)
    before, saved = calls(workdir), saved_checkpoint(workdir, "crash", None)
    saved_models = {MODEL_OF_TASK[task_id] for task_id in saved_task_ids(saved) | recorded_task_ids(workdir, "crash")}
    finished(worker("resume" if saved else "run", workdir, "crash", SUMMARIZATION_S))
    after = calls(workdir)[len(before) :]
    repeated = sorted(model for model in saved_models if f"start {model}" in after)
    rerun = sum(f"finish {m}" in before and f"start {m}" in after for m in MODEL_OF_TASK.values())
    unfinished = [model for model in MODEL_OF_TASK.values() if f"finish {model}" not in before]
    unfinished_once = all(after.count(f"finish {model}") == 1 for model in unfinished)
    resumed = json.loads((workdir / "crash.json").read_text())
    problem = "" if unfinished_once else f"a call unfinished at the kill did not run exactly once after it: {after}"
    return Outcome(point, resumed == reference, repeated, rerun, saved is None, problem)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The uninterrupted run every resumed one must equal."""
    workdir = tmp_path_factory.mktemp("reference")
    finished(worker("run", workdir, "crash", SUMMARIZATION_S))
    return json.loads((workdir / "crash.json").read_text())


def test_kill_points_cover_every_stage_at_least_five_times():
    points = kill_points()
    assert len(points) == RUNS and min(Counter(p.stage for p in points)[s] for s in STAGES) >= 5
    assert points == kill_points()  # seeded: every run of the suite kills at the same points


def test_a_run_killed_anywhere_resumes_to_the_uninterrupted_result(tmp_path: Path, reference: dict):
    points = kill_points()
    with ThreadPoolExecutor(WORKERS) as pool:
        outcomes = list(pool.map(lambda n: kill_and_resume(tmp_path / f"run-{n}", points[n], reference), range(RUNS)))
    per_stage = Counter(outcome.point.stage for outcome in outcomes)
    repeated = sum(len(outcome.repeated) for outcome in outcomes)
    print(
        f"crash_points runs={len(outcomes)} "
        + " ".join(f"{name}={per_stage[stage]}" for stage, name in STAGES.items())
        + f" equal={sum(o.equal for o in outcomes)} repeated_calls={repeated}"
        + f" rerun={sum(o.rerun for o in outcomes)} restarted={sum(o.restarted for o in outcomes)}"
    )
    failed = [
        outcome for outcome in outcomes if not outcome.equal or outcome.repeated or outcome.restarted or outcome.problem
    ]
    assert not failed, "\n".join(map(str, failed))
