"""What the web page shows of a run, worked out from the graph's stream with no web framework in sight.

`RunView` reads the stream the command line reads (docs/streaming.md) with the CLI's own decoding: it is a
`RunPrinter` that keeps what it is told instead of printing it. The functions below turn it into what the page
draws: the conversation (the request and its files, each task's status and outputs, the answer as it streams), the
plan as a DAG, the tasks' table, the approval question and a one-line status. Keeping them free of Gradio lets the
tests drive them with scripted events, and keeps the layout (hugginggraph.web_app) a thin face.
"""

from __future__ import annotations

import mimetypes
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.types import StateSnapshot

from hugginggraph.console import RANDOM_WEIGHTS_LABEL, RunPrinter
from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.nodes.approval import ApprovalRequest
from hugginggraph.plots import STATUS_COLOURS
from hugginggraph.tools.tasks import MEDIA_MODALITIES

MediaKind = Literal["image", "audio", "video", "file"]
RowState = Literal["waiting", "running", "ok", "failed", "skipped"]

RUNNING_COLOUR = "#ffe08a"
OUTPUT_CHARS = 120
TABLE_COLUMNS = ["id", "task", "arguments", "after", "model", "status", "output"]
_PLAYED: dict[str, MediaKind] = {"image": "image", "audio": "audio", "video": "video"}


@dataclass(frozen=True)
class Media:
    """A file the page shows inline: an input the user gave, or an output a task wrote."""

    kind: MediaKind
    path: str


def media_of(path: Path | str) -> Media:
    """The file with the player its type calls for: its MIME type says, as the browser will be told."""
    kind = (mimetypes.guess_type(str(path))[0] or "").partition("/")[0]
    return Media(_PLAYED.get(kind, "file"), str(path))


@dataclass(frozen=True)
class Message:
    """One bubble of the conversation."""

    role: Literal["user", "assistant"]
    text: str = ""
    media: Media | None = None
    """A file shown in place of text."""
    title: str | None = None
    """Set on a task's bubble: the page folds it under this title, with `log` beside it."""
    log: str = ""
    pending: bool = False
    """The task is running: the page shows a spinner by its title."""


@dataclass
class TaskRow:
    """One task of the plan as the page follows it."""

    task: Task
    model: str | None = None
    started: bool = False
    result: TaskResult | None = None

    @property
    def state(self) -> RowState:
        if self.result is not None:
            return self.result.status
        return "running" if self.started else "waiting"

    def status(self) -> str:
        result = self.result
        if result is None:
            return f"running ({self.model or 'model'})" if self.started else "waiting"
        if result.status != "ok":
            return f"{result.status}: {result.error}"
        took = f" in {result.duration_s:.1f} s" if result.duration_s is not None else ""
        made_by = f"{result.model_id}, {RANDOM_WEIGHTS_LABEL}" if result.random_weights else result.model_id
        return f"done{took} ({made_by})"


class RunView(RunPrinter):
    """One turn of a thread as the page shows it: fed the stream's items (`feed`), or a saved state (`restore`)."""

    def __init__(self, request: str = "", inputs: Sequence[Media] = ()) -> None:
        super().__init__()
        self.request = request
        self.inputs = list(inputs)
        """The files the user gave with the request."""
        self.rows: dict[int, TaskRow] = {}
        self.planned = False
        """The validated plan has come (it may be empty: the controller answers directly)."""
        self.early: set[int] = set()
        """Tasks that started before the plan came (dispatch/early_starts.py)."""
        self.repairs: list[str] = []
        self.question: ApprovalRequest | None = None
        """What the run paused to ask; None while it is not waiting for the user."""
        self.answer: str | None = None
        """The final answer, once the run has ended."""
        self.stopped: str | None = None
        self.plan_error: str | None = None
        self.ended = False
        self.unfinished = False
        """A saved run that was cut off (its process ended) rather than paused or done."""
        self.notes: list[str] = []
        """What the CLI's printer says of events this view keeps no state for (a replan, say): the page says it too."""

    def line(self, text: str = "") -> None:
        if text:
            self.notes.append(text)

    def restore(self, values: Mapping[str, Any]) -> None:
        """The plan, choices and results a saved state holds, as if they had streamed."""
        if "plan" in values:
            self.plan(values["plan"], values.get("plan_repairs", []), {})
        for choice in values.get("choices", {}).values():
            self.choice(choice)
        for result in values.get("results", {}).values():
            self.finished(result)

    def end(self, snapshot: StateSnapshot) -> None:
        """Where the run stands once its stream has ended: paused on a question, cut off, or done."""
        if snapshot.interrupts:
            self.approval(ApprovalRequest.model_validate(snapshot.interrupts[0].value))
        elif snapshot.next:
            self.unfinished = True
        else:
            self.outcome(snapshot.values, "")

    def plan(self, plan: list[Task], repairs: list[str], doomed: Mapping[int, TaskResult]) -> None:
        """The validated plan; sent again after an edit or a replan, it keeps the outcomes of tasks that ran."""
        self.tasks = {task.id: task for task in plan}
        kept = {task_id: row for task_id, row in self.rows.items() if row.result is not None}
        self.rows = {task.id: kept.get(task.id) or TaskRow(task, started=task.id in self.early) for task in plan}
        self.planned, self.repairs = True, list(repairs)
        for result in doomed.values():
            self.finished(result)

    def choice(self, choice: ModelChoice) -> None:
        if row := self.rows.get(choice.task_id):
            row.model = choice.model_ids[0]

    def approval(self, request: ApprovalRequest) -> None:
        self.question = request

    def started(self, task_id: int, task: str) -> None:
        if row := self.rows.get(task_id):
            row.started = True
        else:
            self.early.add(task_id)

    def finished(self, result: TaskResult) -> None:
        if row := self.rows.get(result.task_id):
            row.result = result

    def token(self, text: str) -> None:
        self.streamed = (self.streamed or "") + text

    def outcome(self, state: Mapping[str, Any], thread_id: str) -> None:
        self.answer = state.get("answer", "(no answer)")
        self.stopped, self.plan_error = state.get("stopped"), state.get("plan_error")
        self.question, self.ended = None, True


def conversation(view: RunView) -> list[Message]:
    """The turn as chat bubbles: the request and its files, a bubble per task with its outputs after it, the notes,
    then the approval notice or the answer (as streamed so far, replaced by the final one, whose file paths were
    checked)."""
    shown = [Message("user", view.request), *(Message("user", media=media) for media in view.inputs)]
    for row in view.rows.values():
        result = row.result
        text = (result.text if result.status == "ok" else result.error) if result else ""
        title = f"[{row.task.id}] {row.task.task}"
        shown.append(Message("assistant", text or "", title=title, log=row.status(), pending=row.state == "running"))
        for artifact in result.artifacts if result else []:
            shown.append(Message("assistant", media=Media(artifact.kind, artifact.path)))
    shown += [Message("assistant", note) for note in view.notes]
    if view.question is not None:
        shown.append(Message("assistant", "Waiting for your approval: the plan and its models are beside the chat."))
    if (answer := view.answer if view.answer is not None else view.streamed) is not None:
        shown.append(Message("assistant", answer))
    return shown


def earlier_turns(messages: Sequence[BaseMessage]) -> list[Message]:
    """The chat of a saved thread before its last request, as text: a state keeps the last turn's tasks and files
    only, so earlier turns come back as the words that were said."""
    asked = [i for i, message in enumerate(messages) if isinstance(message, HumanMessage)]
    before = messages[: asked[-1]] if asked else messages
    return [Message("user" if isinstance(m, HumanMessage) else "assistant", m.text) for m in before]


def phase(view: RunView) -> str:
    """One line on where the run stands."""
    if view.question is not None:
        return "Waiting for your approval."
    if view.unfinished:
        return "This run was cut off before it ended: `hugginggraph resume THREAD` finishes it."
    if view.ended:
        if view.plan_error:
            return f"No plan: {view.plan_error}"
        return f"Stopped: {view.stopped}" if view.stopped else "Answered."
    if view.streamed is not None:
        return "Writing the answer…"
    if view.planned:
        done = sum(row.result is not None for row in view.rows.values())
        return f"Running the tasks: {done} of {len(view.rows)} ended."
    return "Planning…"


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def plan_dag(view: RunView) -> str:
    """The plan as a Mermaid flowchart in Markdown, each task coloured by its state as `plots.plan_figure` colours
    them (running in yellow); empty before the plan comes."""
    if not view.planned:
        return ""
    if not view.rows:
        return "No task needed: the controller answers directly."
    lines = ["```mermaid", "flowchart LR"]
    for task_id, row in view.rows.items():
        lines.append(f'  t{task_id}["{task_id}: {_label(row.task.task)}<br/>{row.state}"]:::{row.state}')
    lines += [f"  t{dep} --> t{row.task.id}" for row in view.rows.values() for dep in row.task.dep if dep in view.rows]
    colours = {"waiting": STATUS_COLOURS[None], "running": RUNNING_COLOUR}
    colours.update({state: STATUS_COLOURS[state] for state in ("ok", "failed", "skipped")})
    lines += [f"  classDef {state} fill:{colour},stroke:#555555" for state, colour in colours.items()]
    return "\n".join([*lines, "```"])


def _short(text: str | None) -> str:
    text = (text or "").replace("\n", " ")
    return text[:OUTPUT_CHARS] + ("…" if len(text) > OUTPUT_CHARS else "")


def _arguments(args: Mapping[str, str]) -> list[str]:
    """A task's arguments as `key=value`, a file by its name: validation made media arguments absolute paths inside
    the thread's workspace, where the name is what the user uploaded and what an edit may give."""
    return [f"{key}={Path(value).name if key in MEDIA_MODALITIES else value}" for key, value in args.items()]


def task_table(view: RunView) -> list[list[str]]:
    """A row per task, in `TABLE_COLUMNS` order."""
    return [
        [
            str(task_id),
            row.task.task,
            "\n".join(_arguments(row.task.args)),
            ", ".join(map(str, row.task.dep)),
            row.model or "",
            row.status(),
            _short(row.result.text) if row.result else "",
        ]
        for task_id, row in view.rows.items()
    ]


def _cell(text: str) -> str:
    """Text as one Markdown table cell: literally, `<GENERATED>-0` included."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def question_text(request: ApprovalRequest) -> str:
    """The approval question in Markdown: each task with the model that would run it, then what was repaired and
    why the last answer was not applied."""
    lines = ["| id | task | arguments | model |", "| --- | --- | --- | --- |"]
    for task in request.tasks:
        args = "<br>".join(_cell(argument) for argument in _arguments(task.args))
        fallbacks = f" (fallbacks: {', '.join(task.candidates[1:])})" if task.candidates[1:] else ""
        model = f"cannot run: {task.cannot_run}" if task.cannot_run else f"{task.model or 'no model yet'}{fallbacks}"
        lines.append(f"| {task.id} | {task.task} | {args} | {_cell(model)} |")
    lines += [f"\nRepaired: {note}" for note in request.repairs]
    if request.problem:
        lines.append(f"\n**Your last answer was not applied:** {request.problem}")
    return "\n".join(lines)
