"""After execution, once per turn: when tasks failed or were skipped, the controller sees what became of each task
and may propose tasks that do the failed part another way (another task type, another input), or nothing.

HuggingGPT answers with what is left; LLMCompiler's joiner may plan again. Here the replacement joins the plan and
goes through validation, selection (and approval, when it is on) and execution like the first tasks, so every
check holds for it; the tasks that finished keep their results and are never run again. Whether it is on is the
`PlanningAids.replan` aid.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime

from hugginggraph.graph.budget import LLMBudgetSpent, LLMMeter, calls_left, out_of_time
from hugginggraph.graph.context import HuggingGraphContext, current_thread_id, thread_folder
from hugginggraph.graph.state import GraphState
from hugginggraph.planning.planner import Planner
from hugginggraph.planning.replacement import (
    another_way_exists,
    renumbered,
    repeats,
    replacement,
    runnable,
    unfinished,
)
from hugginggraph.tools.llm_json import ControllerUnavailable


async def replan(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    """The replacement tasks added to the raw plan, for validation; nothing more when the aid is off, the run is
    out of time, the call budget has no call left but the answer's, no task type offered could do the failed part
    (`another_way_exists`), or the controller proposes nothing."""
    context = runtime.context
    done: dict[str, Any] = {"replanned": 0}
    failed = unfinished(state)
    left = calls_left(context.limits, state.get("llm_usage"))
    if not context.planning.replan or out_of_time(state.get("deadline"), context.limits) or left in (0, 1):
        return done  # the last call left is the answer's
    if not another_way_exists(failed, context.tasks):
        return done
    meter = LLMMeter.for_run(context.limits, state.get("llm_usage"))
    with meter:
        try:
            meter.check()
            draft = await replacement(Planner.from_context(context, current_thread_id()), state, failed)
        except (ControllerUnavailable, LLMBudgetSpent):
            return {**done, "llm_usage": meter.usage}  # the answer reports the failures as they are
    plan = state.get("plan", [])
    proposed = [] if draft.error else renumbered(repeats(draft.items, plan), {task.id for task in plan})
    added = runnable(proposed, plan, context.workspace, context.tasks, thread_folder(context))
    get_stream_writer()(
        {"event": "replanned", "failed": [result.task_id for result in failed], "tasks": added, "error": draft.error}
    )
    update = {"replanned": len(added), "llm_usage": meter.usage}
    if not added:
        return update
    return {**update, "raw_plan": [*(task.model_dump(mode="json") for task in plan), *added]}
