"""Stage 2b, approval: before any model runs, the user sees the plan with the chosen models and approves it,
rejects it, or edits it (AutoGPT's y / n / feedback).

The node stands between selection and execution in every run, and asks only when the run's input set `approval`;
otherwise it passes straight through. (A conditional edge could not decide it: the router after the parallel
selection branches sees one branch's writes, not the state.) `approval` is an input key rather than a context
field because it belongs to the request, not to the configuration of the models: the CLI's `--approve` and a
JSON field of `langgraph dev`'s run input set it the same way, and it is checkpointed with the run, so the run
resumed after the user's answer still knows it was asked.

It asks with `interrupt(ApprovalRequest)` (as JSON) and the caller resumes the run with
`Command(resume=ApprovalDecision)`. An answer that cannot be used (not a decision, an edited plan that cannot run,
a model the catalog does not have for that task) is never raised: the user is asked again, with the problem in
`ApprovalRequest.problem`. An edit that adds tasks or changes a task's type sends those back to selection, and the
user is then asked again about the new choices.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Overwrite, interrupt
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hugginggraph.graph.budget import deadline_for, out_of_time
from hugginggraph.graph.context import HuggingGraphContext, thread_folder
from hugginggraph.graph.state import GraphState, ModelChoice, Task
from hugginggraph.planning.plan_check import check_plan, too_many_tasks
from hugginggraph.tools.catalog import CatalogUnavailable


class ProposedTask(BaseModel):
    """One task of the plan as the user is asked to approve it."""

    id: int
    task: str
    dep: list[int] = Field(default_factory=list)
    args: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    """The model that will run it; None when the task cannot run (`cannot_run` says why)."""
    candidates: list[str] = Field(default_factory=list)
    """Every model it may use, the chosen one first (the others are its fallbacks)."""
    reason: str | None = None
    """Why that model was chosen."""
    cannot_run: str | None = None


class ApprovalRequest(BaseModel):
    """The approval interrupt's payload, sent as JSON: the plan and its models, awaiting an `ApprovalDecision`."""

    tasks: list[ProposedTask]
    repairs: list[str] = Field(default_factory=list)
    """What validation repaired in the planner's plan."""
    problem: str | None = None
    """Why the previous answer could not be used; None when the question is new."""


class ApprovalDecision(BaseModel):
    """The user's answer: the value a paused run is resumed with."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["approve", "reject", "edit"]
    feedback: str = ""
    """Why the plan was rejected (reject)."""
    tasks: list[dict[str, Any]] | None = None
    """The whole edited plan in HuggingGPT's format, e.g. `ApprovalRequest.tasks` with arguments changed (edit);
    None keeps the plan. It is validated as the planner's plan is, and must have no task that cannot run."""
    models: dict[int, str] = Field(default_factory=dict)
    """Task id → the model to run it with, in place of the chosen one (edit)."""

    @model_validator(mode="after")
    def _edits_something(self) -> ApprovalDecision:
        if self.action == "edit" and self.tasks is None and not self.models:
            raise ValueError("an edit changes `tasks`, `models` or both")
        return self


class InvalidEdit(ValueError):
    """An edit that cannot be applied; the message says what to fix."""


def approval_request(state: GraphState, problem: str | None = None) -> ApprovalRequest:
    """The question for the plan and choices in `state`."""
    choices, results = state.get("choices", {}), state.get("results", {})
    proposed = []
    for task in state.get("plan", []):
        choice, doomed = choices.get(task.id), results.get(task.id)
        proposed.append(
            ProposedTask(
                **task.model_dump(),
                model=choice.model_ids[0] if choice else None,
                candidates=choice.model_ids if choice else [],
                reason=choice.reason if choice else None,
                cannot_run=doomed.error if doomed else None,
            )
        )
    return ApprovalRequest(tasks=proposed, repairs=state.get("plan_repairs", []), problem=problem)


async def approve(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    context = runtime.context
    if state.get("stopped"):
        return {}
    if not state.get("approval"):
        # Selection asked the LLM once per task: the deadline may have passed since validation checked it. (With
        # approval it does not matter: the user's answer starts the clock again.)
        stopped = out_of_time(state.get("deadline"), context.limits)
        return {"stopped": stopped} if stopped else {}
    problem = None
    while True:  # on resume the node runs again from the top, and each interrupt returns its answer in turn
        answer = interrupt(approval_request(state, problem).model_dump(mode="json"))
        try:
            update = await _apply(ApprovalDecision.model_validate(answer), state, context)
        except ValidationError as error:
            problem = "not a decision: " + "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'value'}: {e['msg']}" for e in error.errors()
            )
        except InvalidEdit as error:
            problem = str(error)
        else:
            if context.limits.run_timeout_s is not None:  # the wait for the user does not count
                update["deadline"] = deadline_for(context.limits)
            return update


async def _apply(decision: ApprovalDecision, state: GraphState, context: HuggingGraphContext) -> dict[str, Any]:
    if decision.action == "approve":
        return {}
    if decision.action == "reject":
        return {"stopped": "the user rejected the plan" + (f": {decision.feedback}" if decision.feedback else "")}
    return await _edit(decision, state, context)


async def _edit(decision: ApprovalDecision, state: GraphState, context: HuggingGraphContext) -> dict[str, Any]:
    """The plan and choices the edit makes. Raises InvalidEdit, applying nothing, when any part is wrong."""
    plan, choices = state.get("plan", []), dict(state.get("choices", {}))
    cannot_run = {task_id: result.error for task_id, result in state.get("results", {}).items()}
    update: dict[str, Any] = {}
    if decision.tasks is not None:
        check = check_plan(decision.tasks, context.workspace, context.tasks, thread_folder(context))
        problems = [reason for _, reason in sorted(check.doomed.items())]
        if not check.tasks:
            problems.append("the edited plan has no task")
        if too_many := too_many_tasks(check.tasks, context.limits):
            problems.append(too_many)
        if problems:
            raise InvalidEdit(f"the edited plan cannot run: {'; '.join(problems)}")
        # A task keeps its models while its type stays; the others go back to selection.
        before = {task.id: task.task for task in plan}
        plan = check.tasks
        kept = {task.id for task in plan if before.get(task.id) == task.task}
        choices = {task_id: choice for task_id, choice in choices.items() if task_id in kept}
        cannot_run = {}
        update = {"plan": plan, "plan_repairs": check.repairs, "results": Overwrite({})}
    by_id = {task.id: task for task in plan}
    for task_id, model_id in decision.models.items():
        if task_id not in by_id:
            raise InvalidEdit(f"task {task_id} is not in the plan")
        if task_id in cannot_run:
            raise InvalidEdit(f"task {task_id} cannot run: {cannot_run[task_id]}")
        choices[task_id] = await _users_choice(by_id[task_id], model_id, choices.get(task_id), context)
    return {**update, "choices": Overwrite(choices)}


async def _users_choice(
    task: Task, model_id: str, previous: ModelChoice | None, context: HuggingGraphContext
) -> ModelChoice:
    try:
        card = await asyncio.to_thread(context.catalog.get, model_id)
    except CatalogUnavailable as error:
        raise InvalidEdit(f"model {model_id!r} could not be looked up: {error}") from error
    if card is None or card.task != task.task:
        raise InvalidEdit(f"task {task.id}: the catalog has no {task.task} model {model_id!r}")
    fallbacks = [other for other in (previous.model_ids if previous else []) if other != model_id]
    return ModelChoice(task_id=task.id, model_ids=[model_id, *fallbacks], reason="chosen by the user", asked_llm=False)
