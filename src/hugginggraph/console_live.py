"""The command line's output in a terminal: the plan as a table, then one live view of the tasks' status and the
answer's panel as its tokens arrive, then the files.

`printer_for` picks the form. In a terminal (rich decides: `Console.is_terminal`) it is `RichRunPrinter`; anywhere
else (a pipe, a log, the CLI tests) it is hugginggraph.console's plain lines.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from hugginggraph.console import RunPrinter, how_chosen, made_by, model_note, one_line, output_files, replan_note
from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.nodes.approval import ApprovalRequest


def printer_for(out: IO[str] | None = None) -> RunPrinter:
    """Rich output when `out` (default: stdout) is a terminal, plain lines otherwise."""
    console = Console(file=out or sys.stdout)
    return RichRunPrinter(console) if console.is_terminal else RunPrinter(out)


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
            return Text.assemble((f"done{took}", "green"), (f" ({made_by(result)})", "dim"))
        return Text(f"{result.status}: {result.error}", style="red" if result.status == "failed" else "yellow")

    def output(self) -> Text:
        if self.result is not None and self.result.status == "ok":
            return Text(one_line(self.result.text, 120))
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
            self.console.print(self.empty_plan_line())
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
            row.model, row.note = choice.model_ids[0], how_chosen(choice)
            self._refresh()

    def approval(self, request: ApprovalRequest) -> None:
        table = Table(title="Waiting for your approval", title_justify="left")
        for column in ("id", "task", "args", "model"):
            table.add_column(column)
        for task in request.tasks:
            args = "\n".join(f"{key}={value}" for key, value in task.args.items())
            table.add_row(str(task.id), task.task, Text(args), Text(model_note(task)))
        self.console.print(table)
        for note in request.repairs:
            self.console.print(Text.assemble(("repaired: ", "yellow"), note))
        if request.problem:
            self.console.print(Text.assemble(("Your last answer was not applied: ", "red"), request.problem))

    def replanned(self, failed: list[int], added: int) -> None:
        self.console.print(Text(replan_note(failed, added), style="yellow"))

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
        files = output_files(state)
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
