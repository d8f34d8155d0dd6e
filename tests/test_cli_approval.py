"""`hugginggraph run --approve`: the dialogue as a pipe drives it (stdin answers, echoed after each prompt), on the
CLI's own stream loop with a scripted controller. The subprocess form is in tests/test_cli_runs.py."""

from __future__ import annotations

import io
import sys

import pytest
from conftest import echo, lead
from langgraph.checkpoint.memory import InMemorySaver

from hugginggraph import build_graph
from hugginggraph.approval_dialog import edit_decision
from hugginggraph.cli.follow import follow_run
from hugginggraph.console import RunPrinter
from hugginggraph.nodes.approval import ApprovalRequest, ProposedTask

PLAN = [{"task": "text-classification", "id": 0, "args": {"text": "what a fine day"}}]
MODELS = {"c": ("text-classification", echo()), "c2": ("text-classification", echo())}


class Dialogue:
    """Runs a request that asks for approval on thread `t`, with `answers` as stdin; returns the final state and
    what the user saw."""

    def __init__(self, context, monkeypatch, capsys) -> None:
        self.context, self.monkeypatch, self.capsys = context, monkeypatch, capsys
        self.graph = build_graph(InMemorySaver())

    async def __call__(self, answers: str, resume: bool = False) -> tuple[dict, str]:
        self.monkeypatch.setattr(sys, "stdin", io.StringIO(answers))
        graph_input = None if resume else {"request": "is it positive?", "approval": True}
        state = await follow_run(self.graph, graph_input, "t", self.context, RunPrinter())
        return state, self.capsys.readouterr().out


@pytest.fixture
def dialogue(make_context, monkeypatch, capsys) -> Dialogue:
    context = make_context(PLAN, MODELS, downloads={"c": 10})
    context.llm.select = '{"model_id": "c", "reason": "most downloaded"}'
    return Dialogue(context, monkeypatch, capsys)


async def test_y_runs_the_plan_shown_with_its_models(dialogue):
    state, shown = await dialogue("y\n")
    lines = shown.splitlines()
    at = lines.index("Waiting for your approval:")
    assert lines[at + 1] == "  [0] text-classification  text=what a fine day  model c (fallbacks: c2)"
    assert "Approve? [y]es / [n]o / [e]dit: y" in lines
    assert lines.index("[0] text-classification started") > at  # nothing ran before the answer
    assert state["results"][0].text == "c(what a fine day)" and lines[lines.index("Answer:") + 1] == "Done."


async def test_n_asks_why_and_ends_the_run_with_that_reason(dialogue):
    state, shown = await dialogue("n\ntoo slow\n")
    assert "Why (optional): too slow" in shown.splitlines()
    assert state["stopped"] == "the user rejected the plan: too slow"
    assert "I stopped before running any model: the user rejected the plan: too slow." in shown
    assert dialogue.context.runners[0].calls == []


async def test_e_edits_an_argument_and_a_model(dialogue):
    state, shown = await dialogue("e\n0 text=a calmer day\n0 model=c2\n\n")
    assert "edit> 0 text=a calmer day" in shown and shown.count("Approve?") == 1
    assert "  [0] text-classification  text=a calmer day" in shown.splitlines()  # the edited plan, shown again
    assert state["results"][0].text == "c2(a calmer day)"


async def test_answers_that_are_not_understood_are_asked_again(dialogue):
    state, shown = await dialogue("maybe\ne\nbogus line\n\ne\n0 model=nope\n\ny\n")
    assert "Answer y, n or e." in shown
    assert "Not applied: 'bogus line' is not `ID ARG=VALUE` or `ID model=MODEL`" in shown
    # The graph refuses the unknown model and asks again, saying why; the plan is unchanged.
    assert "Your last answer was not applied: task 0: the catalog has no text-classification model 'nope'" in shown
    assert shown.count("Approve?") == 4 and state["results"][0].model_id == "c"


async def test_the_end_of_input_leaves_the_run_paused_and_resume_asks_again(dialogue):
    state, shown = await dialogue("")
    assert "No answer: the run waits; `hugginggraph resume t` asks again." in shown
    assert state["__interrupt__"] and "answer" not in state and "Answer:" not in shown
    resumed, shown = await dialogue("y\n", resume=True)  # as `hugginggraph resume t` does
    assert "Waiting for your approval:" in shown and lead(resumed["answer"]) == "Done."


def test_edit_lines_become_a_decision_for_the_plan_shown():
    request = ApprovalRequest(tasks=[ProposedTask(id=0, task="summarization", args={"text": "long"}, model="s")])
    decision = edit_decision(request, ["0 text=short", "0 model=s2"])
    assert decision.tasks == [{"id": 0, "task": "summarization", "dep": [], "args": {"text": "short"}}]
    assert decision.models == {0: "s2"}
    assert edit_decision(request, ["0 model=s2"]).tasks is None  # models only: the plan stays as it is
    for lines, problem in [([], "no edit given"), (["3 text=x"], "no task 3"), (["0 text=long"], "change nothing")]:
        with pytest.raises(ValueError, match=problem):
            edit_decision(request, lines)
