"""The replacement plan after failures: which tasks failed, what the controller is shown of each task's outcome, and
its proposal, renumbered after the plan's ids and without the tasks the plan holds already (finished work is reused,
failed work would fail again). The replan stage (nodes/replanning.py) runs it once per turn."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from hugginggraph.graph.state import GraphState, Task, TaskResult
from hugginggraph.planning.plan_check import check_plan
from hugginggraph.planning.plan_prompt import planning_messages
from hugginggraph.planning.planner import PlanDraft, Planner
from hugginggraph.planning.references import REFERENCE
from hugginggraph.prompts import render
from hugginggraph.tools.tasks import TaskSpec

OUTCOME_CHARS = 200
"""How much of a finished task's output the controller is shown: enough to know what it holds."""


def unfinished(state: GraphState) -> list[TaskResult]:
    """The tasks that failed or were skipped, in plan order."""
    results = state.get("results", {})
    return [result for task in state.get("plan", []) if (result := results.get(task.id)) and result.status != "ok"]


def may_replan(state: GraphState) -> bool:
    """Whether the run goes to the replan stage: something failed, nothing stopped the run, and no replan yet."""
    return bool(unfinished(state)) and not state.get("stopped") and state.get("replanned") is None


def replacement_ids(state: GraphState) -> list[int]:
    """The ids of the tasks the replan added this turn: numbered after the first plan's, they are the highest."""
    ids = sorted(task.id for task in state.get("plan", []))
    return ids[len(ids) - (state.get("replanned") or 0) :]


def outcomes(plan: list[Task], results: dict[int, TaskResult]) -> str:
    """What became of each task, one line each, as the controller is shown it."""
    lines = []
    for task in plan:
        result = results.get(task.id)
        if result is None:
            continue
        if result.status == "ok":
            lines.append(f"- task {task.id} ({task.task}) done: {(result.text or '')[:OUTCOME_CHARS]}")
        else:
            lines.append(f"- task {task.id} ({task.task}) {result.status}: {result.error}")
    return "\n".join(lines)


def renumbered(items: list[Any], taken: set[int]) -> list[Any]:
    """The replacement's tasks with ids after the plan's (`taken`), their own dependencies and `<GENERATED>-k`
    references following them. A reference to an id the replacement does not define names the plan's task of that
    id: a finished output the controller was shown."""
    next_id = max(taken, default=-1) + 1
    mapping: dict[int, int] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("id"), int) and item["id"] not in mapping:
            mapping[item["id"]] = next_id
            next_id += 1

    def moved(value: Any) -> Any:
        if isinstance(value, str):
            return REFERENCE.sub(lambda m: f"<GENERATED>-{mapping.get(int(m.group(1)), int(m.group(1)))}", value)
        return value

    renamed = []
    for item in items:
        if not isinstance(item, dict):
            continue  # validation would drop it too; no id to move
        dep = item.get("dep")
        deps = [mapping.get(d, d) if isinstance(d, int) else d for d in dep] if isinstance(dep, list) else dep
        args = item.get("args")
        renamed.append(
            {
                **item,
                "id": mapping.get(item.get("id"), item.get("id")),  # type: ignore[arg-type]
                "dep": deps,
                "args": {k: moved(v) for k, v in args.items()} if isinstance(args, dict) else args,
            }
        )
    return renamed


def unrunnable(failed: list[TaskResult]) -> set[str]:
    """Task types that failed before any model started (no model for them here): the replacement may not name
    them. Small controllers, asked for another way, were seen proposing the very task that had no model."""
    return {result.task for result in failed if result.status == "failed" and result.started_at is None}


def another_way_exists(failed: list[TaskResult], tasks: Mapping[str, TaskSpec]) -> bool:
    """Whether a replacement could do what failed: some task failed after its model started (the same type may
    work on another input), or for one that had no model here, another task type offered makes the same kind of
    output from kinds of input it had (`image-to-text` for `visual-question-answering`). Nothing draws a picture from
    words but `text-to-image`: with no model for it, asking the controller costs a call for nothing, and the 1.5B,
    asked, proposed a question about a file nobody had named."""
    offered = [spec for name, spec in tasks.items() if name not in unrunnable(failed)]
    for result in failed:
        spec = tasks.get(result.task)
        if result.status != "failed" or spec is None:
            continue  # skipped tasks wait on a failed one: what that one needs decides
        if result.started_at is not None:
            return True
        if any(other.output == spec.output and set(other.inputs) <= set(spec.inputs) for other in offered):
            return True
    return False


def repeats(items: list[Any], plan: list[Task]) -> list[Any]:
    """The replacement without tasks the plan holds already (the same type on the same inputs): one that failed
    would fail again, and one that finished has its result, which is reused, not run again."""
    tried = {(task.task, json.dumps(task.args, sort_keys=True)) for task in plan}
    return [
        item
        for item in items
        if not (isinstance(item, dict) and (item.get("task"), json.dumps(item.get("args"), sort_keys=True)) in tried)
    ]


def runnable(
    items: list[Any], plan: list[Task], workspace: Path | None, tasks: Mapping[str, TaskSpec], thread: Path | None
) -> list[Any]:
    """The replacement's tasks less those validation dooms at once (an input file that does not exist) and, in turn,
    the ones that read them: there is no second replan to mend them, and the answer would report a failure the user
    never asked for. Asked for another way to draw a picture with no model to draw, the 1.5B proposed a question
    about "counter.png", a file nobody had named."""
    shown = [task.model_dump(mode="json") for task in plan]
    while True:
        doomed = check_plan([*shown, *items], workspace, tasks, thread).doomed
        kept = [item for item in items if not (isinstance(item, dict) and item.get("id") in doomed)]
        if len(kept) == len(items):
            return kept
        items = kept


async def replacement(planner: Planner, state: GraphState, failed: list[TaskResult]) -> PlanDraft:
    """The controller's replacement: the first plan's conversation (demos, chat, request), its plan as its reply,
    then the outcomes and the question. The prompt lists every task type, as the first plan's did (so the
    controller's prompt cache serves it); the reply's schema leaves out the ones with no model here."""
    request = state.get("request", "").strip()
    files = state.get("files", [])
    plan = state.get("plan", [])
    history = planner.shown_history(state.get("messages", [])[:-1])  # the last is this turn's request
    demos = await planner.demos(request)
    aids = planner.aids
    messages = planning_messages(request, files, history, demos, planner.tasks, aids.modalities, aids.steps)
    shown = json.dumps([task.model_dump(mode="json") for task in plan])
    question = render(
        "planning_replan", outcomes=outcomes(plan, state.get("results", {})), next_id=str(max(t.id for t in plan) + 1)
    )
    excluded = unrunnable(failed)
    allowed = {name: spec for name, spec in planner.tasks.items() if name not in excluded}
    restricted = replace(planner, tasks=allowed)  # the step vote too: it would bring the type back by the words
    draft = await restricted.ask([*messages, AIMessage(shown), HumanMessage(question)])
    return await restricted.revised(draft, request)
