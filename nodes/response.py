"""Stage 4, response generation: an answer from the real results, in two parts.

First a few sentences by the controller LLM that answer the request from the outputs of the tasks that succeeded
with real weights; a file path it names must be one that exists, so a hallucinated path never reaches the user as if
it were real. When every result is a file a task made (a recording, a picture), there is nothing for those sentences
to say that the report does not, and none are asked for. Then the report: one sentence per task, written by code
from its result (what it read, what it made or quoted, which files, or why it failed), so the answer never claims
work that was not done even when a small controller would, and outputs of random-weight models are labelled as
noise.

A run that stopped early (`stopped`) is answered from what was done: without the LLM when no model ran, or when
the LLM budget is spent (the report alone), else by the LLM, told why the run stopped.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path
from string import Template
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from hugginggraph.graph.budget import LLMBudgetSpent, LLMMeter
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import GraphState, Task, TaskResult
from hugginggraph.planning.references import REFERENCE
from hugginggraph.planning.replacement import replacement_ids
from hugginggraph.prompts import load_json, render
from hugginggraph.tools.llm_json import ControllerUnavailable, ask_sentences, ask_text
from hugginggraph.tools.tasks import MEDIA_EXTENSIONS, MEDIA_MODALITIES, TASKS

MEDIA_PATH = re.compile(
    rf"(?<![\w/.~-])(?:~|\.{{1,2}})?[\w./\\~-]*[\w-]\.(?:{MEDIA_EXTENSIONS})\b",
    re.IGNORECASE,
)
OUTPUT_CHARS = 500
QUOTED_CHARS = 300
"""How much of a task's output the report quotes; the rest is in the run's results."""
LEAD_SENTENCES = 2
LEAD_CHARS = 400
"""The lead is cut after two sentences or this many characters, as the prompt asks: the report that follows
quotes every output, and each token a local controller writes costs time (docs/speed.md)."""

RANDOM_WEIGHTS_NOTE = "(made by a model with random weights: this is noise, not a result)"


def results_for_prompt(results: list[TaskResult]) -> str:
    """The results as short labelled lines: small controllers copy JSON back instead of answering from it. Files go
    by their names, in the files' line and in an output that mentions them, and no model is named: the prompt asks
    for neither in the answer, and a run folder's path, unique to the run, was the longest part of the prompt a local
    controller evaluates and kept the prompt cache from holding the lines after it (`confine_paths` gives a named
    file its full path back)."""
    lines = []
    for result in results:
        paths = [artifact.path for artifact in result.artifacts]
        lines.append(f"Task {result.task_id} ({result.task}): {result.status}")
        if result.text and result.text not in paths:
            lines.append(f"  output: {_paths_as_names(result.text, paths)[:OUTPUT_CHARS]}")
        if paths:
            lines.append(f"  files: {', '.join(Path(path).name for path in paths)}")
        if result.error:
            lines.append(f"  why: {result.error}")
    return "\n".join(lines)


def _paths_as_names(text: str, paths: list[str]) -> str:
    for path in paths:
        text = text.replace(path, Path(path).name)
    return text


def confine_paths(answer: str, made: Collection[str], given: Collection[str] = ()) -> str:
    """Keep file paths that exist among the files the run `made` or was `given`. A bare name of a file it made
    becomes its full path (the user has not seen where it went); a bare name of a file it was given stays as the
    user knows it ("sign.png"), so the answer streamed is the answer kept. Anything else is marked as not a real
    file."""
    by_name = {Path(path).name: path for path in made}
    given_names = {Path(path).name for path in given}

    def check(match: re.Match[str]) -> str:
        named = match.group(0)
        if named in made or named in given or named in given_names:
            return named
        if named in by_name:
            return by_name[named]
        return f"[no such file: {named}]"

    return MEDIA_PATH.sub(check, answer)


def _made_paths(results: list[TaskResult]) -> set[str]:
    """The files the tasks wrote, which an answer may name."""
    return {artifact.path for result in results for artifact in result.artifacts if Path(artifact.path).is_file()}


def _given_paths(state: GraphState) -> set[str]:
    """The files given, and the files the plan read, which a request may name in its words ("read sign.png")
    without giving them as files: an answer may name them too."""
    read = {
        value
        for task in state.get("plan", [])
        for key, value in task.args.items()
        if key in MEDIA_MODALITIES and isinstance(value, str) and _is_file(value)
    }
    return read | set(state.get("files", []))


def _is_file(value: str) -> bool:
    """Whether `value` names a file; False for words a model wrote where a path goes, however long."""
    try:
        return Path(value).is_file()
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL in it
        return False


async def respond(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    context = runtime.context
    update: dict[str, Any] = {}
    with LLMMeter.for_run(context.limits, state.get("llm_usage")) as meter:
        try:
            answer = await _answer(state, context.llm_for("respond"), meter)
        except ControllerUnavailable as error:  # a direct answer is the controller's alone: nothing to report
            answer = f"I could not carry out this request: {error}."
            update["stopped"] = str(error)
        except LLMBudgetSpent as spent:  # what was done is reported all the same, by the report alone
            answer = _without_lead(state, str(spent)) if state.get("plan") else f"I could not answer: {spent}."
            update["stopped"] = str(spent)
    return {**update, "answer": answer, "messages": [AIMessage(answer)], "llm_usage": meter.usage}


def _results(state: GraphState) -> list[TaskResult]:
    results = state.get("results", {})
    return [results[task.id] for task in state.get("plan", []) if task.id in results]


async def _answer(state: GraphState, llm: BaseChatModel, meter: LLMMeter) -> str:
    """The lead sentences by the LLM, when every task of the plan gave a real result, then the report. Raises
    LLMBudgetSpent when it would need a call the budget does not allow."""
    results = _results(state)
    if state.get("plan_error"):
        return f"I could not carry out this request: {state['plan_error']}."
    stopped = state.get("stopped")
    if stopped and not any(result.started_at is not None for result in results):
        return f"I stopped before running any model: {stopped}."
    if not state.get("plan"):
        meter.check()
        return await ask_text(llm, [SystemMessage(render("chit_chat")), *state.get("messages", [])])
    report = _report(state)
    real = [result for result in results if result.status == "ok" and not result.random_weights]
    # A lead over partial results was seen answering the failed part from the LLM's own knowledge ("The meeting
    # starts at 10:00 AM" when the question-answering task had failed): the report alone tells no such story.
    if stopped or (len(real) < len(state.get("plan", [])) and not _replaced(state, real)) or _only_made_files(real):
        return report
    meter.check()
    notes = [*state.get("plan_repairs", []), *([f"the run stopped early: {stopped}"] if stopped else [])]
    prompt = render(
        "response",
        request=state.get("request", ""),
        plan_notes="; ".join(notes) or "none",
        results=results_for_prompt(real),
    )
    try:
        reply = await ask_sentences(llm, [HumanMessage(prompt)], LEAD_SENTENCES, LEAD_CHARS)
    except LLMBudgetSpent:
        raise
    except Exception as error:  # the results are real and paid for: report them without the LLM
        return _without_lead(state, f"{type(error).__name__}: {error}")
    lead = confine_paths(reply.strip(), _made_paths(results), _given_paths(state))
    return f"{lead}\n\n{report}" if lead else report


def _only_made_files(results: list[TaskResult]) -> bool:
    """Whether every result is a file a task made (a recording, a picture), whose text only describes it: the report
    names each file, and a lead could say nothing of its own (the 1.5B, asked about a recording it made, wrote "The
    recording shows a clear, clear, clear, ...")."""
    return all((spec := TASKS.get(result.task)) is not None and spec.output != "text" for result in results)


def _replaced(state: GraphState, real: list[TaskResult]) -> bool:
    """Whether the replan's tasks all gave real results, so the part that failed was done another way and the lead
    may speak of the results there are."""
    added = replacement_ids(state)
    return bool(added) and set(added) <= {result.task_id for result in real}


def _without_lead(state: GraphState, why: str) -> str:
    """The report alone, for when the controller cannot write the lead: the results are real and paid for."""
    return f"The controller LLM could not write the answer ({why}). The tasks ended as follows:\n{_report(state)}"


def _report(state: GraphState) -> str:
    """One sentence per task of the plan, in plan order, and why the run stopped early if it did."""
    results = state.get("results", {})
    plan = state.get("plan", [])
    tasks = {task.id: task for task in plan}
    lines = [task_sentence(task, results[task.id], tasks) for task in plan if task.id in results]
    lines += [f"Not run: task {task.id} ({task.task})." for task in plan if task.id not in results]
    if stopped := state.get("stopped"):
        lines.append(f"The run stopped early: {stopped}.")
    return "\n".join(f"- {line}" for line in lines)


def task_sentence(task: Task, result: TaskResult, plan: Mapping[int, Task]) -> str:
    """What one task did, in words: its output quoted or its files named, or what it could not do and why."""
    phrase = _PHRASES.get(task.task, _UNKNOWN_TASK)
    asked = _ASKED.fullmatch(task.args.get("text", "").strip())
    values = {
        "input": _input_words(task, plan),
        "question": f"\u201c{asked['question'].strip()}\u201d" if asked else "",
        "task": task.task,
        "output": _quoted(result.text),
        "files": ", ".join(artifact.path for artifact in result.artifacts) or "no file",
    }
    if result.status == "ok":
        sentence = Template(phrase["asked" if asked and "asked" in phrase else "did"]).safe_substitute(values)
        if result.artifacts and "$files" not in phrase["did"]:
            sentence += f" (files: {values['files']})"
        return f"{sentence} {RANDOM_WEIGHTS_NOTE}" if result.random_weights else sentence
    doing = Template(phrase["do"]).safe_substitute(values)
    opening = "I could not" if result.status == "failed" else "I did not"
    return f"{opening} {doing}: {result.error or 'no reason was given'}."


_PHRASES: dict[str, dict[str, str]] = load_json("answer_phrases")
_UNKNOWN_TASK = {"did": "$task on $input: $output", "do": "run $task on $input", "noun": "its output"}


def _input_words(task: Task, plan: Mapping[int, Task]) -> str:
    """The task's main input as the user would name it: a file's name, a short text quoted, or the earlier result
    it reads ("the transcript"); for a passage asked a question, the passage."""
    spec = TASKS.get(task.task)
    names: list[str] = [name for name in (spec.inputs if spec else ()) if name in task.args] or list(task.args)
    if not names:
        return "the request"
    value = task.args[names[0]].strip()
    if names[0] != "text" or REFERENCE.fullmatch(value):
        return _source_words(value, plan)
    if asked := _ASKED.fullmatch(value):
        return _source_words(asked["source"], plan)
    return f"\u201c{value}\u201d" if len(value) <= 60 else "the text"


_ASKED = re.compile(r"(?P<source>\S+)\s+Question:\s*(?P<question>.+)", re.IGNORECASE | re.DOTALL)
"""A passage and a question about it, as plans ask them: a file's name or an earlier result, then `Question:`
(`notes.txt Question: When does the meeting start?`; tools/artifacts.py reads the file in its place)."""


def _source_words(value: str, plan: Mapping[int, Task]) -> str:
    """An input the user would name by its file's name, or an earlier result by what it is ("the transcript")."""
    if match := REFERENCE.fullmatch(value):
        source = plan.get(int(match.group(1)))
        return _PHRASES.get(source.task, _UNKNOWN_TASK)["noun"] if source else "an earlier result"
    return Path(value).name or value


def _quoted(text: str | None) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS].rstrip() + "\u2026"
