"""What the command line prints while a run goes: the plan, each task as it starts and ends, the answer as the
controller writes it, the files.

`printer_for` picks the form. In a terminal (rich decides: `Console.is_terminal`), rich draws the plan as a table,
a live table of the tasks' status and the answer in a panel. Anywhere else (a pipe, a log, the CLI tests) it is
plain lines, which read the same everywhere; the answer streams there too, on the line after `Answer:`.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from langchain_core.messages import AIMessageChunk, BaseMessage
from langgraph.types import Overwrite
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.nodes.approval import ApprovalRequest, ProposedTask

OUTPUT_CHARS = 300
ANSWER_NODE = "respond"


def _args(task: Task | ProposedTask) -> str:
    return "  ".join(f"{key}={value}" for key, value in task.args.items())


def _model(task: ProposedTask) -> str:
    if task.cannot_run:
        return f"cannot run: {task.cannot_run}"
    others = f" (fallbacks: {', '.join(task.candidates[1:])})" if task.candidates[1:] else ""
    return f"model {task.model}{others}" if task.model else "no model yet"


def _cut(text: str | None, limit: int = OUTPUT_CHARS) -> str:
    text = (text or "").replace("\n", " ")
    return text[:limit] + ("…" if len(text) > limit else "")


def _how(choice: ModelChoice) -> str:
    """Why this model: the controller's reason, said to be its; any other choice's reason says who made it ("the
    only candidate", "chosen by the user")."""
    return f"chosen by the controller: {choice.reason}" if choice.asked_llm else choice.reason


RANDOM_WEIGHTS_LABEL = "random weights: noise, not a result"


def _made_by(result: TaskResult) -> str:
    """The model that made a result, labelled when its weights are random."""
    return f"{result.model_id}, {RANDOM_WEIGHTS_LABEL}" if result.random_weights else str(result.model_id)


def _files(state: Mapping[str, Any]) -> list[str]:
    results: Mapping[int, TaskResult] = state.get("results", {})
    return [artifact.path for result in results.values() for artifact in result.artifacts]


def _replaced(value: Any) -> Any:
    """An update's value, unwrapped from the `Overwrite` a node uses to replace a key rather than merge into it."""
    return value.value if isinstance(value, Overwrite) else value


def _replan_note(failed: list[int], added: int) -> str:
    tasks = f"task{'s' if len(failed) != 1 else ''} {', '.join(map(str, failed))}"
    news = f"{added} new task{'s' if added != 1 else ''}" if added else "no other way was found"
    return f"Replanned after {tasks} did not finish: {news}."


def printer_for(out: IO[str] | None = None) -> RunPrinter:
    """Rich output when `out` (default: stdout) is a terminal, plain lines otherwise."""
    console = Console(file=out or sys.stdout)
    return RichRunPrinter(console) if console.is_terminal else RunPrinter(out)


class RunPrinter:
    """Turns the graph's stream (updates, custom task events, messages) into plain lines on `out`."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout
        self.tasks: dict[int, Task] = {}
        self.streamed: str | None = None
        """The answer as streamed so far; None until its first token."""

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
        self.line(f"Plan ({count}):" if plan else "Plan: no task needed, answering directly.")
        for task in plan:
            after = f"  (after {', '.join(map(str, task.dep))})" if task.dep else ""
            self.line(f"  [{task.id}] {task.task}  {_args(task)}{after}")
        for note in repairs:
            self.line(f"  repaired: {note}")
        for result in doomed.values():
            self.line(f"  cannot run [{result.task_id}]: {result.error}")

    def choice(self, choice: ModelChoice) -> None:
        self.line(f"[{choice.task_id}] model {choice.model_ids[0]} ({_how(choice)})")

    def approval(self, request: ApprovalRequest) -> None:
        """The question of a run paused for approval: each task with the model that would run it."""
        self.line()
        self.line("Waiting for your approval:")
        for task in request.tasks:
            self.line(f"  [{task.id}] {task.task}  {_args(task)}  {_model(task)}")
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
        self.line(_replan_note(failed, added))

    def started(self, task_id: int, task: str) -> None:
        self.line(f"[{task_id}] {task} started")

    def finished(self, result: TaskResult) -> None:
        if result.status == "ok":
            took = f", {result.duration_s:.1f} s" if result.duration_s is not None else ""
            self.line(f"[{result.task_id}] {result.task} ok ({_made_by(result)}{took}): {_cut(result.text)}")
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
        files = _files(state)
        if files:
            self.line()
            self.line("Files:")
            for path in files:
                self.line(f"  {path}")
        self.line()
        self.line(f"Thread {thread_id}: `hugginggraph history {thread_id}` shows its steps.")

    def close(self) -> None:
        """Called once the stream ends, however it ends."""


@dataclass
class _Row:
    """One task in the live table."""

    task: Task
    model: str | None = None
    note: str = ""
    started: float | None = None
    result: TaskResult | None = None

    def status(self, now: float) -> Text:
        result = self.result
        if result is None:
            if self.started is None:
                return Text("waiting", style="dim")
            return Text(f"running ({self.model or 'model'}) {now - self.started:.0f} s", style="cyan")
        if result.status == "ok":
            took = f" in {result.duration_s:.1f} s" if result.duration_s is not None else ""
            return Text.assemble((f"done{took}", "green"), (f" ({_made_by(result)})", "dim"))
        return Text(f"{result.status}: {result.error}", style="red" if result.status == "failed" else "yellow")

    def output(self) -> Text:
        if self.result is not None and self.result.status == "ok":
            return Text(_cut(self.result.text, 120))
        return Text(self.note, style="dim italic")


class RichRunPrinter(RunPrinter):
    """The same stream drawn with rich, for a terminal: the plan, then one live view of the tasks' status and the
    answer's panel as its tokens arrive, then the files."""

    def __init__(self, console: Console) -> None:
        super().__init__(console.file)
        self.console = console
        self.rows: dict[int, _Row] = {}
        self.early: dict[int, float] = {}
        """When tasks started that began before the plan was shown (dispatch/early_starts.py)."""
        self.answer: str | None = None
        """The final answer, once the run has ended."""
        self.live: Live | None = None

    def plan(self, plan: list[Task], repairs: list[str], doomed: Mapping[int, TaskResult]) -> None:
        self.tasks = {task.id: task for task in plan}
        # A replan's plan holds the tasks that already ran: their outcomes stay on the table.
        self.rows = {task.id: old if (old := self.rows.get(task.id)) and old.result else _Row(task) for task in plan}
        for task_id, started in self.early.items():
            if row := self.rows.get(task_id):
                row.started = started
        if not plan:
            self.console.print("Plan: no task needed, answering directly.")
        else:
            table = Table(title=f"Plan ({len(plan)} task{'s' if len(plan) != 1 else ''})", title_justify="left")
            for column in ("id", "task", "args", "after"):
                table.add_column(column)
            for task in plan:
                args = "\n".join(f"{key}={value}" for key, value in task.args.items())
                table.add_row(str(task.id), task.task, Text(args), ", ".join(map(str, task.dep)))
            self.console.print(table)
        for note in repairs:
            self.console.print(Text.assemble(("repaired: ", "yellow"), note))
        for result in doomed.values():
            self.finished(result)
        if plan:
            self._live()

    def choice(self, choice: ModelChoice) -> None:
        if row := self.rows.get(choice.task_id):
            row.model, row.note = choice.model_ids[0], _how(choice)
            self._refresh()

    def approval(self, request: ApprovalRequest) -> None:
        table = Table(title="Waiting for your approval", title_justify="left")
        for column in ("id", "task", "args", "model"):
            table.add_column(column)
        for task in request.tasks:
            args = "\n".join(f"{key}={value}" for key, value in task.args.items())
            table.add_row(str(task.id), task.task, Text(args), Text(_model(task)))
        self.console.print(table)
        for note in request.repairs:
            self.console.print(Text.assemble(("repaired: ", "yellow"), note))
        if request.problem:
            self.console.print(Text.assemble(("Your last answer was not applied: ", "red"), request.problem))

    def replanned(self, failed: list[int], added: int) -> None:
        self.console.print(Text(_replan_note(failed, added), style="yellow"))

    def started(self, task_id: int, task: str) -> None:
        if row := self.rows.get(task_id):
            row.started = time.monotonic()
            self._refresh()
        else:
            self.early[task_id] = time.monotonic()

    def finished(self, result: TaskResult) -> None:
        if row := self.rows.get(result.task_id):
            row.result = result
            self._refresh()

    def token(self, text: str) -> None:
        self.streamed = (self.streamed or "") + text
        self._live()

    def outcome(self, state: Mapping[str, Any], thread_id: str) -> None:
        self.answer = state.get("answer", "(no answer)")
        if self.live is not None:
            self.close()  # its last frame shows the final answer
        else:
            self.console.print(self._answer_panel())
        files = _files(state)
        if files:
            self.console.print("Files:", style="bold")
            for path in files:
                self.console.print(Text(f"  {path}"), soft_wrap=True)
        self.console.print(Text(f"Thread {thread_id}: `hugginggraph history {thread_id}` shows its steps.", "dim"))

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()  # draws the last frame
            self.live = None

    def _live(self) -> None:
        if self.live is None:
            self.live = Live(console=self.console, get_renderable=self.view, refresh_per_second=8)
            self.live.start()

    def _refresh(self) -> None:
        """Redraw the live view, starting it again if it was closed while the user answered a question."""
        if self.live is None:
            self._live()
        else:
            self.live.refresh()

    def view(self) -> RenderableType:
        """What the live view shows now: the tasks' table, then the answer's panel once it has begun."""
        parts: list[RenderableType] = []
        if self.rows:
            now = time.monotonic()
            table = Table(title="Tasks", title_justify="left", expand=True)
            table.add_column("id", no_wrap=True)
            table.add_column("task", no_wrap=True)
            table.add_column("status", ratio=3)
            table.add_column("output", ratio=2, no_wrap=True, overflow="ellipsis")
            for row in list(self.rows.values()):
                table.add_row(str(row.task.id), row.task.task, row.status(now), row.output())
            parts.append(table)
        if self.streamed is not None or self.answer is not None:
            parts.append(self._answer_panel())
        return Group(*parts)

    def _answer_panel(self) -> Panel:
        if self.answer is None:
            return Panel(Text(self.streamed or ""), title="Answer", title_align="left", border_style="cyan")
        return Panel(Text(self.answer), title="Answer", title_align="left", border_style="green")


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
