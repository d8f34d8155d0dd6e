"""A model call that finished is not made again when its step runs again (a resume after a crash), even when
LangGraph lost the result: the call journal gives it back. Any other call (a new turn, a fork with other models or
inputs, a result whose file is gone) runs the model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from hugginggraph import arun, build_graph, sqlite_checkpointer
from hugginggraph.dispatch.gate import Gate
from hugginggraph.dispatch.journal import StepJournal
from hugginggraph.dispatch.model_calls import run_ready_task
from hugginggraph.graph.checkpoint import DURABILITY, checkpoint_serializer
from hugginggraph.graph.context import Limits
from hugginggraph.graph.state import ModelChoice, Task
from hugginggraph.tools.call_journal import CallJournal
from hugginggraph.tools.runners.base import RunnerOutput

TASK = Task(id=0, task="text-to-speech", args={"text": "hello"})
CHOICE = ModelChoice(task_id=0, model_ids=["a", "b"], reason="most downloaded", asked_llm=False)


class Counted:
    """A text-to-speech model that writes a file, counts its calls and fails while `failing` says so."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.failing: set[str] = set()

    async def __call__(self, card, task, inputs, artifacts) -> RunnerOutput:
        self.calls.append(card.id)
        if card.id in self.failing:
            raise RuntimeError("busy")
        audio = artifacts.save_bytes(b"RIFF", ".wav", "audio", card.id)
        return RunnerOutput(text=f"{card.id}({inputs['text']})", data={1: ("scores", 0.1 + 0.2)}, artifacts=[audio])


@pytest.fixture
def model() -> Counted:
    return Counted()


@pytest.fixture
def run_task(make_context, model: Counted, tmp_path: Path):
    """Runs TASK as the execute node does, recording in the journal of node run `node_run`; `deadline` is the run's
    (a `time.time()` value)."""
    context = make_context([], {"a": ("text-to-speech", model), "b": ("text-to-speech", model)}, attempts_per_model=1)

    async def run(
        node_run: str = "first", choice: ModelChoice = CHOICE, text: str = "hello", deadline: float | None = None
    ):
        journal = StepJournal(CallJournal(tmp_path / "calls" / node_run, checkpoint_serializer()))
        gate = Gate(Limits(run_timeout_s=60), deadline)
        task = TASK.model_copy(update={"args": {"text": text}})
        result = await run_ready_task(task, choice, {}, context, tmp_path / "run", gate, journal)
        await journal.synced()
        return result

    return run


async def test_the_same_step_run_again_reads_the_result_back_and_calls_no_model(run_task, model: Counted):
    model.failing = {"a"}
    first = await run_task()
    again = await run_task()
    assert model.calls == ["a", "b"]  # once each: the failed attempt and the fallback are not repeated either
    serde = checkpoint_serializer()
    assert again == serde.loads_typed(serde.dumps_typed(first))  # as the checkpoint would have given it back
    assert again.attempts == ["a: RuntimeError: busy"] and again.started_at == first.started_at


async def test_a_recorded_result_comes_back_even_past_the_runs_deadline(run_task, model: Counted):
    first = await run_task()
    late = time.time() - 1  # a run resumed after its time limit: nothing may start any more
    serde = checkpoint_serializer()
    assert (await run_task(deadline=late)) == serde.loads_typed(serde.dumps_typed(first))
    assert (await run_task(text="goodbye", deadline=late)).status == "skipped"
    assert model.calls == ["a"]


@pytest.mark.parametrize(
    "other",
    [
        {"node_run": "second"},  # a new turn or a fork: LangGraph runs the node under another id
        {"choice": CHOICE.model_copy(update={"model_ids": ["b"]})},  # another model chosen
        {"text": "goodbye"},  # other inputs
    ],
    ids=["another node run", "other models", "other inputs"],
)
async def test_any_other_call_runs_the_model(run_task, model: Counted, other: dict):
    await run_task()
    await run_task(**other)
    assert len(model.calls) == 2


async def test_a_result_whose_file_is_gone_is_made_again(run_task, model: Counted):
    first = await run_task()
    Path(first.artifacts[0].path).unlink()
    again = await run_task()
    assert model.calls == ["a", "a"] and Path(again.artifacts[0].path).is_file()


async def test_a_new_turn_with_the_same_request_runs_the_models_again(make_context, model: Counted, tmp_path: Path):
    plan = [{"task": "text-to-speech", "id": 0, "args": {"text": "hello"}}]
    context = make_context(plan, {"a": ("text-to-speech", model)})
    for _ in range(2):
        out = await arun("say hello", context, thread_id="chat", checkpoint_path=tmp_path / "runs.sqlite")
        assert out["results"][0].status == "ok"
    assert model.calls == ["a", "a"]


async def test_a_journal_that_cannot_be_written_costs_only_crash_safety(run_task, model: Counted, tmp_path, caplog):
    (tmp_path / "calls").write_text("a file where the journal's folder should be")
    result = await run_task()
    assert result.status == "ok" and model.calls == ["a"]
    assert "task 0: result not recorded" in caplog.text


class Crash(BaseException):
    """The process dying: nothing in the graph catches it."""


class LosesTaskResults(AsyncSqliteSaver):
    """A saver that never stores a task's writes, as when the process is killed before LangGraph's background save
    of a finished task's result."""

    async def aput_writes(self, config, writes, task_id, task_path="") -> None:
        return None


async def test_a_result_the_checkpoint_lost_is_read_back_after_a_crash(make_context, model: Counted, tmp_path: Path):
    plan = [
        {"task": "text-to-speech", "id": 0, "args": {"text": "hello"}},
        {"task": "automatic-speech-recognition", "id": 1, "dep": [0], "args": {"audio": "<GENERATED>-0"}},
    ]
    crashed = []

    async def transcribe(card, task, inputs, artifacts) -> RunnerOutput:
        if not crashed:
            crashed.append(card.id)
            raise Crash()
        return RunnerOutput(text=f"heard {Path(inputs['audio']).read_bytes().decode()}")

    context = make_context(plan, {"a": ("text-to-speech", model), "s": ("automatic-speech-recognition", transcribe)})
    config = {"configurable": {"thread_id": "t"}}
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        lossy = LosesTaskResults(saver.conn, serde=saver.serde)
        with pytest.raises(Crash):
            await build_graph(lossy).ainvoke({"request": "say hello"}, config, context=context, durability=DURABILITY)
        assert (await saver.aget_tuple(config)).checkpoint["channel_values"]["results"] == {}  # a's result lost
        out = await build_graph(saver).ainvoke(None, config, context=context, durability=DURABILITY)
    assert model.calls == ["a"] and crashed == ["s"]
    assert out["results"][1].text == "heard RIFF"  # the recorded artifact of a's one call
