"""Stage 4, response generation: the controller LLM answers from the real results.

The LLM sees, per task, the model used, the output, the artifact paths and the failures. Its answer is then
checked: a file path it names must be one that exists (an artifact or an input), so a hallucinated path never
reaches the user as if it were real.

A run that stopped early (`stopped`) is answered from what was done: without the LLM when no model ran, or when
the LLM budget is spent (the plain summary), else by the LLM, told why the run stopped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hugginggraph.graph.budget import LLMBudgetSpent, LLMMeter
from hugginggraph.graph.context import HuggingGraphContext, context_of
from hugginggraph.graph.state import GraphState, TaskResult
from hugginggraph.prompts import render
from hugginggraph.tools.tasks import MEDIA_EXTENSIONS

MEDIA_PATH = re.compile(
    rf"(?<![\w/.~-])(?:~|\.{{1,2}})?[\w./\\~-]*[\w-]\.(?:{MEDIA_EXTENSIONS})\b",
    re.IGNORECASE,
)
OUTPUT_CHARS = 500


def results_for_prompt(results: list[TaskResult]) -> str:
    """The results as short labelled lines: small controllers copy JSON back instead of answering from it."""
    lines = []
    for result in results:
        model = f", model {result.model_id}" if result.model_id else ""
        lines.append(f"Task {result.task_id} ({result.task}{model}): {result.status}")
        if result.text:
            lines.append(f"  output: {result.text[:OUTPUT_CHARS]}")
        if result.artifacts:
            lines.append(f"  files: {', '.join(artifact.path for artifact in result.artifacts)}")
        if result.error:
            lines.append(f"  why: {result.error}")
    return "\n".join(lines)


def confine_paths(answer: str, real_paths: set[str]) -> str:
    """Keep file paths that exist among `real_paths`; a bare file name of a real file becomes its full path;
    anything else is marked as not a real file."""
    by_name = {Path(path).name: path for path in real_paths}

    def check(match: re.Match[str]) -> str:
        named = match.group(0)
        if named in real_paths:
            return named
        if named in by_name:
            return by_name[named]
        return f"[no such file: {named}]"

    return MEDIA_PATH.sub(check, answer)


def _real_paths(state: GraphState, results: list[TaskResult]) -> set[str]:
    paths = {artifact.path for result in results for artifact in result.artifacts if Path(artifact.path).is_file()}
    return paths | set(state.get("files", []))


async def respond(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    context = await context_of(runtime)
    update: dict[str, Any] = {}
    with LLMMeter.for_run(context.limits, state.get("llm_usage")) as meter:
        try:
            answer = await _answer(state, context.llm_for("respond"), meter)
        except LLMBudgetSpent as spent:  # what was done is reported all the same, in plain lines
            plan = state.get("plan")
            answer = plain_summary(_results(state), str(spent)) if plan else f"I could not answer: {spent}."
            update["stopped"] = str(spent)
    return {**update, "answer": answer, "messages": [AIMessage(answer)], "llm_usage": meter.usage}


def _results(state: GraphState) -> list[TaskResult]:
    results = state.get("results", {})
    return [results[task.id] for task in state.get("plan", []) if task.id in results]


async def _answer(state: GraphState, llm: BaseChatModel, meter: LLMMeter) -> str:
    """The answer, from the LLM unless it has nothing to add. Raises LLMBudgetSpent when it would need a call the
    budget does not allow."""
    results = _results(state)
    if state.get("plan_error"):
        return f"I could not carry out this request: {state['plan_error']}."
    stopped = state.get("stopped")
    if stopped and not any(result.started_at is not None for result in results):
        return f"I stopped before running any model: {stopped}."
    meter.check()
    if not state.get("plan"):
        reply = await llm.ainvoke([SystemMessage(render("chit_chat")), *state.get("messages", [])])
        return reply.text
    notes = [*state.get("plan_repairs", []), *([f"the run stopped early: {stopped}"] if stopped else [])]
    prompt = render(
        "response",
        request=state.get("request", ""),
        plan_notes="; ".join(notes) or "none",
        results=results_for_prompt(results),
    )
    try:
        reply = await llm.ainvoke([HumanMessage(prompt)])
    except LLMBudgetSpent:
        raise
    except Exception as error:  # the results are real and paid for: report them without the LLM
        return plain_summary(results, f"{type(error).__name__}: {error}")
    return confine_paths(reply.text, _real_paths(state, results))


def plain_summary(results: list[TaskResult], why: str) -> str:
    """The results in plain lines, for when the controller cannot write the answer."""
    lines = [f"The controller LLM could not write the answer ({why}). The tasks ended as follows:"]
    for result in results:
        outcome = f"{result.text} (model {result.model_id})" if result.status == "ok" else result.error
        lines.append(f"- task {result.task_id} ({result.task}) {result.status}: {outcome}")
        lines.extend(f"  {artifact.kind}: {artifact.path}" for artifact in result.artifacts)
    return "\n".join(lines)
