"""Stage 1, task planning: the controller LLM turns the request, the chat so far and the input files into a
plan in HuggingGPT's format. The plan is kept raw here; the validation stage checks and repairs it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from langgraph.types import Overwrite
from pydantic import BaseModel, Field

from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import GraphState
from hugginggraph.prompts import load_json, render
from hugginggraph.tools.llm_json import ControllerUnavailable, ask_json, extract_json
from hugginggraph.tools.tasks import TASKS


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


def task_list() -> str:
    return "\n".join(
        f"- {spec.id} ({', '.join(spec.inputs)} -> {spec.output}): {spec.description}" for spec in TASKS.values()
    )


def _user_turn(request: str, files: list[str]) -> HumanMessage:
    return HumanMessage(render("planning_request", request=request, files=", ".join(files) or "none"))


def planning_messages(request: str, files: list[str], history: Sequence[BaseMessage]) -> list[BaseMessage]:
    """System prompt, the few-shot demos as earlier turns, the chat so far, then the request."""
    messages: list[BaseMessage] = [SystemMessage(render("planning_system", task_list=task_list()))]
    for demo in load_json("planning_demos"):
        messages.append(_user_turn(demo["request"], demo["files"]))
        messages.append(AIMessage(json.dumps(demo["plan"])))
    messages.extend(history)
    messages.append(_user_turn(request, files))
    return messages


def plan_items(reply_text: str) -> list[Any]:
    """The list of task objects in a plain-text reply: a bare list, or an object holding one under `tasks`."""
    value = extract_json(reply_text)
    if isinstance(value, dict):
        value = value.get("tasks", value.get("plan", [value] if "task" in value else None))
    if not isinstance(value, list):
        raise ValueError(f"the plan is not a list of tasks: {json.dumps(value)[:120]}")
    return value


async def plan(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    request = state.get("request", "").strip()
    files = state.get("files", [])
    history = state.get("messages", [])
    if not request:
        return {"raw_plan": [], "plan_error": "the request is empty: say what you want done"}
    # A new turn on a thread starts with no choices or results: the reducers would otherwise merge old ones in.
    turn: dict[str, Any] = {
        "messages": [HumanMessage(request)],
        "plan_error": None,
        "choices": Overwrite({}),
        "results": Overwrite({}),
    }
    try:
        reply = await ask_json(runtime.context.llm_for("plan"), planning_messages(request, files, history), PlanOutput)
    except ControllerUnavailable as error:
        # Nothing can run without a controller: the user is told why and what to fix, not shown a stack trace.
        return {**turn, "raw_plan": [], "plan_error": str(error)}
    if reply.parsed is not None:
        items = [task.model_dump(exclude_none=True) for task in reply.parsed.tasks]
        return {**turn, "raw_plan": items}
    try:
        return {**turn, "raw_plan": plan_items(reply.text)}
    except ValueError as error:
        return {**turn, "raw_plan": [], "plan_error": f"the planner did not return a usable plan ({error})"}
