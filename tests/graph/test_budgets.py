"""Every budget in `Limits` ends a run cleanly: what was done is kept, `stopped` says why, and the answer reports
it (without the LLM when the LLM budget is what ran out). Concurrency is bounded without stopping anything."""

import asyncio
import time
from collections.abc import Iterator
from typing import Any

from conftest import echo
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from hugginggraph.testing import ScriptedChatModel
from hugginggraph.tools.runners.base import RunnerOutput

# Two candidates per task type, so that choosing a model asks the LLM.
MODELS = {
    "c": ("text-classification", echo()),
    "c2": ("text-classification", echo()),
    "s": ("summarization", echo()),
    "s2": ("summarization", echo()),
}
TWO_CHOICES = [
    {"task": "text-classification", "id": 0, "args": {"text": "hi"}},
    {"task": "summarization", "id": 1, "args": {"text": "long text"}},
]
CALLS_SPENT = "the run has used the {} controller LLM calls Limits.max_llm_calls allows"


def classify(task_id: int, text: str = "hi", dep: tuple[int, ...] = ()) -> dict[str, Any]:
    return {"task": "text-classification", "id": task_id, "dep": list(dep), "args": {"text": text}}


def ran(context) -> list[tuple[str, str]]:
    return context.runners[0].calls


class TokenReportingModel(ScriptedChatModel):
    """Reports `tokens` tokens for every reply, as OpenAI-compatible servers do."""

    tokens: int = 100

    def usage(self) -> UsageMetadata:
        return {"input_tokens": self.tokens - 10, "output_tokens": 10, "total_tokens": self.tokens}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        message = AIMessage(self._reply(messages), usage_metadata=self.usage())
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs) -> Iterator[ChatGenerationChunk]:
        """The words, then the usage in a last chunk, as OpenAI's API ends a stream that includes it."""
        yield from super()._stream(messages, stop)
        yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=self.usage()))


async def test_a_plan_longer_than_max_tasks_is_refused_before_any_model_runs(make_context, run_graph):
    context = make_context([classify(i) for i in range(3)], MODELS, max_tasks=2)
    out = await run_graph(context)
    assert out["stopped"] == "the plan has 3 tasks, more than the 2 Limits.max_tasks allows"
    assert len(out["plan"]) == 3 and not out.get("results") and ran(context) == []
    assert out["answer"] == f"I stopped before running any model: {out['stopped']}."
    assert context.llm.calls == ["plan"]


async def test_no_llm_call_is_made_past_the_call_budget(make_context, run_graph):
    context = make_context(TWO_CHOICES, MODELS, max_llm_calls=0)
    out = await run_graph(context)
    assert out["stopped"] == CALLS_SPENT.format(0)
    assert context.llm.calls == [] and out["llm_usage"] == {"calls": 0, "tokens": 0}
    assert out["answer"] == f"I stopped before running any model: {out['stopped']}."


async def test_parallel_selection_shares_the_calls_left_and_stops_when_they_do_not_cover_it(make_context, run_graph):
    context = make_context(TWO_CHOICES, MODELS, max_llm_calls=2)
    out = await run_graph(context)
    # Planning took one call; the one left went to the first task's branch, the second's was refused.
    assert context.llm.calls == ["plan", "select"] and out["llm_usage"]["calls"] == 2
    assert out["stopped"] == CALLS_SPENT.format(2)
    assert sorted(out["choices"]) == [0] and ran(context) == []
    assert out["answer"].startswith("I stopped before running any model")


async def test_when_the_answer_is_past_the_call_budget_the_results_are_summarised_without_the_llm(
    make_context, run_graph
):
    context = make_context(TWO_CHOICES[:1], MODELS, max_llm_calls=2)
    out = await run_graph(context)
    assert out["results"][0].status == "ok" and context.llm.calls == ["plan", "select"]
    assert out["stopped"] == CALLS_SPENT.format(2)
    assert out["answer"].splitlines()[0] == (
        f"The controller LLM could not write the answer ({out['stopped']}). The tasks ended as follows:"
    )
    assert out["answer"].splitlines()[1] == "- \u201chi\u201d is labelled c(hi)"


async def test_a_spent_budget_skips_the_planners_fix_pass_but_not_the_plan(make_context, run_graph):
    plan = [{"task": "image-classification", "id": 0, "args": {"image": "nowhere.png"}}, classify(1)]
    context = make_context(plan, {"c": ("text-classification", echo())}, max_llm_calls=1)
    out = await run_graph(context, files=["nowhere.png"])
    assert context.llm.calls == ["plan"]  # the fix pass would have asked again about the missing file
    assert out["results"][0].status == "failed" and out["results"][1].status == "ok"
    assert out["answer"].startswith("- I could not classify")  # a partial result needs no lead, so no call


async def test_no_llm_call_starts_once_the_token_budget_is_reached(make_context, run_graph):
    context = make_context(TWO_CHOICES, MODELS, llm=TokenReportingModel(plan=TWO_CHOICES), max_llm_tokens=100)
    out = await run_graph(context)
    assert context.llm.calls == ["plan"] and out["llm_usage"] == {"calls": 1, "tokens": 100}
    assert out["stopped"] == "the run has used the 100 controller tokens Limits.max_llm_tokens allows"
    assert ran(context) == [] and out["answer"].startswith("I stopped before running any model")


async def test_usage_adds_up_over_the_stages_of_a_run(make_context, run_graph):
    context = make_context(TWO_CHOICES, MODELS, llm=TokenReportingModel(plan=TWO_CHOICES))
    out = await run_graph(context)
    assert context.llm.calls == ["plan", "select", "select", "respond"]
    assert out["llm_usage"] == {"calls": 4, "tokens": 400} and out["stopped"] is None


async def test_a_time_limit_passed_during_planning_stops_the_run_at_validation(make_context, run_graph):
    context = make_context(TWO_CHOICES, MODELS, run_timeout_s=0)
    out = await run_graph(context)
    assert out["stopped"] == "the run reached its time limit of 0 s, Limits.run_timeout_s"
    assert context.llm.calls == ["plan"] and ran(context) == []


async def test_a_time_limit_passed_during_selection_stops_the_run_before_execution(make_context, run_graph):
    def slow_choice(messages) -> str:
        time.sleep(0.6)  # a slow controller
        return '{"model_id": "c", "reason": "slowly"}'

    context = make_context(TWO_CHOICES[:1], MODELS, run_timeout_s=0.5)
    context.llm.select = slow_choice
    out = await run_graph(context)
    assert out["stopped"] == "the run reached its time limit of 0.5 s, Limits.run_timeout_s"
    assert sorted(out["choices"]) == [0] and ran(context) == []


async def test_at_the_time_limit_running_tasks_are_cut_off_and_waiting_ones_skipped(make_context, run_graph):
    plan = [classify(0, "a"), {**classify(1, "b"), "task": "summarization"}, classify(2, "<GENERATED>-0", dep=(0,))]
    models = {"slow-c": ("text-classification", echo(30)), "slow-s": ("summarization", echo(30))}
    prompts = []
    context = make_context(plan, models, run_timeout_s=1.0, max_concurrent_tasks=1)
    context.llm.respond = lambda messages: prompts.append(messages[0].text) or "Partly done."
    started = time.monotonic()
    out = await run_graph(context)
    assert time.monotonic() - started < 10
    reason = "the run reached its time limit of 1 s, Limits.run_timeout_s"
    assert out["stopped"] == reason
    first, second = sorted((out["results"][0], out["results"][1]), key=lambda r: r.started_at is None)
    assert first.status == "failed" and first.error == f"cut off: {reason}" and first.started_at is not None
    assert second.status == "skipped" and second.error == f"not started: {reason}"  # it waited for the one slot
    assert out["results"][2].status == "skipped"
    # Nothing ran to the end, so the controller has nothing real to write about: the report says what happened.
    assert prompts == []
    assert out["answer"].splitlines()[-1] == f"- The run stopped early: {reason}."
    assert (
        sum(
            line.startswith("- I could not ") and f": cut off: {reason}." in line for line in out["answer"].splitlines()
        )
        == 1
    )


class Concurrency:
    """A scripted model that records the most calls it had running at once."""

    def __init__(self) -> None:
        self.running = self.peak = 0

    async def __call__(self, card, task, inputs, artifacts) -> RunnerOutput:
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.05)
        self.running -= 1
        return RunnerOutput(text="ok")


async def test_max_concurrent_tasks_bounds_the_models_running_at_once(make_context, run_graph):
    for limit, expected_peak in [(None, 3), (1, 1), (2, 2)]:
        model = Concurrency()
        context = make_context(
            [classify(i) for i in range(3)], {"c": ("text-classification", model)}, max_concurrent_tasks=limit
        )
        out = await run_graph(context, thread_id=f"limit-{limit}")
        assert model.peak == expected_peak
        assert [result.status for result in out["results"].values()] == ["ok"] * 3 and out["stopped"] is None


async def test_the_wait_for_the_users_approval_does_not_count_against_the_time_limit(make_context, tmp_path):
    from hugginggraph import aapprove, arun, pending_approval

    db = tmp_path / "runs.sqlite"
    context = make_context(TWO_CHOICES[:1], MODELS, run_timeout_s=1.0)
    paused = await arun("r", context, thread_id="t", approval=True, checkpoint_path=db)
    assert pending_approval(paused) is not None
    await asyncio.sleep(1.1)  # the user thinks it over for longer than the whole limit
    out = await aapprove("t", {"action": "approve"}, context, checkpoint_path=db)
    assert out["results"][0].status == "ok" and out["stopped"] is None


async def test_a_chat_reply_past_the_call_budget_says_so(make_context, run_graph):
    context = make_context([], {}, max_llm_calls=1)
    out = await run_graph(context, request="hello there")
    assert context.llm.calls == ["plan"] and out["stopped"] == CALLS_SPENT.format(1)
    assert out["answer"] == f"I could not answer: {CALLS_SPENT.format(1)}."
