"""The direct-answer gate: requests that need no model skip planning and get the controller's own answer. A word-count
embedder keeps the unit tests exact and fast; the slow test routes clear cases with MiniLM itself."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hugginggraph import HuggingGraphContext
from hugginggraph.graph.context import PlanningAids
from hugginggraph.planning.direct_gate import DirectGate, direct_requests, gate_for, vote_shares
from hugginggraph.planning.planner import Planner
from hugginggraph.testing import ScriptedChatModel, ScriptedRunner
from hugginggraph.tools.catalog import InMemoryCatalog
from hugginggraph.tools.demo_bank import Demo, DemoBank, default_demo_bank
from hugginggraph.tools.tasks import TASKS

VOCABULARY = ["hello", "how", "are", "you", "joke", "draw", "cat", "read", "aloud", "it", "translate"]


def word_vectors(texts: list[str]) -> Any:
    """Unit vectors of vocabulary word counts: a text is nearest to the one sharing most of its words."""
    counts = np.zeros((len(texts), len(VOCABULARY)))
    for row, text in enumerate(texts):
        words = re.findall(r"\w+", text.lower())
        counts[row] = [words.count(word) for word in VOCABULARY]
    return counts / np.maximum(np.linalg.norm(counts, axis=1, keepdims=True), 1e-9)


def demo(request: str, task: str | None) -> Demo:
    plan = [{"task": task, "id": 0, "dep": [-1], "args": {"text": request}}] if task else []
    return Demo(request=request, plan=plan)


BANK = DemoBank(
    [
        demo("draw a cat", "text-to-image"),
        demo("read it aloud", "text-to-speech"),
        demo("translate it", "translation"),
        demo("hello how are you", None),  # a demo with an empty plan needs no model
    ],
    lambda: word_vectors,
)


def gate(bank: DemoBank = BANK) -> DirectGate:
    return DirectGate(bank, ["tell me a joke", "hello you"], neighbours=3, share=0.5)


def test_requests_like_the_direct_ones_skip_planning_and_those_like_the_demos_do_not():
    assert gate().answers_directly("hello, how are you?")
    assert gate().answers_directly("a joke please")
    assert not gate().answers_directly("draw a cat for me")
    assert not gate().answers_directly("translate it")


def test_a_request_with_a_file_always_goes_to_planning():
    assert not gate().answers_directly("hello, how are you?", files=["cat.png"])
    assert not gate().answers_directly("hello, how are you? cat.png")
    assert not gate().answers_directly("tell me a joke about memo.wav")


def test_quoted_text_does_not_decide():
    # Compared without its quote, "read 'hello how are you' aloud" is a reading-aloud request.
    assert not gate().answers_directly("read 'hello how are you' aloud")


def test_without_an_embedder_planning_decides():
    assert not gate(DemoBank(BANK.demos, lambda: None)).answers_directly("hello, how are you?")


def test_the_vote_is_weighted_by_similarity_and_ignores_unrelated_requests():
    similarities = np.array([[0.9, 0.2, 0.1, -0.5], [0.1, 0.3, 0.6, 0.0], [-0.2, -0.1, -0.3, -0.4]])
    direct = np.array([1.0, 0.0, 0.0, 1.0])
    shares = vote_shares(similarities, direct, neighbours=3)
    assert shares[0] == pytest.approx(0.9 / 1.2)
    assert shares[1] == pytest.approx(0.1)  # the two nearest need models
    assert shares[2] == 0.0  # nothing alike: no evidence for skipping the plan


def test_the_project_has_direct_requests_of_every_kind():
    requests = direct_requests()
    assert len(requests) >= 100 and len(set(requests)) == len(requests)
    assert all(request.strip() for request in requests)
    demos = {demo.request for demo in default_demo_bank().demos}
    assert not demos & set(requests)


def test_the_benchmarks_labelled_set_is_balanced_and_apart_from_the_gates_own_requests():
    labelled = json.loads((Path(__file__).parents[2] / "benchmarks" / "data" / "direct_gate.json").read_text())
    kinds = [item["needs_model"] for item in labelled]
    assert len(labelled) >= 100 and kinds.count(True) == kinds.count(False)
    own = {*direct_requests(), *(demo.request for demo in default_demo_bank().demos)}
    assert not own & {item["request"] for item in labelled}


@pytest.mark.parametrize(
    ("aids", "planned"),
    [({}, False), ({"direct_gate": False}, True), ({"demos": "static"}, True), ({"demos": "none"}, True)],
)
async def test_the_planner_skips_its_call_only_with_the_gate_and_retrieved_demos(aids, planned):
    llm = ScriptedChatModel(plan=[{"task": "text-to-speech", "id": 0, "dep": [-1], "args": {"text": "hi"}}])
    bank = DemoBank(BANK.demos, lambda: word_vectors)
    draft = await Planner(llm, TASKS, PlanningAids(**aids), bank).draft("hello, how are you?", [])
    assert (llm.calls == ["plan"]) is planned
    assert draft.direct is not planned
    assert (draft.items == []) is not planned


async def test_a_direct_request_gets_the_chit_chat_answer_without_a_plan(run_graph, tmp_path: Path):
    llm = ScriptedChatModel(
        plan=[{"task": "text-to-speech", "id": 0, "dep": [-1], "args": {"text": "hi"}}], chat="Hi! I am fine."
    )
    context = HuggingGraphContext(
        llm=llm,
        catalog=InMemoryCatalog([]),
        runners=[ScriptedRunner({})],
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        demo_bank=DemoBank(BANK.demos, lambda: word_vectors),
    )
    out = await run_graph(context, request="hello, how are you?")
    assert llm.calls == ["chat"]  # no planning call, no model
    assert out["answer"] == "Hi! I am fine." and out["plan"] == [] and out["direct_answer"] is True

    planned = await run_graph(context, request="draw a cat", thread_id="other")
    assert llm.calls[1] == "plan" and planned["direct_answer"] is False


@pytest.mark.slow
def test_minilm_routes_clear_cases_each_way():
    bank = default_demo_bank()
    if bank.embedder() is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    real = gate_for(bank)
    for request in [
        "Good afternoon! Are you busy?",
        "Who was the first president of the United States?",
        "What is 6 times 7?",
        "Any advice for staying calm before a flight?",
    ]:
        assert real.answers_directly(request), request
    for request in [
        "Draw a fox sleeping under a tree.",
        "Translate 'see you tomorrow' into Italian.",
        "Read this out loud: 'the meeting starts at ten'.",
        "Turn this paragraph into a short video: a rocket lifts off at night.",
        "Summarise this: the council approved the budget after a long debate.",
    ]:
        assert not real.answers_directly(request), request
    assert not real.answers_directly("What is in the picture?", files=["garden.jpg"])
