"""Tasks started while the planner is still writing the plan: LLMCompiler's task-fetching unit (arXiv 2312.04511),
kept safe by the stages that come after it.

The planner's first reply is read token by token (`PlanStream`, a LangChain callback on that call). Each time a task
of the plan is whole (the next one has begun), the plan written so far goes through what the stages after planning
would do to it: the request's task options, the planner's revisions (step vote, back references), validation. A
task then starts at once (`EarlyStarter`) when
- it reads no earlier task's output (only input files and text),
- validation finds nothing wrong with it, and the plan so far is within `Limits.max_tasks`,
- its model is settled without a question to the controller (`choices.settled_choice`), and is not the controller
  itself, which is busy writing the plan.

The call is kept in the context's `EarlyStarts` under its call key. Then the graph runs as always on the finished
plan: validation, selection, execution. When execution reaches the same call (same task, inputs and models) it
awaits the early one instead of calling the model again; when the finished plan changed the task (a later task, the
step vote, the fix pass), the keys differ, the early call is cancelled, and the task runs as the plan says. So a task
is validated and its model chosen before it starts, and what runs is always what the finished plan says. Nothing
here is checkpointed: a run resumed in another process runs its tasks in its execution stage, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggraph.dispatch.choices import settled_choice
from hugginggraph.dispatch.gate import Gate
from hugginggraph.dispatch.inputs import resolve_inputs
from hugginggraph.dispatch.journal import StepJournal, call_key
from hugginggraph.dispatch.model_calls import run_ready_task
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import ModelChoice, Task
from hugginggraph.planning.plan_check import check_plan, too_many_tasks
from hugginggraph.planning.references import references
from hugginggraph.planning.task_options import with_task_options
from hugginggraph.tools.catalog import CatalogUnavailable

logger = logging.getLogger(__name__)


@dataclass
class EarlyStarter:
    """Starts the whole tasks of a plan being written, as the module says, and keeps their calls in the context."""

    context: HuggingGraphContext
    run_dir: Path
    request: str
    deadline: float | None
    revise: Callable[[list[Any]], Any]
    """The planner's revisions of a plan (`Planner.revised`), as an awaitable of the revised items."""
    emit: Callable[[Any], None]
    """The run's custom stream: `task_started` is sent when a task starts here, as execution sends it."""
    considered: set[int] = field(default_factory=set)
    checking: list[asyncio.Task[None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.gate = Gate(self.context.limits, self.deadline)
        self.journal = StepJournal(None)  # execution records the results it takes

    def consider(self, items: list[Any]) -> None:
        """Check the plan so far in the background and start what may start (called by `PlanStream`)."""
        self.checking.append(asyncio.ensure_future(self._start_whole(list(items))))

    async def settled(self) -> None:
        """Wait until every plan so far has been checked (not until the tasks end)."""
        await asyncio.gather(*self.checking)

    async def _start_whole(self, items: list[Any]) -> None:
        try:
            revised = await self.revise(with_task_options(items, self.request))
            check = check_plan(revised, self.context.workspace, self.context.tasks, self.run_dir.parent)
            if too_many_tasks(check.tasks, self.context.limits):
                return
            for task in check.tasks:
                if task.id in self.considered or task.id in check.doomed or task.dep or references(task.args):
                    continue
                self.considered.add(task.id)
                await self._start(task)
        except Exception:  # a head start is a bonus: whatever fails here, execution runs the task as planned
            logger.exception("a task could not be started early; it runs in the execution stage")

    async def _start(self, task: Task) -> None:
        choice = await self._choice(task)
        if choice is None:
            return
        inputs = await asyncio.to_thread(resolve_inputs, task, {}, self.context.workspace, self.run_dir.parent)
        key = call_key(task, choice, inputs)

        def started() -> None:
            self.emit({"event": "task_started", "task_id": task.id, "task": task.task, "early": True})

        call = run_ready_task(
            task, choice, {}, self.context, self.run_dir, self.gate, self.journal, started, take_early=False
        )
        self.context.early_starts.add(str(self.run_dir), key, asyncio.ensure_future(call))

    async def _choice(self, task: Task) -> ModelChoice | None:
        """The model selection would choose without a question to the controller, unless it is the controller."""
        try:
            found = await asyncio.to_thread(self.context.catalog.candidates, task.task)
        except CatalogUnavailable:
            return None
        candidates = found[: self.context.limits.top_k]
        choice = settled_choice(task, candidates) if candidates else None
        if choice is None or "llm" in candidates[0].source.split("+"):
            return None
        return choice
