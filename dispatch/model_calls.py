"""A planned task's model calls: the chosen model with its retries, then the fallback candidates, bounded by the task's
time limit and the run's deadline. Failures are values: these never raise, so one task never takes down its
siblings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hugginggraph.dispatch.gate import Gate
from hugginggraph.dispatch.inputs import MissingInput, resolve_inputs
from hugginggraph.dispatch.journal import StepJournal, call_key
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import ModelChoice, Task, TaskResult, TaskStatus
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogUnavailable
from hugginggraph.tools.runners.base import ModelLoadError, checked_output


async def call_models(
    task: Task,
    choice: ModelChoice,
    inputs: dict[str, str],
    context: HuggingGraphContext,
    run_dir: Path,
    gate: Gate,
    journal: StepJournal,
) -> TaskResult:
    """Try the chosen model, retrying up to the limit, then each fallback candidate in rank order, until the run's
    deadline, if any, cuts it off. A success is recorded in `journal` before it is returned."""
    limits = context.limits
    attempts: list[str] = []
    started = time.time()

    def ended(status: TaskStatus, **outcome: Any) -> TaskResult:
        return TaskResult(
            task_id=task.id,
            task=task.task,
            status=status,
            attempts=attempts,
            started_at=started,
            finished_at=time.time(),
            **outcome,
        )

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
            timeout, by_deadline = gate.attempt_timeout()
            try:
                call = runner.run(card, task.task, inputs, ArtifactStore(run_dir, task.id))
                output = checked_output(await asyncio.wait_for(call, timeout))
            except ModelLoadError as error:
                attempts.append(f"{model_id}: {error}")
                break
            except TimeoutError:
                if by_deadline:
                    attempts.append(f"{model_id}: still running at the run's time limit")
                    return ended("failed", error=f"cut off: {gate.cut()}")
                attempts.append(f"{model_id}: timed out after {limits.task_timeout_s:g} s")
            except Exception as error:
                attempts.append(f"{model_id}: {type(error).__name__}: {error}")
            else:
                result = ended(
                    "ok",
                    text=output.text,
                    data=output.data,
                    artifacts=output.artifacts,
                    model_id=model_id,
                    random_weights=card.random_weights,
                )
                await journal.record(call_key(task, choice, inputs), result)
                return result
    return ended("failed", error=f"every model failed; last: {attempts[-1]}" if attempts else "no model to try")


def _no_event() -> None:
    return None


async def run_ready_task(
    task: Task,
    choice: ModelChoice | None,
    done: dict[int, TaskResult],
    context: HuggingGraphContext,
    run_dir: Path,
    gate: Gate,
    journal: StepJournal,
    started: Callable[[], None] = _no_event,
    *,
    take_early: bool = True,
) -> TaskResult:
    """A task whose dependencies all succeeded: the result `journal` recorded for this very call (same task, inputs
    and models), looked up before the task takes a slot, so a resumed task neither waits for one nor is skipped
    past the run's deadline; or, with `take_early`, the same call started while the plan was being written
    (`context.early_starts`); otherwise its model calls, in a slot, `started` called as they begin. Never raises:
    a bug or bad input in one task must not take down its siblings."""
    try:
        if choice is None:
            raise MissingInput("no model was chosen for this task")
        # Reads files (text files whole): off the event loop, which a server shares with other runs.
        # The turn's folder is in its thread's, whose earlier turns' outputs a plan may read.
        inputs = await asyncio.to_thread(resolve_inputs, task, done, context.workspace, run_dir.parent)
        key = call_key(task, choice, inputs)
        if (recorded := await journal.recorded(key)) is not None:
            return recorded
        early = context.early_starts.take(str(run_dir), key) if take_early else None
        if early is not None and not early.cancelled():
            result: TaskResult = await early  # started while the plan was written (dispatch/early_starts.py)
            if result.status == "ok":
                await journal.record(key, result)
            return result
        async with gate.slot() as late:
            if late:
                return TaskResult(task_id=task.id, task=task.task, status="skipped", error=f"not started: {late}")
            started()
            return await call_models(task, choice, inputs, context, run_dir, gate, journal)
    except Exception as error:
        return TaskResult(task_id=task.id, task=task.task, status="failed", error=f"{type(error).__name__}: {error}")
