"""Human approval through the Python API: the run pauses with the plan and its models, and the user's answer
(approve, reject, edit) decides what runs. Answers that cannot be used are asked again, never raised."""

import json
from pathlib import Path

import pytest
from conftest import echo, lead
from langgraph.types import Command

from hugginggraph import aapprove, arun, build_graph, pending_approval, sqlite_checkpointer

PLAN = [
    {"task": "text-classification", "id": 0, "args": {"text": "what a fine day"}},
    {"task": "summarization", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
]
MODELS = {
    "c": ("text-classification", echo()),
    "c2": ("text-classification", echo()),
    "s": ("summarization", echo()),
    "tts": ("text-to-speech", echo()),
}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "runs.sqlite"


@pytest.fixture
def context(make_context):
    context = make_context(PLAN, MODELS, downloads={"c": 10, "c2": 5})
    context.llm.select = '{"model_id": "c", "reason": "most downloaded"}'
    return context


async def paused(context, db):
    state = await arun("classify, then summarize", context, thread_id="t", approval=True, checkpoint_path=db)
    assert pending_approval(state) is not None
    return state


async def test_the_run_pauses_after_selection_with_the_plan_and_models(context, db):
    state = await paused(context, db)
    request = pending_approval(state)
    assert [(task.id, task.task, task.model, task.candidates) for task in request.tasks] == [
        (0, "text-classification", "c", ["c", "c2"]),
        (1, "summarization", "s", ["s"]),
    ]
    assert request.tasks[0].reason == "most downloaded" and request.tasks[1].dep == [0]
    assert request.problem is None
    assert json.loads(json.dumps(state["__interrupt__"][0].value)) == request.model_dump(mode="json")  # JSON-safe
    assert sorted(state["choices"]) == [0, 1] and context.runners[0].calls == [] and "answer" not in state


async def test_approve_runs_the_plan_as_shown(context, db):
    await paused(context, db)
    out = await aapprove("t", {"action": "approve"}, context, checkpoint_path=db)
    assert pending_approval(out) is None
    assert out["results"][1].text == "s(c(what a fine day))" and lead(out["answer"]) == "Done."


async def test_reject_ends_the_run_saying_why_and_runs_nothing(context, db):
    await paused(context, db)
    out = await aapprove("t", {"action": "reject", "feedback": "too slow"}, context, checkpoint_path=db)
    assert out["stopped"] == "the user rejected the plan: too slow"
    assert out["answer"] == "I stopped before running any model: the user rejected the plan: too slow."
    assert context.runners[0].calls == [] and context.llm.calls == ["plan", "select"]


async def test_an_edited_argument_is_what_runs(context, db):
    state = await paused(context, db)
    tasks = [task.model_dump(include={"id", "task", "dep", "args"}) for task in pending_approval(state).tasks]
    tasks[0]["args"]["text"] = "a calmer sentence"
    out = await aapprove("t", {"action": "edit", "tasks": tasks}, context, checkpoint_path=db)
    assert pending_approval(out) is None  # same task types: the chosen models stand, nothing to ask again
    assert out["results"][1].text == "s(c(a calmer sentence))"
    assert out["plan"][0].args == {"text": "a calmer sentence"}


async def test_an_edited_model_replaces_the_chosen_one_and_keeps_the_others_as_fallbacks(context, db):
    await paused(context, db)
    out = await aapprove("t", {"action": "edit", "models": {"0": "c2"}}, context, checkpoint_path=db)
    assert out["choices"][0].model_ids == ["c2", "c"] and out["choices"][0].reason == "chosen by the user"
    assert out["results"][0].model_id == "c2" and out["results"][1].text == "s(c2(what a fine day))"


async def test_a_task_whose_type_changes_is_chosen_again_and_asked_about_again(context, db):
    state = await paused(context, db)
    tasks = [task.model_dump(include={"id", "task", "dep", "args"}) for task in pending_approval(state).tasks]
    tasks[1]["task"] = "text-to-speech"
    again = await aapprove("t", {"action": "edit", "tasks": tasks}, context, checkpoint_path=db)
    request = pending_approval(again)
    chosen = [(task.task, task.model) for task in request.tasks]
    assert chosen == [("text-classification", "c"), ("text-to-speech", "tts")]
    out = await aapprove("t", {"action": "approve"}, context, checkpoint_path=db)
    assert out["results"][1].task == "text-to-speech" and out["results"][1].model_id == "tts"


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        ({"tasks": [{"task": "make-coffee", "id": 0, "args": {"text": "x"}}]}, "unknown task type 'make-coffee'"),
        ({"tasks": []}, "the edited plan cannot run: the edited plan has no task"),
        ({"models": {"0": "s"}}, "task 0: the catalog has no text-classification model 's'"),
        ({"models": {"7": "c"}}, "task 7 is not in the plan"),
    ],
)
async def test_an_invalid_edit_is_asked_again_with_the_problem_and_changes_nothing(context, db, edit, problem):
    await paused(context, db)
    again = await aapprove("t", {"action": "edit", **edit}, context, checkpoint_path=db)
    request = pending_approval(again)
    assert problem in request.problem
    assert [task.model for task in request.tasks] == ["c", "s"] and context.runners[0].calls == []
    out = await aapprove("t", {"action": "approve"}, context, checkpoint_path=db)
    assert out["results"][1].text == "s(c(what a fine day))"


async def test_a_resume_value_that_is_no_decision_is_asked_again(context, db):
    await paused(context, db)
    config = {"configurable": {"thread_id": "t"}}
    async with sqlite_checkpointer(db) as saver:
        again = await build_graph(saver).ainvoke(Command(resume={"action": "maybe"}), config, context=context)
    assert pending_approval(again).problem.startswith("not a decision: action: Input should be 'approve'")


async def test_the_python_api_refuses_a_malformed_decision_before_resuming(context, db):
    await paused(context, db)
    with pytest.raises(ValueError, match="an edit changes `tasks`, `models` or both"):
        await aapprove("t", {"action": "edit"}, context, checkpoint_path=db)


async def test_approval_with_results_mode_runs_the_models_and_writes_no_answer(context, db):
    state = await arun("r", context, thread_id="t", approval=True, mode="results", checkpoint_path=db)
    assert pending_approval(state) is not None
    out = await aapprove("t", {"action": "approve"}, context, checkpoint_path=db)
    assert out["results"][1].status == "ok" and "answer" not in out
