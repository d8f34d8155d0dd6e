"""Tasks started while the planner is still writing the plan: LLMCompiler's task-fetching unit (arXiv 2312.04511),
kept safe by the stages that come after it.

The planner's first reply is read token by token (`PlanStream`, a LangChain callback on that call). Each time a task
of the plan is whole (the next one has begun), the plan written so far goes through what the stages after planning
would do to it: the request's task options, the planner's revisions (step vote, back references), validation. A
task then starts at once (`EarlyStarter`) when
- it reads no earlier task's output (only input files and text),
- validation finds nothing wrong with it, and the plan so far is within `Limits.max_tasks`,
- its model is settled without a question to the controller (`selection.settled_choice`), and is not the controller
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

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.utils.json import parse_partial_json

from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import ModelChoice, Task
from hugginggraph.nodes.execution import Gate, StepJournal, call_key, resolve_inputs, run_task_once
from hugginggraph.nodes.selection import settled_choice
from hugginggraph.nodes.task_options import with_task_options
from hugginggraph.nodes.validation import check_plan, references, too_many_tasks
from hugginggraph.tools.catalog import CatalogUnavailable

logger = logging.getLogger(__name__)


def whole_tasks(text: str, reply_plan: Callable[[Any], list[Any]]) -> list[Any]:
    """The tasks of a partly written plan that are whole: every one but the last written so far, which may still
    be growing. `reply_plan` finds the task list in the parsed reply (a bare list, or under `tasks`)."""
    starts = [at for at in (text.find("["), text.find("{")) if at >= 0]
    if not starts:
        return []
    try:  # from the first bracket: a plain reply may say something first
        items = reply_plan(parse_partial_json(text[min(starts) :]))
    except ValueError:  # not JSON (yet), or no task list in it
        return []
    return items[:-1]


EARLY_TASKS = 10
"""How many of a plan's first tasks are looked at while it is written, as many as a constrained plan may hold
(`planning.MAX_PLANNED_TASKS`): the reply so far is parsed again for each, so a longer plan's later tasks wait for
the execution stage rather than make every one of its tasks cost more."""


class PlanStream(BaseCallbackHandler):
    """Reads the planning call's tokens and hands each longer run of whole tasks to `on_tasks`."""

    run_inline = True
    """Called on the event loop, in token order."""

    def __init__(self, on_tasks: Callable[[list[Any]], None], reply_plan: Callable[[Any], list[Any]]) -> None:
        super().__init__()
        self.on_tasks = on_tasks
        self.reply_plan = reply_plan
        self.text = ""
        self.whole = 0

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], **kwargs: Any) -> None:
        if not isinstance(token, str):  # content blocks: not the text of a plan
            return
        self.text += token
        if "{" not in token or self.whole >= EARLY_TASKS:  # a task is whole only once the next one begins
            return
        items = whole_tasks(self.text, self.reply_plan)
        if len(items) > self.whole:
            self.whole = len(items)
            self.on_tasks(items)


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
            check = check_plan(revised, self.context.workspace, self.context.tasks)
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
        inputs = await asyncio.to_thread(resolve_inputs, task, {}, self.context.workspace)
        key = call_key(task, choice, inputs)

        def started() -> None:
            self.emit({"event": "task_started", "task_id": task.id, "task": task.task, "early": True})

        call = run_task_once(
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
