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
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any, cast

from langgraph.config import get_config, get_stream_writer
from langgraph.func import task as durable_task
from langgraph.runtime import ExecutionInfo, Runtime

from hugginggraph.graph.budget import out_of_time, time_left, time_limit_reason
from hugginggraph.graph.checkpoint import checkpoint_serializer
from hugginggraph.graph.context import HuggingGraphContext, Limits, context_of
from hugginggraph.graph.state import GraphState, ModelChoice, Task, TaskResult, TaskStatus
from hugginggraph.nodes.validation import REFERENCE
from hugginggraph.tools.artifacts import ArtifactStore, is_remote, read_text_file, resolve_input_file, run_folder
from hugginggraph.tools.call_journal import CallJournal
from hugginggraph.tools.catalog import CatalogUnavailable
from hugginggraph.tools.runners.base import ModelLoadError, checked_output
from hugginggraph.tools.tasks import MEDIA_MODALITIES

logger = logging.getLogger(__name__)


class MissingInput(Exception):
    """A dependency succeeded but did not produce what an argument needs (e.g. no image)."""


def resolve_inputs(task: Task, done: dict[int, TaskResult], workspace: Path) -> dict[str, str]:
    """The task's arguments with each `<GENERATED>-k` replaced by task k's output: for a media argument, the
    path of k's first artifact of that kind; for text, k's text output (spliced into the surrounding text). Text
    that is only the name of a text file in the workspace is that file's contents (`read_text_file`).

    A media file is resolved in the workspace again, as validation did (raising InputFileError): the plan may come
    from a checkpoint written under other rules, and the file may have been swapped for a symlink leading out."""
    inputs: dict[str, str] = {}
    for key, value in task.args.items():
        if key in MEDIA_MODALITIES and (match := REFERENCE.fullmatch(value.strip())):
            source = done[int(match.group(1))]
            artifact = next((a for a in source.artifacts if a.kind == key), None)
            if artifact is None:
                raise MissingInput(f"task {source.task_id} ({source.task}) produced no {key} for this task")
            inputs[key] = artifact.path
        elif key in MEDIA_MODALITIES and not is_remote(value):
            inputs[key] = str(resolve_input_file(value, workspace))
        elif key not in MEDIA_MODALITIES and (contents := read_text_file(value, workspace)) is not None:
            inputs[key] = contents
        else:
            inputs[key] = REFERENCE.sub(lambda m: done[int(m.group(1))].text or "", value)
    return inputs


class Gate:
    """When a task may start and how long it may run: a free slot under `Limits.max_concurrent_tasks`, and the time
    left before the run's deadline (`Limits.run_timeout_s`). Remembers whether the deadline cut the run short."""

    def __init__(self, limits: Limits, deadline: float | None) -> None:
        self.limits = limits
        self.deadline = deadline
        self.slots = asyncio.Semaphore(limits.max_concurrent_tasks) if limits.max_concurrent_tasks else None
        self.cut_short: str | None = None
        """Why the deadline stopped a task, once it has."""

    def cut(self) -> str:
        """Record that the deadline stopped a task; return the reason."""
        self.cut_short = time_limit_reason(self.limits)
        return self.cut_short

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[str | None]:
        """Holds a slot for the block. Yields None, or why the task may not start: the deadline came first."""
        if out_of_time(self.deadline, self.limits):
            yield self.cut()
            return
        if self.slots is None:
            yield None
            return
        try:
            async with asyncio.timeout(time_left(self.deadline)):
                await self.slots.acquire()
        except TimeoutError:
            yield self.cut()
            return
        try:
            yield None
        finally:
            self.slots.release()

    def attempt_timeout(self) -> tuple[float, bool]:
        """Seconds the next model call may take, and whether the run's deadline (not the task's own limit) set it."""
        left = time_left(self.deadline)
        if left is None or left >= self.limits.task_timeout_s:
            return self.limits.task_timeout_s, False
        return max(left, 0.0), True


class StepJournal:
    """The execute step's `CallJournal`, as its tasks use it: disk calls run in threads, never on the event loop, and
    the wait for the disk comes once, at the step's end, rather than between a task and its dependants. A journal
    that cannot be written (a full disk, a read-only folder) costs only the crash-safety of its results."""

    def __init__(self, journal: CallJournal | None) -> None:
        self.journal = journal
        """None: nothing is recorded or read back (calls started while the plan is written: execution records the
        results it takes from them)."""
        self.syncing: list[asyncio.Future[None]] = []

    async def recorded(self, key: dict[str, Any]) -> TaskResult | None:
        """The result recorded for this call, if it can stand for a new one: every file it names still exists."""
        return None if self.journal is None else await asyncio.to_thread(self._reusable, key)

    def _reusable(self, key: dict[str, Any]) -> TaskResult | None:
        assert self.journal is not None
        try:
            recorded = self.journal.recorded(key)
        except OSError as error:
            logger.warning("task %s: journal not readable (%s); the models are called", key["task_id"], error)
            return None
        if isinstance(recorded, TaskResult) and all(Path(artifact.path).is_file() for artifact in recorded.artifacts):
            return recorded
        return None

    async def record(self, key: dict[str, Any], result: TaskResult) -> None:
        """Record a successful call's result: a write and a rename, a fraction of a millisecond, so the moment in
        which a kill loses a finished call is as short as it can be. Its sync to disk goes on meanwhile."""
        if self.journal is None:
            return
        try:
            path = await asyncio.to_thread(self.journal.record, key, result)
        except OSError as error:
            logger.warning("task %s: result not recorded (%s); a crash would run it again", key["task_id"], error)
            return
        self.syncing.append(asyncio.ensure_future(asyncio.to_thread(self._sync, path, key["task_id"])))

    def _sync(self, path: Path, task_id: int) -> None:
        assert self.journal is not None
        try:
            self.journal.sync(path)
        except OSError as error:
            logger.warning("task %s: result not synced to disk (%s); a power cut would lose it", task_id, error)

    async def synced(self) -> None:
        """Wait until every record is on disk."""
        await asyncio.gather(*self.syncing)


def call_key(task: Task, choice: ModelChoice, inputs: dict[str, str]) -> dict[str, Any]:
    """What a model call's journal record is found by: the same task, inputs and models."""
    return {"task_id": task.id, "task": task.task, "inputs": inputs, "model_ids": choice.model_ids}


async def run_with_fallbacks(
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


async def run_task_once(
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
        inputs = await asyncio.to_thread(resolve_inputs, task, done, context.workspace)
        key = call_key(task, choice, inputs)
        if (recorded := await journal.recorded(key)) is not None:
            return recorded
        early = context.early_starts.take(str(run_dir), key) if take_early else None
        if early is not None and not early.cancelled():
            result: TaskResult = await early  # started while the plan was written (nodes/plan_stream.py)
            if result.status == "ok":
                await journal.record(key, result)
            return result
        async with gate.slot() as late:
            if late:
                return TaskResult(task_id=task.id, task=task.task, status="skipped", error=f"not started: {late}")
            started()
            return await run_with_fallbacks(task, choice, inputs, context, run_dir, gate, journal)
    except Exception as error:
        return TaskResult(task_id=task.id, task=task.task, status="failed", error=f"{type(error).__name__}: {error}")


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

        result = await run_task_once(task, choice, done, context, run_dir, gate, journal, started)
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
    thread_id = get_config()["configurable"].get("thread_id", "default")
    context = await context_of(runtime)
    run_dir = run_folder(context.artifacts_dir, str(thread_id))
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
