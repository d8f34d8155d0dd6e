"""The plan as the planner writes it: the structured-output schema (task types as an enum, a bounded length, the
steps before the tasks they explain), a demo's plan as a reply, and the task list read back from a reply."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, create_model

from hugginggraph.graph.context import StepsAid
from hugginggraph.tools.llm_json import extract_json


class PlannedArgs(BaseModel):
    """Task arguments as the structured-output schema offers them (explicit names keep strict schemas valid)."""

    text: str | None = None
    image: str | None = None
    audio: str | None = None
    video: str | None = None


class PlannedTask(BaseModel):
    task: str
    id: int
    dep: list[int] = Field(default_factory=lambda: [-1])
    args: PlannedArgs = Field(default_factory=PlannedArgs)


class PlanOutput(BaseModel):
    """The planner's reply; an empty `tasks` list means the request needs no model."""

    tasks: list[PlannedTask]


class StepFirst(BaseModel):
    """With the `steps` aid "inline": a task begins with the part of the request it does, in the request's words,
    so the model has said what is wanted before it names a task type."""

    step: str


MAX_PLANNED_TASKS = 10
"""The most tasks a constrained plan may hold: small models otherwise repeat one task until the context ends."""


class StepsFirst(BaseModel):
    """With the `steps` aid "first": the reply begins with every step the request asks for, in order."""

    steps: list[str] = Field(max_length=MAX_PLANNED_TASKS)


@cache
def plan_schema(task_names: tuple[str, ...] | None, steps: StepsAid = "none", min_tasks: int = 0) -> type[PlanOutput]:
    """`PlanOutput` whose task names are an enum of `task_names` (None: any name) and whose length is bounded: a
    constrained decoder can neither invent a task nor loop. With the `steps` aid, the words come before the
    tasks they explain. `min_tasks` 1 rules out the empty plan, for a fix pass whose problem was that plan."""
    if task_names is None and steps == "none" and not min_tasks:
        return PlanOutput
    # Fields of later bases come first in the schema, so the steps precede what they explain.
    task_bases: tuple[type[BaseModel], ...] = (PlannedTask, StepFirst) if steps == "inline" else (PlannedTask,)
    task_fields: dict[str, Any] = {} if task_names is None else {"task": (Literal[task_names], ...)}
    named_task = create_model("PlannedTask", __base__=task_bases, **task_fields)
    output_bases: tuple[type[BaseModel], ...] = (PlanOutput, StepsFirst) if steps == "first" else (PlanOutput,)
    tasks = (list[named_task], Field(min_length=min_tasks or None, max_length=MAX_PLANNED_TASKS))  # type: ignore[valid-type]
    return cast("type[PlanOutput]", create_model("PlanOutput", __base__=output_bases, tasks=tasks))


def demo_reply(plan: Sequence[Mapping[str, Any]], steps: StepsAid = "none") -> str:
    """A demo's plan as the planner should answer it: with each task's step inline, the steps listed first, or
    without steps."""
    words = [str(task.get("step", "")) for task in plan]
    bare = [{key: value for key, value in task.items() if key != "step"} for task in plan]
    if steps == "inline":
        return json.dumps([{"step": step, **task} for step, task in zip(words, bare, strict=True)])
    if steps == "first":
        return json.dumps({"steps": words, "tasks": bare})
    return json.dumps(bare)


def plan_items(reply_text: str) -> list[Any]:
    """The list of task objects in a plain-text reply: a bare list, or an object holding one under `tasks`."""
    return reply_plan(extract_json(reply_text))


def reply_plan(value: Any) -> list[Any]:
    """The list of task objects in a parsed reply: a bare list, or an object holding one under `tasks`. Steps listed
    first (the `steps` aid "first") go into their tasks as each one's `"step"`, as inline steps are written, when
    there is one step per task: the step vote and the fix pass's guard read them there."""
    if isinstance(value, dict):
        steps = value.get("steps")
        value = value.get("tasks", value.get("plan", [value] if "task" in value else None))
        if isinstance(value, list) and isinstance(steps, list) and len(steps) == len(value):
            value = [
                {"step": step, **task} if isinstance(task, dict) and isinstance(step, str) else task
                for step, task in zip(steps, value, strict=True)
            ]
    if not isinstance(value, list):
        raise ValueError(f"the plan is not a list of tasks: {json.dumps(value)[:120]}")
    return value
