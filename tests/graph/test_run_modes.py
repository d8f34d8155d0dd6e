"""The input key `mode`: "tasks" ends after validation, "results" before the answer, "full" (or none) goes to the
end; HuggingGPT's /tasks, /results and /hugginggpt."""

from conftest import echo, lead

PLAN = [
    {"task": "text-classification", "id": 0, "args": {"text": "hi"}},
    {"task": "summarization", "id": 1, "args": {"text": "<GENERATED>-0"}},
]
MODELS = {"c": ("text-classification", echo()), "c2": ("text-classification", echo()), "s": ("summarization", echo())}


def runner_calls(context):
    return context.runners[0].calls


async def test_tasks_mode_ends_after_validation_with_the_plan_only(make_context, run_graph):
    context = make_context(PLAN, MODELS)
    out = await run_graph(context, mode="tasks")
    assert [task.id for task in out["plan"]] == [0, 1] and out["plan"][1].dep == [0]
    assert context.llm.calls == ["plan"]  # no model was chosen, none ran, nothing was answered
    assert runner_calls(context) == []
    assert "answer" not in out and not out.get("choices") and not out.get("results")


async def test_tasks_mode_still_reports_tasks_that_cannot_run(make_context, run_graph):
    plan = [*PLAN, {"task": "make-coffee", "id": 2, "args": {"text": "x"}}]
    out = await run_graph(make_context(plan, MODELS), mode="tasks")
    assert [task.id for task in out["plan"]] == [0, 1, 2]
    assert "unknown task type 'make-coffee'" in out["results"][2].error


async def test_results_mode_chooses_and_runs_the_models_but_writes_no_answer(make_context, run_graph):
    context = make_context(PLAN, MODELS)
    out = await run_graph(context, mode="results")
    assert {task_id: result.status for task_id, result in out["results"].items()} == {0: "ok", 1: "ok"}
    assert out["results"][1].text in ("s(c(hi))", "s(c2(hi))")
    assert sorted(out["choices"]) == [0, 1]
    assert "respond" not in context.llm.calls and "answer" not in out


async def test_results_mode_with_nothing_to_run_ends_without_chatting(make_context, run_graph):
    context = make_context([], {})
    out = await run_graph(context, mode="results")
    assert context.llm.calls == ["plan"] and "answer" not in out


async def test_full_mode_and_no_mode_run_to_the_answer(make_context, run_graph):
    for thread_id, inputs in [("full", {"mode": "full"}), ("default", {})]:
        context = make_context(PLAN, MODELS)
        out = await run_graph(context, thread_id=thread_id, **inputs)
        assert lead(out["answer"]) == "Done." and context.llm.calls[-1] == "respond"


async def test_an_unknown_mode_is_a_clear_plan_error(make_context, run_graph):
    context = make_context(PLAN, MODELS)
    out = await run_graph(context, mode="plan-only")
    assert out["plan_error"] == "unknown mode 'plan-only': use one of full, tasks, results"
    assert context.llm.calls == [] and runner_calls(context) == []


async def test_each_turn_on_a_thread_runs_in_the_mode_it_is_given(make_context, run_graph):
    context = make_context(PLAN, MODELS)
    planned = await run_graph(context, thread_id="one", mode="tasks")
    assert "answer" not in planned
    full = await run_graph(context, thread_id="one", mode="full")
    assert lead(full["answer"]) == "Done." and sorted(full["results"]) == [0, 1]
