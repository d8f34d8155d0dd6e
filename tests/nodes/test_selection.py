"""Model selection: top-K by downloads, a single-choice question constrained to the candidates' ids."""

import dataclasses

import pytest
from conftest import echo

from hugginggraph.nodes.selection import choice_from_text, choice_schema
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog

CANDIDATES = [CatalogEntry(id=f"org/model-{i}", task="summarization", downloads=100 - i) for i in range(3)]


def test_choice_schema_only_admits_candidate_ids():
    schema = choice_schema(CANDIDATES)
    enum = schema.model_json_schema()["$defs"]["CandidateId"]["enum"]
    assert enum == [card.id for card in CANDIDATES]
    assert schema.model_validate({"model_id": "org/model-2", "reason": "r"}).model_id.value == "org/model-2"
    with pytest.raises(ValueError):
        schema.model_validate({"model_id": "org/other", "reason": "r"})


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"model_id": "org/model-1", "reason": "small"}', "org/model-1"),
        ('```json\n{"id": "org/model-2"}\n```', "org/model-2"),
        ("I would pick org/model-2 because it is small, not org/model-0.", "org/model-2"),
    ],
)
def test_choice_is_read_from_plain_text(reply, expected):
    ids = [card.id for card in CANDIDATES]
    assert choice_from_text(reply, ids)[0] == expected


def test_a_reply_naming_no_candidate_gives_none():
    assert choice_from_text("model number 2", [card.id for card in CANDIDATES]) is None


async def test_top_k_are_offered_and_the_choice_leads_the_fallbacks(make_context, run_graph):
    models = {f"m{i}": ("summarization", echo()) for i in range(4)}
    offered = []

    def choose(messages):
        offered.append(messages[0].text)
        return '{"model_id": "m2", "reason": "fits best"}'

    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}],
        models,
        downloads={"m0": 10, "m1": 40, "m2": 30, "m3": 20},
        top_k=3,
    )
    context.llm.select = choose
    out = await run_graph(context)
    choice = out["choices"][0]
    assert choice.model_ids == ["m2", "m1", "m3"] and choice.reason == "fits best" and choice.asked_llm
    assert '"id": "m0"' not in offered[0]
    assert offered[0].index('"id": "m1"') < offered[0].index('"id": "m3"')
    assert out["results"][0].model_id == "m2"


async def test_one_candidate_needs_no_llm_call(make_context, run_graph):
    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}], {"only": ("summarization", echo())}
    )
    out = await run_graph(context)
    assert out["choices"][0].asked_llm is False
    assert context.llm.calls == ["plan", "respond"]


async def test_offline_models_and_the_controller_are_taken_in_their_measured_order_without_a_call(
    make_context, run_graph
):
    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}],
        {"better": ("summarization", echo()), "good": ("summarization", echo()), "llm": ("summarization", echo())},
        downloads={"better": 2, "good": 1, "llm": 0},
    )
    sources = {"better": "pypi", "good": "pypi", "llm": "llm"}
    cards = [
        card.model_copy(update={"source": sources[card.id]}) for card in context.catalog.candidates("summarization")
    ]
    context = dataclasses.replace(context, catalog=InMemoryCatalog(cards))
    out = await run_graph(context)
    choice = out["choices"][0]
    assert choice.model_ids == ["better", "good", "llm"] and choice.asked_llm is False
    assert context.llm.calls == ["plan", "respond"]


async def test_an_offline_model_beside_a_model_of_the_users_is_put_to_the_controller(make_context, run_graph):
    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}],
        {"offline": ("summarization", echo()), "mine": ("summarization", echo())},
    )
    cards = [
        card.model_copy(update={"source": "pypi" if card.id == "offline" else "local"})
        for card in context.catalog.candidates("summarization")
    ]
    context = dataclasses.replace(context, catalog=InMemoryCatalog(cards))
    out = await run_graph(context)
    assert out["choices"][0].asked_llm is True


async def test_an_unusable_choice_reply_falls_back_to_the_most_downloaded(make_context, run_graph):
    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}],
        {"a": ("summarization", echo()), "b": ("summarization", echo())},
        downloads={"a": 1, "b": 2},
    )
    context.llm.select = "no idea"
    out = await run_graph(context)
    assert out["choices"][0].model_ids == ["b", "a"]
    assert "named no candidate" in out["choices"][0].reason


async def test_a_choice_outside_the_candidates_is_replaced_by_the_top_one_with_the_reason(make_context, run_graph):
    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}],
        {"a": ("summarization", echo()), "b": ("summarization", echo())},
        downloads={"a": 5, "b": 1},
    )
    context.llm.select = '{"model_id": "org/not-offered", "reason": "my favourite"}'
    out = await run_graph(context)
    assert out["choices"][0].model_ids == ["a", "b"]
    assert out["choices"][0].reason == "the controller named no candidate; took the most downloaded"


async def test_an_unreachable_catalog_fails_the_task_not_the_run(make_context, run_graph):
    from hugginggraph.tools.catalog import CatalogUnavailable

    class Offline:
        def candidates(self, task):
            raise CatalogUnavailable("the Hub did not answer")

        def get(self, model_id):
            raise CatalogUnavailable("the Hub did not answer")

    context = make_context([{"task": "summarization", "id": 0, "args": {"text": "t"}}], {})
    context = dataclasses.replace(context, catalog=Offline())
    out = await run_graph(context)
    assert out["results"][0].status == "failed"
    assert out["results"][0].error == "no model catalog could be reached: the Hub did not answer"
    assert out["answer"]


async def test_an_unreachable_controller_leaves_the_ranking_to_choose(make_context, run_graph):
    from hugginggraph.tools.llm_json import ControllerUnavailable

    context = make_context(
        [{"task": "summarization", "id": 0, "args": {"text": "t"}}],
        {"a": ("summarization", echo()), "b": ("summarization", echo())},
        downloads={"a": 1, "b": 2},
    )

    def down(messages):
        raise ControllerUnavailable("the controller LLM could not be reached")

    context.llm.select = down
    out = await run_graph(context)
    assert out["choices"][0].model_ids == ["b", "a"]
    assert out["choices"][0].reason == "took the most downloaded; the controller LLM could not be reached"
    assert out["results"][0].status == "ok"
