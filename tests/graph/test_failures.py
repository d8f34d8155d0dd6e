"""Failures end runs cleanly through the real graph: right statuses and reasons, siblings finish, dependants of a
failure are skipped with the reason, and the answer is still written."""

from pathlib import Path

from conftest import echo


def statuses(out):
    return {task_id: result.status for task_id, result in out["results"].items()}


def classify(task_id, text="hi", dep=(-1,)):
    return {"task": "text-classification", "id": task_id, "dep": list(dep), "args": {"text": text}}


def summarize(task_id, text, dep=(-1,)):
    return {"task": "summarization", "id": task_id, "dep": list(dep), "args": {"text": text}}


async def test_a_raising_task_fails_its_dependant_is_skipped_siblings_finish(make_context, run_graph):
    plan = [classify(0), summarize(1, "boom"), classify(2, "<GENERATED>-1", dep=[1])]
    context = make_context(
        plan,
        {
            "cls": ("text-classification", echo(0.05)),
            "sum": ("summarization", echo(fail=ValueError("bad input"))),
        },
    )
    out = await run_graph(context)
    assert statuses(out) == {0: "ok", 1: "failed", 2: "skipped"}
    assert "ValueError: bad input" in out["results"][1].error
    assert len(out["results"][1].attempts) == 2  # retried once before giving up
    assert "task 1 (summarization) failed" in out["results"][2].error
    assert out["answer"]


async def test_a_task_that_only_declares_a_dependency_on_a_failing_task_still_runs(make_context, run_graph):
    # The planner listed task 1 under "dep" of task 2, but task 2 reads none of its output: it is a sibling.
    plan = [summarize(1, "boom"), classify(2, "hi", dep=[1])]
    context = make_context(
        plan, {"cls": ("text-classification", echo()), "sum": ("summarization", echo(fail=ValueError("bad input")))}
    )
    out = await run_graph(context)
    assert statuses(out) == {1: "failed", 2: "ok"}
    assert "task 2: removed dependency on task 1, whose output it does not use" in out["plan_repairs"]


async def test_a_task_past_its_timeout_fails_without_cancelling_siblings(make_context, run_graph):
    plan = [classify(0), summarize(1, "slow")]
    context = make_context(
        plan,
        {"cls": ("text-classification", echo(0.05)), "sum": ("summarization", echo(5.0))},
        task_timeout_s=0.3,
        attempts_per_model=1,
    )
    out = await run_graph(context)
    assert statuses(out) == {0: "ok", 1: "failed"}
    assert "timed out after 0.3 s" in out["results"][1].error
    assert out["results"][0].text == "cls(hi)"


async def test_a_model_that_fails_to_load_falls_back_to_the_next_candidate(make_context, run_graph):
    from hugginggraph.tools.runners.base import ModelLoadError

    context = make_context(
        [classify(0)],
        {
            "popular": (
                "text-classification",
                echo(fail=ModelLoadError("could not load popular: no weights")),
            ),
            "backup": ("text-classification", echo()),
        },
        downloads={"popular": 1000, "backup": 10},
    )
    context.llm.select = '{"model_id": "popular", "reason": "most downloaded"}'
    out = await run_graph(context)
    result = out["results"][0]
    assert result.status == "ok" and result.model_id == "backup"
    assert result.attempts == ["popular: could not load popular: no weights"]  # a load failure is not retried


async def test_unknown_task_fails_and_siblings_finish(make_context, run_graph):
    plan = [{"task": "make-coffee", "id": 0, "dep": [-1], "args": {"text": "x"}}, classify(1)]
    out = await run_graph(make_context(plan, {"cls": ("text-classification", echo())}))
    assert statuses(out) == {0: "failed", 1: "ok"}
    assert "unknown task type 'make-coffee'" in out["results"][0].error


async def test_cycle_fails_its_members_and_skips_what_hangs_below(make_context, run_graph):
    plan = [
        classify(0, "<GENERATED>-1"),
        classify(1, "<GENERATED>-0"),
        classify(2),
        classify(3, "<GENERATED>-1"),
    ]
    out = await run_graph(make_context(plan, {"cls": ("text-classification", echo())}))
    assert statuses(out) == {0: "failed", 1: "failed", 2: "ok", 3: "skipped"}
    assert "dependency cycle" in out["results"][0].error


async def test_forward_reference_is_repaired_and_runs(make_context, run_graph):
    plan = [summarize(0, "<GENERATED>-1"), classify(1)]
    context = make_context(plan, {"cls": ("text-classification", echo()), "sum": ("summarization", echo())})
    out = await run_graph(context)
    assert statuses(out) == {0: "ok", 1: "ok"}
    assert out["results"][0].text == "sum(cls(hi))"
    assert [t.id for t in out["plan"]] == [1, 0]
    assert any("reordered" in note for note in out["plan_repairs"])


async def test_missing_input_file_fails_that_task_only(make_context, run_graph, tmp_path: Path):
    plan = [
        {"task": "image-classification", "id": 0, "dep": [-1], "args": {"image": "nowhere.png"}},
        classify(1),
    ]
    context = make_context(plan, {"img": ("image-classification", echo()), "cls": ("text-classification", echo())})
    out = await run_graph(context, files=["nowhere.png"])
    assert statuses(out) == {0: "failed", 1: "ok"}
    assert "input file 'nowhere.png' not found" in out["results"][0].error


async def test_no_model_for_a_task_fails_it_with_that_reason(make_context, run_graph):
    plan = [summarize(0, "text"), classify(1)]
    out = await run_graph(make_context(plan, {"cls": ("text-classification", echo())}))
    assert statuses(out) == {0: "failed", 1: "ok"}
    error = out["results"][0].error
    assert error.startswith("no model available for task 'summarization' on this machine; ")
    assert "`--hub`" in error and "HF_TOKEN" in error and "`--models-dir FOLDER`" in error  # what would run it


async def test_unparsable_plan_ends_with_a_clear_error(make_context, run_graph):
    out = await run_graph(make_context("I would first classify the text, then...", {}))
    assert "did not return a usable plan" in out["plan_error"]
    assert out["answer"].startswith("I could not carry out this request")
    assert out.get("results", {}) == {}


async def test_empty_plan_is_answered_directly(make_context, run_graph):
    context = make_context([], {})
    out = await run_graph(context, request="hello there")
    assert out["answer"] == context.llm.chat
    assert context.llm.calls == ["plan", "chat"]
