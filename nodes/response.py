"""Stage 4, response generation: the controller LLM answers from the real results.

The LLM sees, per task, the model used, the output, the artifact paths and the failures. Its answer is then
checked: a file path it names must be one that exists (an artifact or an input), so a hallucinated path never
reaches the user as if it were real.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import GraphState, TaskResult
from hugginggraph.prompts import render

MEDIA_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?[\w./\\~-]*[\w-]\.(?:png|jpe?g|gif|bmp|webp|wav|mp3|flac|ogg|mp4|webm|avi)\b",
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
    llm = runtime.context.llm_for("respond")
    if state.get("plan_error"):
        answer = f"I could not carry out this request: {state['plan_error']}."
    elif not state.get("plan"):
        history = state.get("messages", [])
        reply = await llm.ainvoke([SystemMessage(render("chit_chat")), *history])
        answer = reply.text
    else:
        results = [state["results"][task.id] for task in state["plan"] if task.id in state.get("results", {})]
        prompt = render(
            "response",
            request=state.get("request", ""),
            plan_notes="; ".join(state.get("plan_repairs", [])) or "none",
            results=results_for_prompt(results),
        )
        try:
            reply = await llm.ainvoke([HumanMessage(prompt)])
        except Exception as error:  # the results are real and paid for: report them without the LLM
            answer = plain_summary(results, f"{type(error).__name__}: {error}")
        else:
            answer = confine_paths(reply.text, _real_paths(state, results))
    return {"answer": answer, "messages": [AIMessage(answer)]}


def plain_summary(results: list[TaskResult], why: str) -> str:
    """The results in plain lines, for when the controller cannot write the answer."""
    lines = [f"The controller LLM could not write the answer ({why}). The tasks ended as follows:"]
    for result in results:
        outcome = f"{result.text} (model {result.model_id})" if result.status == "ok" else result.error
        lines.append(f"- task {result.task_id} ({result.task}) {result.status}: {outcome}")
        lines.extend(f"  {artifact.kind}: {artifact.path}" for artifact in result.artifacts)
    return "\n".join(lines)
