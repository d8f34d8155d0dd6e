"""What the command line prints while a run goes: the plan, each task as it starts and ends, the answer, the
files. Plain lines, so the output reads the same in a terminal, a pipe or a log."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from hugginggraph.graph.state import ModelChoice, Task, TaskResult

OUTPUT_CHARS = 300


def _args(task: Task) -> str:
    return "  ".join(f"{key}={value}" for key, value in task.args.items())


class RunPrinter:
    """Turns the graph's stream (updates and custom task events) into lines on `out`."""

    def __init__(self, out: TextIO = sys.stdout) -> None:
        self.out = out
        self.tasks: dict[int, Task] = {}

    def line(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def update(self, node: str, update: Mapping[str, Any] | None) -> None:
        """One node's state update from `stream_mode="updates"`."""
        if not update:
            return
        if node == "validate":
            self.plan(update.get("plan", []), update.get("plan_repairs", []), update.get("results", {}))
        elif node == "select":
            for choice in update.get("choices", {}).values():
                self.choice(choice)
            for result in update.get("results", {}).values():
                self.finished(result)

    def plan(self, plan: list[Task], repairs: list[str], doomed: Mapping[int, TaskResult]) -> None:
        self.tasks = {task.id: task for task in plan}
        count = f"{len(plan)} task{'s' if len(plan) != 1 else ''}"
        self.line(f"Plan ({count}):" if plan else "Plan: no task needed, answering directly.")
        for task in plan:
            after = f"  (after {', '.join(map(str, task.dep))})" if task.dep else ""
            self.line(f"  [{task.id}] {task.task}  {_args(task)}{after}")
        for note in repairs:
            self.line(f"  repaired: {note}")
        for result in doomed.values():
            self.line(f"  cannot run [{result.task_id}]: {result.error}")

    def choice(self, choice: ModelChoice) -> None:
        how = "chosen by the controller" if choice.asked_llm else "the only candidate"
        self.line(f"[{choice.task_id}] model {choice.model_ids[0]} ({how}: {choice.reason})")

    def event(self, event: Mapping[str, Any]) -> None:
        """A task event from `stream_mode="custom"`."""
        if event.get("event") == "task_started":
            self.line(f"[{event['task_id']}] {event['task']} started")
        elif event.get("event") == "task_finished":
            self.finished(TaskResult.model_validate(event["result"]))

    def finished(self, result: TaskResult) -> None:
        if result.status == "ok":
            took = f", {result.duration_s:.1f} s" if result.duration_s is not None else ""
            text = (result.text or "").replace("\n", " ")
            cut = text[:OUTPUT_CHARS] + ("…" if len(text) > OUTPUT_CHARS else "")
            self.line(f"[{result.task_id}] {result.task} ok ({result.model_id}{took}): {cut}")
        else:
            self.line(f"[{result.task_id}] {result.task} {result.status}: {result.error}")

    def outcome(self, state: Mapping[str, Any], thread_id: str) -> None:
        """The end of a run: the answer, the files, how to come back to it."""
        results: Mapping[int, TaskResult] = state.get("results", {})
        self.line()
        self.line("Answer:")
        self.line(state.get("answer", "(no answer)"))
        files = [artifact.path for result in results.values() for artifact in result.artifacts]
        if files:
            self.line()
            self.line("Files:")
            for path in files:
                self.line(f"  {path}")
        self.line()
        self.line(f"Thread {thread_id}: `hugginggraph history {thread_id}` shows its steps.")


def plan_json(state: Mapping[str, Any]) -> str:
    """The validated plan as `hugginggraph plan` prints it."""
    doomed = {str(task_id): result.error for task_id, result in state.get("results", {}).items()}
    return json.dumps(
        {
            "plan": [task.model_dump() for task in state.get("plan", [])],
            "repairs": state.get("plan_repairs", []),
            "cannot_run": doomed,
            "error": state.get("plan_error"),
        },
        indent=2,
        ensure_ascii=False,
    )
