"""What `hugginggraph run` prints: plain lines in a pipe, rich tables and panels in a terminal, and the answer
token by token as the controller writes it."""

from __future__ import annotations

import re
from io import StringIO
from typing import Any

import pytest
from conftest import echo
from langchain_core.messages import AIMessage, AIMessageChunk
from langgraph.checkpoint.memory import InMemorySaver
from rich.console import Console

from hugginggraph import build_graph
from hugginggraph.cli.follow import follow_run
from hugginggraph.console import RunPrinter
from hugginggraph.console_live import RichRunPrinter, printer_for
from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.tools.artifacts import Artifact

ANSWER = "The text reads as positive, with confidence."
PLAN = [
    Task(id=0, task="text-classification", args={"text": "what a fine day"}),
    Task(id=1, task="summarization", dep=[0], args={"text": "<GENERATED>-0"}),
    Task(id=2, task="text-to-speech", dep=[1], args={"text": "<GENERATED>-1"}),
]
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


def terminal() -> tuple[Console, StringIO]:
    out = StringIO()
    return Console(file=out, force_terminal=True, width=100), out


def plain_text(out: StringIO) -> str:
    """What a terminal shows, less colours and cursor moves (live frames stay, one after another)."""
    return _CONTROL.sub("", out.getvalue())


def rendered(console_printer: RichRunPrinter) -> str:
    """The live view as it stands, drawn once, wide enough that no cell wraps."""
    out = StringIO()
    Console(file=out, width=200, color_system=None).print(console_printer.view())
    return out.getvalue()


def result(task_id: int, status: str, **fields: Any) -> TaskResult:
    return TaskResult(task_id=task_id, task=PLAN[task_id].task, status=status, **fields)


@pytest.mark.parametrize(
    ("reason", "asked_llm", "shown"),
    [
        ("smallest and fastest", True, "[0] model m (chosen by the controller: smallest and fastest)"),
        ("the only candidate", False, "[0] model m (the only candidate)"),
        ("chosen by the user", False, "[0] model m (chosen by the user)"),
    ],
)
def test_a_model_choice_says_who_chose_it_once(reason: str, asked_llm: bool, shown: str):
    out = StringIO()
    RunPrinter(out).choice(ModelChoice(task_id=0, model_ids=["m"], reason=reason, asked_llm=asked_llm))
    assert out.getvalue().strip() == shown


def test_printer_for_is_plain_unless_the_output_is_a_terminal(monkeypatch: pytest.MonkeyPatch):
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)

    class Tty(StringIO):
        def isatty(self) -> bool:
            return True

    assert type(printer_for(StringIO())) is RunPrinter
    assert isinstance(printer_for(Tty()), RichRunPrinter)


def test_the_plan_is_a_table_and_each_task_moves_from_waiting_to_its_outcome():
    console, out = terminal()
    printer = RichRunPrinter(console)
    try:
        printer.plan(PLAN, ["dropped task 3: unknown task"], {})
        table = plain_text(out)
        assert "Plan (3 tasks)" in table and "repaired: dropped task 3: unknown task" in table
        assert re.search(r"id\s*┃\s*task\s*┃\s*args\s*┃\s*after", table)
        assert re.search(r"1\s*│\s*summarization\s*│\s*text=<GENERATED>-0\s*│\s*0", table)
        assert rendered(printer).count("waiting") == 3

        printer.choice(ModelChoice(task_id=0, model_ids=["tiny-cls"], reason="most downloads", asked_llm=True))
        printer.event({"event": "task_started", "task_id": 0, "task": "text-classification"})
        assert re.search(r"running \(tiny-cls\) \d+ s", rendered(printer))

        ok = result(0, "ok", text="POSITIVE 0.9", model_id="tiny-cls", started_at=10.0, finished_at=11.5)
        printer.event({"event": "task_finished", "task_id": 0, "result": ok.model_dump(mode="json")})
        printer.finished(result(1, "failed", error="every model failed; last: boom"))
        printer.finished(result(2, "skipped", error="skipped because task 1 (summarization) failed"))
        view = rendered(printer)
        assert "done in 1.5 s (tiny-cls)" in view and "POSITIVE 0.9" in view
        assert "failed: every model failed; last: boom" in view
        assert "skipped: skipped because task 1 (summarization) failed" in view
    finally:
        printer.close()


def test_a_task_started_while_the_plan_was_written_shows_as_running_once_the_plan_is_drawn():
    console, _ = terminal()
    printer = RichRunPrinter(console)
    try:
        printer.event({"event": "task_started", "task_id": 0, "task": "text-classification", "early": True})
        printer.plan(PLAN, [], {})
        assert re.search(r"running \(model\) \d+ s", rendered(printer)) and rendered(printer).count("waiting") == 2
    finally:
        printer.close()


def test_the_answer_streams_into_a_panel_and_the_files_follow():
    console, out = terminal()
    printer = RichRunPrinter(console)
    printer.plan(PLAN[:1], [], {})
    for word in ("The text ", "reads ", "as positive, ", "with confidence."):
        printer.message(AIMessageChunk(content=word), {"langgraph_node": "respond"})
    assert printer.streamed == ANSWER and "╭─ Answer" in rendered(printer)
    state = {
        "answer": ANSWER,
        "results": {0: result(0, "ok", artifacts=[Artifact(kind="audio", path="/runs/t/task-0-speech.wav")])},
    }
    printer.outcome(state, "t1")
    assert printer.live is None  # stopped: the terminal is the user's again
    shown = plain_text(out)
    last_frame = shown[shown.rindex("Tasks") :]
    assert "╭─ Answer" in last_frame and ANSWER in last_frame
    assert "Files:\n  /runs/t/task-0-speech.wav" in shown
    assert shown.rstrip().endswith("Thread t1: `hugginggraph history t1` shows its steps.")


def test_an_answer_that_did_not_stream_is_one_panel():
    console, out = terminal()
    printer = RichRunPrinter(console)
    printer.update("plan", {"plan_error": "[no plan]"})
    printer.update("validate", {"plan": []})
    printer.outcome({"answer": "I could not carry out this request: [no plan]."}, "t2")
    shown = plain_text(out)
    assert "Plan: none, planning failed." in shown and "no task needed" not in shown
    assert shown.count("I could not carry out this request: [no plan].") == 1  # brackets are text, not markup


def test_an_empty_plan_is_a_direct_answer_unless_planning_failed_on_that_turn():
    out = StringIO()
    printer = RunPrinter(out)
    for error in ("the planner did not return a usable plan", None):
        printer.update("plan", {"plan_error": error})
        printer.update("validate", {"plan": []})
    assert out.getvalue().splitlines() == ["Plan: none, planning failed.", "Plan: no task needed, answering directly."]


def test_plain_lines_stream_the_answer_once_and_only_the_answer_stage():
    out = StringIO()
    printer = RunPrinter(out)
    printer.message(AIMessageChunk(content='{"tasks": []}'), {"langgraph_node": "plan"})  # the planner's tokens
    for word in ("The text ", "reads ", "as positive, ", "with confidence."):
        printer.message(AIMessageChunk(content=word), {"langgraph_node": "respond"})
    printer.message(AIMessage(ANSWER), {"langgraph_node": "respond"})  # the node's saved answer, whole
    printer.outcome({"answer": ANSWER}, "t3")
    assert out.getvalue() == f"\nAnswer:\n{ANSWER}\n\nThread t3: `hugginggraph history t3` shows its steps.\n"


def test_plain_lines_show_the_checked_answer_when_it_differs_from_the_stream():
    out = StringIO()
    printer = RunPrinter(out)
    printer.message(AIMessageChunk(content="Saved to cat.png"), {"langgraph_node": "respond"})
    printer.outcome({"answer": "Saved to [no such file: cat.png]"}, "t4")
    lines = out.getvalue().splitlines()
    assert lines[1:3] == ["Answer:", "Saved to cat.png"]
    assert lines[lines.index("Final answer:") + 1] == "Saved to [no such file: cat.png]"


class Recorder(RunPrinter):
    """A plain printer that also logs the order things reached it in."""

    def __init__(self) -> None:
        self.shown = StringIO()
        super().__init__(self.shown)
        self.log: list[tuple[str, str]] = []

    def token(self, text: str) -> None:
        self.log.append(("token", text))
        super().token(text)

    def update(self, node: str, update: Any) -> None:
        self.log.append(("update", node))
        super().update(node, update)


async def test_the_answer_prints_token_by_token_while_the_controller_writes_it(make_context):
    plan = [{"task": "text-classification", "id": 0, "args": {"text": "what a fine day"}}]
    llm = ScriptedChatModel(plan=plan, respond=ANSWER)
    context = make_context(plan, {"c": ("text-classification", echo())}, llm=llm)
    printer = Recorder()
    state = await follow_run(build_graph(InMemorySaver()), {"request": "is it positive?"}, "t5", context, printer)
    report = "- \u201cwhat a fine day\u201d is labelled c(what a fine day)"
    assert state["answer"] == f"{ANSWER}\n\n{report}"
    tokens = [text for kind, text in printer.log if kind == "token"]
    assert tokens == ["The ", "text ", "reads ", "as ", "positive, ", "with ", "confidence."]
    # Every token was shown before the answer stage ended, not replayed from its update.
    assert printer.log.index(("token", "confidence.")) < printer.log.index(("update", "respond"))
    shown = printer.shown.getvalue()
    assert shown.count(ANSWER) == 1
    lines = shown.splitlines()
    assert lines[0] == "Plan (1 task):" and lines[lines.index("Answer:") + 1 :][:3] == [ANSWER, "", report]


async def test_a_rich_run_ends_with_the_tasks_done_and_the_answer_in_its_panel(make_context):
    plan = [{"task": "text-classification", "id": 0, "args": {"text": "what a fine day"}}]
    context = make_context(
        plan, {"c": ("text-classification", echo())}, llm=ScriptedChatModel(plan=plan, respond=ANSWER)
    )
    console, out = terminal()
    await follow_run(
        build_graph(InMemorySaver()), {"request": "is it positive?"}, "t6", context, RichRunPrinter(console)
    )
    shown = plain_text(out)
    last_frame = shown[shown.rindex("Tasks") :]
    assert re.search(r"done in \d+\.\d s \(c\)", last_frame) and "c(what a fine day)" in last_frame
    assert "╭─ Answer" in last_frame and ANSWER in last_frame


def test_the_approval_question_is_a_table_and_the_live_view_returns_after_the_answer():
    from hugginggraph.nodes.approval import ApprovalRequest, ProposedTask

    console, out = terminal()
    printer = RichRunPrinter(console)
    printer.plan(PLAN[:2], [], {})
    printer.close()  # as the CLI does before it asks
    request = ApprovalRequest(
        tasks=[
            ProposedTask(id=0, task="text-classification", args={"text": "hi"}, model="c", candidates=["c", "c2"]),
            ProposedTask(id=1, task="summarization", cannot_run="no model available for task 'summarization'"),
        ],
        problem="task 0: the catalog has no text-classification model 'nope'",
    )
    printer.approval(request)
    shown = plain_text(out)
    assert "Waiting for your approval" in shown and "model c (fallbacks: c2)" in shown
    assert "cannot run: no model available for task 'summarization'" in shown
    assert "Your last answer was not applied: task 0: the catalog has no text-classification model 'nope'" in shown
    try:
        printer.event({"event": "task_started", "task_id": 0, "task": "text-classification"})
        assert printer.live is not None and "running" in rendered(printer)
    finally:
        printer.close()
