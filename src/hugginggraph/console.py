"""What the command line prints while a run goes: the plan, each task as it starts and ends, the answer as the
controller writes it, the files.

`RunPrinter` reads the graph's stream and says it in plain lines, which read the same everywhere (a pipe, a log, the
CLI tests); the answer streams there too, on the line after `Answer:`. In a terminal, hugginggraph.console_live draws
the same stream with rich; the wording here (a task's model, a replan, a result's maker) is shared by both.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import IO, Any

from langchain_core.messages import AIMessageChunk, BaseMessage
from langgraph.types import Overwrite

from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.nodes.approval import ApprovalRequest, ProposedTask

OUTPUT_CHARS = 300
ANSWER_NODE = "respond"


def _args(task: Task | ProposedTask) -> str:
    return "  ".join(f"{key}={value}" for key, value in task.args.items())


def model_note(task: ProposedTask) -> str:
    """What would run a proposed task, as the approval question shows it: its model, or why none can."""
    if task.cannot_run:
        return f"cannot run: {task.cannot_run}"
    others = f" (fallbacks: {', '.join(task.candidates[1:])})" if task.candidates[1:] else ""
    return f"model {task.model}{others}" if task.model else "no model yet"


def one_line(text: str | None, limit: int = OUTPUT_CHARS) -> str:
    """A task's output cut to one line, the room a progress line or a table cell has."""
    text = (text or "").replace("\n", " ")
    return text[:limit] + ("…" if len(text) > limit else "")


def how_chosen(choice: ModelChoice) -> str:
    """Why this model: the controller's reason, said to be its; any other choice's reason says who made it ("the
    only candidate", "chosen by the user")."""
    return f"chosen by the controller: {choice.reason}" if choice.asked_llm else choice.reason


RANDOM_WEIGHTS_LABEL = "random weights: noise, not a result"


def made_by(result: TaskResult) -> str:
    """The model that made a result, labelled when its weights are random."""
    return f"{result.model_id}, {RANDOM_WEIGHTS_LABEL}" if result.random_weights else str(result.model_id)


def output_files(state: Mapping[str, Any]) -> list[str]:
    """The files the run's tasks wrote, shown last so the user knows where to look."""
    results: Mapping[int, TaskResult] = state.get("results", {})
    return [artifact.path for result in results.values() for artifact in result.artifacts]


def _replaced(value: Any) -> Any:
    """An update's value, unwrapped from the `Overwrite` a node uses to replace a key rather than merge into it."""
    return value.value if isinstance(value, Overwrite) else value


def replan_note(failed: list[int], added: int) -> str:
    """What a replan did, in one sentence: which tasks it replaced and whether it found another way."""
    tasks = f"task{'s' if len(failed) != 1 else ''} {', '.join(map(str, failed))}"
    news = f"{added} new task{'s' if added != 1 else ''}" if added else "no other way was found"
    return f"Replanned after {tasks} did not finish: {news}."


class RunPrinter:
    """Turns the graph's stream (updates, custom task events, messages) into plain lines on `out`."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout
        self.tasks: dict[int, Task] = {}
        self.streamed: str | None = None
        """The answer as streamed so far; None until its first token."""
        self.plan_error: str | None = None
        """Why the run has no plan, once the planning or validation stage said so."""

    def line(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def feed(self, mode: str, chunk: Any) -> None:
        """One item of `graph.astream(..., stream_mode=["updates", "custom", "messages"])`, as the CLI and the web
        app stream a run."""
        if mode == "messages":
            self.message(*chunk)
        elif mode == "custom":
            self.event(chunk)
        else:
            for node, update in chunk.items():
                self.update(node, update)

    def update(self, node: str, update: Mapping[str, Any] | None) -> None:
        """One node's state update from `stream_mode="updates"`; `approve` sends the plan again after an edit."""
        if not update:
            return
        if "plan_error" in update:  # the planning stage sets it on every turn, None when it planned
            self.plan_error = update["plan_error"]
        if node in ("validate", "approve") and "plan" in update:
            self.plan(update["plan"], update.get("plan_repairs", []), _replaced(update.get("results", {})))
        if node in ("select", "approve"):
            for choice in _replaced(update.get("choices", {})).values():
                self.choice(choice)
        if node == "select":
            for result in update.get("results", {}).values():
                self.finished(result)

    def message(self, message: BaseMessage, metadata: Mapping[str, Any]) -> None:
        """One item of `stream_mode="messages"`: a token of the answer is shown as it comes. Whole messages (a
        model that does not stream, the node's saved answer) and other stages' tokens are left to the updates."""
        if metadata.get("langgraph_node") == ANSWER_NODE and isinstance(message, AIMessageChunk) and message.text:
            self.token(message.text)

    def token(self, text: str) -> None:
        if self.streamed is None:
            self.streamed = ""
            self.line()
            self.line("Answer:")
        self.streamed += text
        self.out.write(text)
        self.out.flush()

    def plan(self, plan: list[Task], repairs: list[str], doomed: Mapping[int, TaskResult]) -> None:
        self.tasks = {task.id: task for task in plan}
        count = f"{len(plan)} task{'s' if len(plan) != 1 else ''}"
        self.line(f"Plan ({count}):" if plan else self.empty_plan_line())
        for task in plan:
            after = f"  (after {', '.join(map(str, task.dep))})" if task.dep else ""
            self.line(f"  [{task.id}] {task.task}  {_args(task)}{after}")
        for note in repairs:
            self.line(f"  repaired: {note}")
        for result in doomed.values():
            self.line(f"  cannot run [{result.task_id}]: {result.error}")

    def empty_plan_line(self) -> str:
        """An empty plan is a direct answer, unless planning failed: then the answer says why."""
        return "Plan: none, planning failed." if self.plan_error else "Plan: no task needed, answering directly."

    def choice(self, choice: ModelChoice) -> None:
        self.line(f"[{choice.task_id}] model {choice.model_ids[0]} ({how_chosen(choice)})")

    def approval(self, request: ApprovalRequest) -> None:
        """The question of a run paused for approval: each task with the model that would run it."""
        self.line()
        self.line("Waiting for your approval:")
        for task in request.tasks:
            self.line(f"  [{task.id}] {task.task}  {_args(task)}  {model_note(task)}")
        for note in request.repairs:
            self.line(f"  repaired: {note}")
        if request.problem:
            self.line(f"  Your last answer was not applied: {request.problem}")

    def event(self, event: Mapping[str, Any]) -> None:
        """A task event from `stream_mode="custom"`."""
        if event.get("event") == "task_started":
            self.started(event["task_id"], event["task"])
        elif event.get("event") == "task_finished":
            self.finished(TaskResult.model_validate(event["result"]))
        elif event.get("event") == "replanned":
            self.replanned(event["failed"], len(event["tasks"]))

    def replanned(self, failed: list[int], added: int) -> None:
        self.line(replan_note(failed, added))

    def started(self, task_id: int, task: str) -> None:
        self.line(f"[{task_id}] {task} started")

    def finished(self, result: TaskResult) -> None:
        if result.status == "ok":
            took = f", {result.duration_s:.1f} s" if result.duration_s is not None else ""
            self.line(f"[{result.task_id}] {result.task} ok ({made_by(result)}{took}): {one_line(result.text)}")
        else:
            self.line(f"[{result.task_id}] {result.task} {result.status}: {result.error}")

    def outcome(self, state: Mapping[str, Any], thread_id: str) -> None:
        """The end of a run: the answer (unless it streamed as it is), the files, how to come back to it."""
        answer = state.get("answer", "(no answer)")
        if self.streamed is None:
            self.line()
            self.line("Answer:")
            self.line(answer)
        else:
            self.line()  # ends the streamed answer's last line
            lead = self.streamed.strip()
            if answer.startswith(lead):  # the report of each task follows the streamed lead
                if rest := answer[len(lead) :].strip():
                    self.line()
                    self.line(rest)
            else:  # its file paths were checked, or the controller failed on the way
                self.line()
                self.line("Final answer:")
                self.line(answer)
        files = output_files(state)
        if files:
            self.line()
            self.line("Files:")
            for path in files:
                self.line(f"  {path}")
        self.line()
        self.line(f"Thread {thread_id}: `hugginggraph history {thread_id}` shows its steps.")

    def close(self) -> None:
        """Called once the stream ends, however it ends."""


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
