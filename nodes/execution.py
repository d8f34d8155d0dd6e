"""Stage 3, task execution: every task runs as soon as the tasks it depends on have succeeded.

LangGraph's super-steps would make each wave of tasks wait for its slowest member, so this node starts one
LangGraph `@task` per plan item up front, in plan (topological) order, and each awaits the futures of its own
dependencies: the run finishes at the plan's critical path. Each task's result is checkpointed on its own, so a
resumed run replays finished tasks from the checkpoint (matched by call order, which is why the order is fixed)
and re-runs only the rest. LangGraph saves those results in the background, so each successful call's result is
also recorded in the run's `CallJournal` before its task ends: a task killed after its model answered, but before
LangGraph saved the result, reads it back there when the step runs again, and calls no model. Failures are values:
a task that raises or times out returns a failed result after retries and fallback models, and never cancels its
siblings; its dependants return `skipped`.

`Limits` bound the stage: at most `max_concurrent_tasks` models run at once (a task waits for a slot before it
starts), and at the run's deadline (`run_timeout_s`) the tasks not started yet are skipped and running ones are
cut off, each with the reason; the run's `stopped` then says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from functools import partial
from pathlib import Path
from typing import Any, cast

from langgraph.config import get_stream_writer
from langgraph.func import task as durable_task
from langgraph.runtime import ExecutionInfo, Runtime

from hugginggraph.dispatch.gate import Gate
from hugginggraph.dispatch.journal import StepJournal
from hugginggraph.dispatch.model_calls import run_ready_task
from hugginggraph.graph.checkpoint import checkpoint_serializer
from hugginggraph.graph.context import HuggingGraphContext, current_thread_id
from hugginggraph.graph.state import GraphState, ModelChoice, Task, TaskResult, turn_number
from hugginggraph.tools.artifacts import turn_folder
from hugginggraph.tools.call_journal import CallJournal


async def run_plan_task(
    task: Task,
    known: TaskResult | None,
    choice: ModelChoice | None,
    dependencies: list[Awaitable[TaskResult]],
    context: HuggingGraphContext,
    run_dir: Path,
    gate: Gate,
    journal: StepJournal,
) -> TaskResult:
    """One plan item, from waiting on its dependencies to its result. Never raises."""
    if known is not None:
        return known
    emit = get_stream_writer()
    done = {result.task_id: result for result in await asyncio.gather(*dependencies)}
    unfinished = [result for result in done.values() if result.status != "ok"]
    if unfinished:
        reasons = "; ".join(f"task {r.task_id} ({r.task}) {r.status}" for r in unfinished)
        result = TaskResult(task_id=task.id, task=task.task, status="skipped", error=f"skipped because {reasons}")
    else:

        def started() -> None:
            emit({"event": "task_started", "task_id": task.id, "task": task.task, "early": False})

        result = await run_ready_task(task, choice, done, context, run_dir, gate, journal, started)
    emit(
        {
            "event": "task_finished",
            "task_id": task.id,
            "status": result.status,
            "result": result.model_dump(mode="json"),
        }
    )
    return result


async def execute(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    known = state.get("results", {})
    choices = state.get("choices", {})
    context = runtime.context
    run_dir = turn_folder(context.artifacts_dir, current_thread_id(), turn_number(state.get("messages", [])))
    gate = Gate(context.limits, state.get("deadline"))
    # LangGraph's id for this run of the node: the same when a killed run resumes it, new for each turn and each
    # fork, so a record is read back only by the step that wrote it.
    node_run = cast(ExecutionInfo, runtime.execution_info).task_id
    journal = StepJournal(CallJournal(run_dir / "calls" / node_run, checkpoint_serializer()))
    futures: dict[int, Any] = {}
    for task in state.get("plan", []):
        # One durable task per plan item, named after it so Studio, traces and streamed updates show which is
        # which; each gets its own partial, since `task(name=...)` renames the function it is given.
        step = cast(Any, durable_task)(name=f"{task.task}#{task.id}")(partial(run_plan_task))
        dependencies = [futures[dep] for dep in task.dep if dep in futures]
        futures[task.id] = step(
            task, known.get(task.id), choices.get(task.id), dependencies, context, run_dir, gate, journal
        )
    results = await asyncio.gather(*futures.values())
    context.early_starts.cancel(str(run_dir))  # started for a plan that then changed: not this plan's calls
    await journal.synced()
    update: dict[str, Any] = {"results": {result.task_id: result for result in results}}
    if gate.cut_short:
        update["stopped"] = gate.cut_short
    return update
