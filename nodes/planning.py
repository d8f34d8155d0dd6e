"""Stage 1, task planning: the controller LLM turns the request, the chat so far and the input files into a
plan in HuggingGPT's format. The plan is kept raw here; the validation stage checks and repairs it.

The planner (`planning/planner.py`) writes the plan; this stage gives it the run's context and budget, refuses bad
input before any call, and, while the reply streams in, starts the tasks that are whole (dispatch/early_starts.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, get_args

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import HumanMessage
from langgraph.config import get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Overwrite

from hugginggraph.dispatch.early_starts import EarlyStarter
from hugginggraph.graph.budget import LLMBudgetSpent, LLMMeter, deadline_for
from hugginggraph.graph.context import HuggingGraphContext, current_thread_id, thread_folder
from hugginggraph.graph.state import GraphState, Mode, turn_number
from hugginggraph.planning.plan_schema import reply_plan
from hugginggraph.planning.plan_stream import PlanStream
from hugginggraph.planning.planner import PlanDraft, Planner
from hugginggraph.planning.task_options import with_task_options
from hugginggraph.tools.artifacts import InputFileError, inside_workspace, turn_folder
from hugginggraph.tools.llm_json import ControllerUnavailable


def _input_error(request: str, mode: str) -> str | None:
    if not request:
        return "the request is empty: say what you want done"
    if mode not in get_args(Mode):
        return f"unknown mode {mode!r}: use one of {', '.join(get_args(Mode))}"
    return None


def _files_error(files: Sequence[str], context: HuggingGraphContext) -> str | None:
    """Why an input file the user gave cannot be used: one outside the workspace is refused before any planning,
    since a plan could only mention it and fail (a missing one is left to the task that reads it)."""
    try:
        for name in files:
            inside_workspace(name, context.workspace)
    except InputFileError as error:
        return str(error)
    return None


async def plan(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    context = runtime.context
    # A new turn on a thread starts afresh: the reducers would otherwise merge the last turn's values in.
    turn: dict[str, Any] = {
        "plan_error": None,
        "choices": Overwrite({}),
        "results": Overwrite({}),
        "stopped": None,
        "deadline": deadline_for(context.limits),
        "direct_answer": False,
        "replanned": None,
    }
    thread_id = current_thread_id()
    context.early_starts.cancel(str(thread_folder(context)))  # earlier turns' calls nobody took
    asked = [*state.get("messages", []), HumanMessage(state.get("request", "").strip())]
    run_dir = turn_folder(context.artifacts_dir, thread_id, turn_number(asked))
    planner = Planner.from_context(context, thread_id)
    starter = _early_starter(state, context, planner, run_dir, turn["deadline"])
    meter = LLMMeter.for_run(context.limits, None)
    listeners = [PlanStream(starter.consider, reply_plan)] if starter else []
    drafted = await _draft(state, context, planner, meter, listeners)
    if starter:
        await starter.settled()  # every early call is known before execution looks for it
    return {**turn, **drafted, "llm_usage": Overwrite(meter.usage)}


def _early_starter(
    state: GraphState, context: HuggingGraphContext, planner: Planner, run_dir: Path, deadline: float | None
) -> EarlyStarter | None:
    """What starts tasks while the plan is written, when the run will execute them without asking the user, and
    without the limits whose bookkeeping is the execution stage's (its slots, its deadline's cut)."""
    limits = context.limits
    bounded = limits.max_concurrent_tasks is not None or limits.run_timeout_s is not None
    if not context.start_tasks_early or bounded or state.get("approval") or state.get("mode", "full") == "tasks":
        return None
    request = state.get("request", "").strip()

    async def revise(items: list[Any]) -> list[Any]:
        return (await planner.revised(PlanDraft(items), request)).items

    return EarlyStarter(context, run_dir, request, deadline, revise, get_stream_writer())


async def _draft(
    state: GraphState,
    context: HuggingGraphContext,
    planner: Planner,
    meter: LLMMeter,
    listeners: Sequence[BaseCallbackHandler] = (),
) -> dict[str, Any]:
    """The raw plan and the request as the chat's next message; or why there is no plan."""
    request = state.get("request", "").strip()
    if error := _input_error(request, state.get("mode", "full")) or _files_error(state.get("files", []), context):
        return {"raw_plan": [], "plan_error": error}
    asked = {"messages": [HumanMessage(request)]}
    with meter:
        try:
            meter.check()
            draft = await planner.draft(request, state.get("files", []), state.get("messages", []), listeners)
        except ControllerUnavailable as error:
            # Nothing can run without a controller: the user is told why and what to fix, not shown a stack trace.
            return {**asked, "raw_plan": [], "plan_error": str(error)}
        except LLMBudgetSpent as spent:
            return {**asked, "raw_plan": [], "stopped": str(spent)}
    # Options the request states (a translation's language) are the runners' to read, not the planner's to
    # choose: filled in here, outside `Planner`, so the TaskBench evaluation still scores the plan as the model made it.
    raw_plan = with_task_options(draft.items, request)
    return {**asked, "raw_plan": raw_plan, "plan_error": draft.error, "direct_answer": draft.direct}
