"""Stage 3, task execution: every task runs as soon as the tasks it depends on have succeeded.

LangGraph's super-steps would make each wave of tasks wait for its slowest member, so this node starts one
LangGraph `@task` per plan item up front, in plan (topological) order, and each awaits the futures of its own
dependencies: the run finishes at the plan's critical path. Each task's result is checkpointed on its own, so a
resumed run replays finished tasks from the checkpoint (matched by call order, which is why the order is fixed)
and re-runs only the rest. Failures are values: a task that raises or times out returns a failed result after
retries and fallback models, and never cancels its siblings; its dependants return `skipped`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, cast

from langgraph.config import get_config, get_stream_writer
from langgraph.func import task as durable_task
from langgraph.runtime import Runtime

from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import GraphState, ModelChoice, Task, TaskResult
from hugginggraph.nodes.validation import REFERENCE
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogUnavailable
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.tasks import MEDIA_MODALITIES


class MissingInput(Exception):
    """A dependency succeeded but did not produce what an argument needs (e.g. no image)."""


def resolve_inputs(task: Task, done: dict[int, TaskResult]) -> dict[str, str]:
    """The task's arguments with each `<GENERATED>-k` replaced by task k's output: for a media argument, the
    path of k's first artifact of that kind; for text, k's text output (spliced into the surrounding text)."""
    inputs: dict[str, str] = {}
    for key, value in task.args.items():
        if key in MEDIA_MODALITIES and (match := REFERENCE.fullmatch(value.strip())):
            source = done[int(match.group(1))]
            artifact = next((a for a in source.artifacts if a.kind == key), None)
            if artifact is None:
                raise MissingInput(f"task {source.task_id} ({source.task}) produced no {key} for this task")
            inputs[key] = artifact.path
        else:
            inputs[key] = REFERENCE.sub(lambda m: done[int(m.group(1))].text or "", value)
    return inputs


async def run_with_fallbacks(
    task: Task, choice: ModelChoice, inputs: dict[str, str], context: HuggingGraphContext, run_dir: Path
) -> TaskResult:
    """Try the chosen model, retrying up to the limit, then each fallback candidate in rank order."""
    limits = context.limits
    attempts: list[str] = []
    started = time.time()
    for model_id in choice.model_ids:
        try:
            card = await asyncio.to_thread(context.catalog.get, model_id)
        except CatalogUnavailable as error:
            attempts.append(f"{model_id}: {error}")
            continue
        runner = context.runner_for(card) if card is not None else None
        if card is None or runner is None:
            attempts.append(f"{model_id}: no runner can run this model")
            continue
        for _ in range(limits.attempts_per_model):
            try:
                output: RunnerOutput = await asyncio.wait_for(
                    runner.run(card, task.task, inputs, ArtifactStore(run_dir, task.id)),
                    limits.task_timeout_s,
                )
            except ModelLoadError as error:
                attempts.append(f"{model_id}: {error}")
                break
            except TimeoutError:
                attempts.append(f"{model_id}: timed out after {limits.task_timeout_s:g} s")
            except Exception as error:
                attempts.append(f"{model_id}: {type(error).__name__}: {error}")
            else:
                return TaskResult(
                    task_id=task.id,
                    task=task.task,
                    status="ok",
                    text=output.text,
                    data=output.data,
                    artifacts=output.artifacts,
                    model_id=model_id,
                    attempts=attempts,
                    started_at=started,
                    finished_at=time.time(),
                )
    return TaskResult(
        task_id=task.id,
        task=task.task,
        status="failed",
        error=f"every model failed; last: {attempts[-1]}" if attempts else "no model to try",
        attempts=attempts,
        started_at=started,
        finished_at=time.time(),
    )


async def run_plan_task(
    task: Task,
    known: TaskResult | None,
    choice: ModelChoice | None,
    dependencies: list[Awaitable[TaskResult]],
    context: HuggingGraphContext,
    run_dir: Path,
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
        emit({"event": "task_started", "task_id": task.id, "task": task.task})
        result = await _run_safely(task, choice, done, context, run_dir)
    emit(
        {
            "event": "task_finished",
            "task_id": task.id,
            "status": result.status,
            "result": result.model_dump(mode="json"),
        }
    )
    return result


async def _run_safely(
    task: Task, choice: ModelChoice | None, done: dict[int, TaskResult], context: HuggingGraphContext, run_dir: Path
) -> TaskResult:
    try:
        if choice is None:
            raise MissingInput("no model was chosen for this task")
        return await run_with_fallbacks(task, choice, resolve_inputs(task, done), context, run_dir)
    except Exception as error:  # a bug or bad input in one task must not take down its siblings
        return TaskResult(task_id=task.id, task=task.task, status="failed", error=f"{type(error).__name__}: {error}")


async def execute(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    known = state.get("results", {})
    choices = state.get("choices", {})
    thread_id = get_config()["configurable"].get("thread_id", "default")
    run_dir = runtime.context.artifacts_dir / str(thread_id)
    futures: dict[int, Any] = {}
    for task in state.get("plan", []):
        # One durable task per plan item, named after it so Studio and traces show which is which.
        step = cast(Any, durable_task)(name=f"{task.task}#{task.id}")(run_plan_task)
        dependencies = [futures[dep] for dep in task.dep if dep in futures]
        futures[task.id] = step(task, known.get(task.id), choices.get(task.id), dependencies, runtime.context, run_dir)
    results = await asyncio.gather(*futures.values())
    return {"results": {result.task_id: result for result in results}}
