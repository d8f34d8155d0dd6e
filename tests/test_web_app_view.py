"""What the web page makes of a run's stream (hugginggraph.web_app_view), from scripted stream items: no graph, no
Gradio, no browser."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage
from langgraph.types import Interrupt, Overwrite

from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.nodes.approval import ApprovalRequest, ProposedTask
from hugginggraph.tools.artifacts import Artifact
from hugginggraph.web_app_view import (
    Media,
    Message,
    RunView,
    conversation,
    earlier_turns,
    media_of,
    phase,
    plan_dag,
    question_text,
    task_table,
)

PLAN = [
    Task(id=0, task="automatic-speech-recognition", args={"audio": "/w/memo.wav"}),
    Task(id=1, task="text-to-speech", dep=[0], args={"text": "<GENERATED>-0"}),
]
SPOKEN = Artifact(kind="audio", path="/a/task-1-speech.wav")


def finished(task_id: int, status: str = "ok", **fields: Any) -> tuple[str, dict[str, Any]]:
    result = TaskResult(task_id=task_id, task=PLAN[task_id].task, status=status, **fields)
    return "custom", {"event": "task_finished", "task_id": task_id, "status": status, "result": result.model_dump()}


def started(task_id: int, early: bool = False) -> tuple[str, dict[str, Any]]:
    return "custom", {"event": "task_started", "task_id": task_id, "task": PLAN[task_id].task, "early": early}


def token(text: str, node: str = "respond") -> tuple[str, Any]:
    return "messages", (AIMessageChunk(content=text), {"langgraph_node": node})


def chose(task_id: int, *models: str) -> tuple[str, dict[str, Any]]:
    choice = ModelChoice(task_id=task_id, model_ids=list(models), reason="most downloaded", asked_llm=False)
    return "updates", {"select": {"choices": {task_id: choice}}}


VALIDATED = ("updates", {"validate": {"plan": PLAN, "plan_repairs": ["dependencies derived from references"]}})


def fed(*items: tuple[str, Any], request: str = "Transcribe memo.wav and read it aloud") -> RunView:
    view = RunView(request, [Media("audio", "/w/memo.wav")])
    for mode, chunk in items:
        view.feed(mode, chunk)
    return view


def snapshot(values: dict[str, Any], interrupts: tuple[Any, ...] = (), next_nodes: tuple[str, ...] = ()) -> Any:
    return SimpleNamespace(values=values, interrupts=interrupts, next=next_nodes)


def test_a_run_reads_as_the_request_its_tasks_their_outputs_and_the_streamed_answer():
    view = fed(VALIDATED, chose(0, "whisper"), chose(1, "piper"), started(0))
    assert phase(view) == "Running the tasks: 0 of 2 ended."
    bubbles = conversation(view)
    assert bubbles[:2] == [
        Message("user", "Transcribe memo.wav and read it aloud"),
        Message("user", media=Media("audio", "/w/memo.wav")),
    ]
    assert bubbles[2] == Message(
        "assistant", "", title="[0] automatic-speech-recognition", log="running (whisper)", pending=True
    )
    assert bubbles[3].log == "waiting" and not bubbles[3].pending

    for mode, chunk in [
        finished(0, text="hello there", model_id="whisper", started_at=10.0, finished_at=12.5),
        started(1),
        finished(1, text=SPOKEN.path, artifacts=[SPOKEN], model_id="piper", started_at=12.5, finished_at=13.0),
        token("I read it "),
        token('{"model_id": "x"}', node="select"),  # the controller's JSON at another stage: not the answer
        token("aloud."),
    ]:
        view.feed(mode, chunk)
    bubbles = conversation(view)
    assert bubbles[2] == Message(
        "assistant", "hello there", title="[0] automatic-speech-recognition", log=("done in 2.5 s (whisper)")
    )
    assert bubbles[4] == Message("assistant", media=Media("audio", SPOKEN.path))  # the output, after its task
    assert bubbles[-1] == Message("assistant", "I read it aloud.")
    assert phase(view) == "Writing the answer…"


def test_the_final_answer_replaces_the_streamed_one_and_the_run_is_answered():
    view = fed(VALIDATED, token("See /made/up.wav"))
    view.end(snapshot({"answer": "See [no such file: /made/up.wav]"}))
    assert conversation(view)[-1] == Message("assistant", "See [no such file: /made/up.wav]")
    assert phase(view) == "Answered." and view.ended


def test_a_task_that_started_while_the_planner_wrote_shows_as_running_once_the_plan_comes():
    view = fed(started(0, early=True), VALIDATED)
    assert [row.state for row in view.rows.values()] == ["running", "waiting"]


def test_failures_skips_and_doomed_tasks_say_why():
    doomed = TaskResult(task_id=1, task="text-to-speech", status="failed", error="no model for text-to-speech")
    view = fed(
        ("updates", {"validate": {"plan": PLAN, "results": Overwrite({1: doomed})}}),
        finished(0, "skipped", error="a dependency failed"),
    )
    assert [row.status() for row in view.rows.values()] == [
        "skipped: a dependency failed",
        "failed: no model for text-to-speech",
    ]
    assert [bubble.text for bubble in conversation(view)[2:]] == ["a dependency failed", "no model for text-to-speech"]


def test_the_dag_colours_each_task_by_its_state_and_draws_its_dependencies():
    assert plan_dag(fed()) == ""  # no plan yet
    dag = plan_dag(fed(VALIDATED, started(0)))
    assert dag.startswith("```mermaid\nflowchart LR\n") and dag.endswith("\n```")
    assert '  t0["0: automatic-speech-recognition<br/>running"]:::running' in dag.splitlines()
    assert '  t1["1: text-to-speech<br/>waiting"]:::waiting' in dag.splitlines()
    assert "  t0 --> t1" in dag.splitlines()
    assert "  classDef running fill:#ffe08a,stroke:#555555" in dag.splitlines()
    empty = fed(("updates", {"validate": {"plan": [], "plan_repairs": []}}))
    assert plan_dag(empty) == "No task needed: the controller answers directly."


def test_the_table_has_a_row_per_task_with_its_model_status_and_output():
    view = fed(VALIDATED, chose(0, "whisper", "whisper-tiny"), finished(0, text="x" * 200, model_id="whisper"))
    first, second = task_table(view)
    # A file argument by its name: validation made it an absolute path in the thread's workspace.
    assert first[:6] == ["0", "automatic-speech-recognition", "audio=memo.wav", "", "whisper", "done (whisper)"]
    assert first[6] == "x" * 120 + "…"
    assert second[:5] == ["1", "text-to-speech", "text=<GENERATED>-0", "0", ""]


def test_random_weights_are_labelled_as_noise():
    view = fed(VALIDATED, finished(0, text="zz", model_id="tiny", random_weights=True))
    assert view.rows[0].status() == "done (tiny, random weights: noise, not a result)"


def test_a_paused_run_shows_the_question_and_asks_nothing_once_answered():
    asked = ApprovalRequest(
        tasks=[
            ProposedTask(
                id=0, task="summarization", args={"text": "a|b\n<GENERATED>-1"}, model="s", candidates=["s", "s2"]
            ),
            ProposedTask(id=1, task="text-to-image", cannot_run="no model for text-to-image"),
        ],
        repairs=["task 1 renamed"],
        problem="task 0: the catalog has no summarization model 'nope'",
    )
    view = fed(VALIDATED)
    view.end(snapshot({}, interrupts=(Interrupt(value=asked.model_dump(mode="json")),)))
    assert view.question == asked and phase(view) == "Waiting for your approval."
    assert conversation(view)[-1].text.startswith("Waiting for your approval")
    text = question_text(asked).splitlines()
    assert text[2] == "| 0 | summarization | text=a\\|b &lt;GENERATED>-1 | s (fallbacks: s2) |"
    assert text[3] == "| 1 | text-to-image |  | cannot run: no model for text-to-image |"
    assert "Repaired: task 1 renamed" in text
    assert text[-1] == "**Your last answer was not applied:** task 0: the catalog has no summarization model 'nope'"
    view.end(snapshot({"answer": "Done.", "stopped": "the user rejected the plan"}))
    assert view.question is None and phase(view) == "Stopped: the user rejected the plan"


def test_a_saved_state_restores_as_if_it_had_streamed():
    result = TaskResult(task_id=0, task=PLAN[0].task, status="ok", text="hi", model_id="whisper")
    choice = ModelChoice(task_id=0, model_ids=["whisper"], reason="only", asked_llm=False)
    view = RunView("again")
    view.restore({"plan": PLAN, "choices": {0: choice}, "results": {0: result}})
    assert [row.status() for row in view.rows.values()] == ["done (whisper)", "waiting"]
    nothing = RunView("new turn")
    nothing.restore({"request": "new turn", "files": []})  # a run's input: no plan yet
    assert not nothing.planned and phase(nothing) == "Planning…"


def test_a_run_cut_off_says_how_to_finish_it_and_a_plan_error_says_why():
    cut = fed(VALIDATED)
    cut.end(snapshot({}, next_nodes=("execute",)))
    assert "hugginggraph resume THREAD" in phase(cut) and not cut.ended
    failed = fed()
    failed.end(snapshot({"answer": "I could not plan it.", "plan_error": "the planner wrote no JSON"}))
    assert phase(failed) == "No plan: the planner wrote no JSON"


def test_earlier_turns_are_the_chat_before_the_last_request():
    messages = [HumanMessage("first"), AIMessage("one"), HumanMessage("second"), AIMessage("two")]
    assert earlier_turns(messages) == [Message("user", "first"), Message("assistant", "one")]
    assert earlier_turns([]) == []


def test_files_get_the_player_their_type_calls_for():
    kinds = [media_of(name).kind for name in ("a.png", "b.JPG", "c.wav", "d.mp3", "e.mp4", "f.txt", "g")]
    assert kinds == ["image", "image", "audio", "audio", "video", "file", "file"]


def test_a_plan_sent_again_keeps_the_outcomes_of_tasks_that_ran():
    view = fed(VALIDATED, finished(0, text="hello", model_id="whisper"), VALIDATED)
    assert [row.state for row in view.rows.values()] == ["ok", "waiting"]


def test_what_the_cli_would_print_of_an_event_the_view_keeps_nothing_for_is_a_note_in_the_chat():
    view = fed(VALIDATED)
    view.line("Replanned after task 1 did not finish: 1 new task.")
    view.line()  # the CLI's blank lines are not notes
    assert view.notes == ["Replanned after task 1 did not finish: 1 new task."]
    assert conversation(view)[-1] == Message("assistant", "Replanned after task 1 did not finish: 1 new task.")
