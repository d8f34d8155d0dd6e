"""Stage 1b, plan validation: the planner's raw JSON becomes the run's plan, checked and repaired by `check_plan`
(planning/plan_check.py). A task that cannot run is recorded as failed with the reason, and every other task still
runs; a plan past `Limits.max_tasks` or the run's deadline stops the run."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from hugginggraph.graph.budget import out_of_time
from hugginggraph.graph.context import HuggingGraphContext, thread_folder
from hugginggraph.graph.state import GraphState, TaskResult
from hugginggraph.planning.plan_check import check_plan, too_many_tasks


async def validate(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    raw_plan = state.get("raw_plan", [])
    context = runtime.context
    check = check_plan(raw_plan, context.workspace, context.tasks, thread_folder(context))
    if raw_plan and not check.tasks:
        return {"plan": [], "plan_repairs": check.repairs, "plan_error": "the plan held no usable task"}
    # Planning is the stage a slow controller makes long: the first place the deadline can have passed.
    if stopped := too_many_tasks(check.tasks, context.limits) or out_of_time(state.get("deadline"), context.limits):
        return {"plan": check.tasks, "plan_repairs": check.repairs, "stopped": stopped}
    known = state.get("results", {})  # a replan's plan holds tasks that ran: their results stand
    doomed = {
        task.id: TaskResult(task_id=task.id, task=task.task, status="failed", error=check.doomed[task.id])
        for task in check.tasks
        if task.id in check.doomed and task.id not in known
    }
    return {"plan": check.tasks, "plan_repairs": check.repairs, "results": doomed}
