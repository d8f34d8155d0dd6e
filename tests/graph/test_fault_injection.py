"""Fault injection: 200 seeded random plans (2 to 8 tasks, random dependencies) through the real graph, whose models
raise, fail to load, hang past the task timeout, return the wrong type, or die mid-call in a child process
(`os._exit`, SIGKILL). Every run must end, with one result per task that says truthfully what happened, and an
answer that reports it so: the answer LLM fails too, so the answer is the plain summary of the results.

Run with `-s` to see the tally of faults and outcomes (quoted in SECURITY.md). Most runs keep every model in this
process, with a 0.2 s task timeout; every fourth run also has tasks whose model runs in a child process that may die,
and starting a child takes about a second, which is where most of the time goes.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from hugginggraph import HuggingGraphContext, Limits
from hugginggraph.graph.context import PlanningAids
from hugginggraph.graph.state import TaskResult, TaskStatus
from hugginggraph.testing import Fault, FaultyRunner, ScriptedChatModel
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner

pytestmark = pytest.mark.slow

RUNS = 200
ISOLATED_EVERY = 4
"""Every fourth run also has tasks whose model runs in a child process (a second or so per call)."""
TASK_TIMEOUT_S = 0.2
CHILD_TASK_TIMEOUT_S = 30.0
"""Runs with children wait this long, since a child's start counts against its call; they inject no hang."""
RUN_TIMEOUT_S = 60.0
"""No run may take longer: a run past it is a hang of the graph itself, and fails the test."""

LOCAL, CHILD = "local", "child"
TASK_OF = {LOCAL: "text-classification", CHILD: "summarization"}
"""Model id → its task type: one model per type, so selection has a single candidate and asks no LLM."""

LOCAL_FAULTS: Sequence[Fault | None] = (None, None, None, "raise", "unloadable", "hang", "wrong_type")
CHILD_FAULTS: Sequence[Fault | None] = (None, "exit", "sigkill", "exit", "sigkill")

EXPECTED_ERROR: dict[Fault, str] = {
    "raise": "RuntimeError: injected failure in task",
    "unloadable": "could not load local: injected",
    "hang": f"timed out after {TASK_TIMEOUT_S:g} s",
    "wrong_type": "TypeError: the runner returned str, not a RunnerOutput",
    "exit": "ModelProcessDied: the model's process died before answering (exit code 3)",
    "sigkill": "ModelProcessDied: the model's process died before answering (killed by signal 9",
}
"""What a failed task's error must say for each fault: the cause, not a generic failure."""

REPORTED = {"I could not ": "failed", "I did not ": "skipped"}
"""How the answer's report opens the line of a task that failed or was skipped; any other opening is a success."""


@dataclass
class Scenario:
    """One generated run: a valid plan in topological order and the fault each task's model injects."""

    seed: int
    plan: list[dict[str, Any]] = field(default_factory=list)
    """In HuggingGPT's format, as the planner LLM writes it: `dep` is `[-1]` for a task with no dependency."""
    deps: dict[int, list[int]] = field(default_factory=dict)
    faults: dict[int, Fault] = field(default_factory=dict)

    @property
    def isolated(self) -> bool:
        return self.seed % ISOLATED_EVERY == 0


def generate(seed: int) -> Scenario:
    rng = random.Random(seed)
    scenario = Scenario(seed)
    for task_id in range(rng.randint(2, 8)):
        deps = [earlier for earlier in range(task_id) if rng.random() < 0.3]
        model = CHILD if scenario.isolated and rng.random() < 0.4 else LOCAL
        faults = CHILD_FAULTS if model == CHILD else [f for f in LOCAL_FAULTS if not scenario.isolated or f != "hang"]
        text = " ".join(f"<GENERATED>-{dep}" for dep in deps) or f"input {task_id}"
        scenario.plan.append({"task": TASK_OF[model], "id": task_id, "dep": deps or [-1], "args": {"text": text}})
        scenario.deps[task_id] = deps
        if fault := rng.choice(faults):
            scenario.faults[task_id] = fault
    return scenario


def expected_statuses(scenario: Scenario) -> dict[int, TaskStatus]:
    """A task whose dependencies all succeeded ends ok unless its own model is faulty; any other is skipped."""
    statuses: dict[int, TaskStatus] = {}
    for task_id, deps in scenario.deps.items():
        if any(statuses[dep] != "ok" for dep in deps):
            statuses[task_id] = "skipped"
        else:
            statuses[task_id] = "failed" if task_id in scenario.faults else "ok"
    return statuses


def failing_answer(messages: Sequence[BaseMessage]) -> str:
    raise RuntimeError("the answer LLM is down (injected)")


def context_for(scenario: Scenario, tmp_path: Path) -> HuggingGraphContext:
    timeout = CHILD_TASK_TIMEOUT_S if scenario.isolated else TASK_TIMEOUT_S
    return HuggingGraphContext(
        llm=ScriptedChatModel(plan=scenario.plan, respond=failing_answer),
        catalog=InMemoryCatalog([CatalogEntry(id=model, task=task) for model, task in TASK_OF.items()]),
        runners=[
            SubprocessRunner(partial(FaultyRunner, scenario.faults, [CHILD])),
            FaultyRunner(scenario.faults, [LOCAL]),
        ],
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        limits=Limits(task_timeout_s=timeout, attempts_per_model=1),
        planning=PlanningAids(demos="static"),
    )


def check_run(scenario: Scenario, out: dict[str, Any]) -> dict[int, TaskResult]:
    """Every task has one result, with the status and reason its faults call for, and the answer says the same."""
    where = f"seed {scenario.seed}"
    results: dict[int, TaskResult] = out["results"]
    assert out["plan_repairs"] == [], where
    assert sorted(results) == [item["id"] for item in scenario.plan], where
    statuses = {task_id: result.status for task_id, result in results.items()}
    assert statuses == expected_statuses(scenario), where
    for task_id, result in results.items():
        if result.status == "ok":
            assert result.text and f"#{task_id}(" in result.text, where
        elif result.status == "failed":
            assert EXPECTED_ERROR[scenario.faults[task_id]] in (result.error or ""), (where, result.error)
        else:
            for dep in scenario.deps[task_id]:
                if statuses[dep] != "ok":
                    assert f"task {dep} ({results[dep].task}) {statuses[dep]}" in (result.error or ""), where
    answer = out["answer"]
    # The controller is asked for a lead only when every task succeeded; it is down, so the answer says so.
    asked = set(statuses.values()) == {"ok"}
    assert ("RuntimeError: the answer LLM is down (injected)" in answer) == asked, where
    lines = [line.removeprefix("- ") for line in answer.splitlines() if line.startswith("- ")]
    reported = [next((s for opening, s in REPORTED.items() if line.startswith(opening)), "ok") for line in lines]
    assert reported == [statuses[item["id"]] for item in scenario.plan], where  # one line per task, in plan order
    return results


async def test_random_plans_with_injected_faults_end_truthfully(run_graph, tmp_path: Path):
    started = time.perf_counter()
    faults: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    child_calls = 0
    for seed in range(RUNS):
        scenario = generate(seed)
        async with asyncio.timeout(RUN_TIMEOUT_S):
            out = await run_graph(context_for(scenario, tmp_path), thread_id=f"run-{seed}")
        results = check_run(scenario, out)
        outcomes.update(result.status for result in results.values())
        ran = [task_id for task_id, result in results.items() if result.status != "skipped"]
        faults.update(scenario.faults[task_id] for task_id in ran if task_id in scenario.faults)
        child_calls += sum(scenario.plan[task_id]["task"] == TASK_OF[CHILD] for task_id in ran)
    died = faults["exit"] + faults["sigkill"]
    print(
        f"\nruns={RUNS} tasks={outcomes.total()} ok={outcomes['ok']} failed={outcomes['failed']} "
        f"skipped={outcomes['skipped']} raise={faults['raise']} unloadable={faults['unloadable']} "
        f"hang={faults['hang']} wrong_type={faults['wrong_type']} died={died} (exit={faults['exit']} "
        f"sigkill={faults['sigkill']}) child_calls={child_calls} "
        f"seconds={time.perf_counter() - started:.1f}"
    )
    assert died >= 40 and min(faults[kind] for kind in ("raise", "unloadable", "hang", "wrong_type")) >= 24
