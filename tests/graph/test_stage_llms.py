"""One controller for all stages by default; a stage may have its own."""

import dataclasses

from conftest import echo, lead

from hugginggraph.testing import ScriptedChatModel

PLAN = [{"task": "summarization", "id": 0, "args": {"text": "t"}}]
MODELS = {"a": ("summarization", echo()), "b": ("summarization", echo())}


async def test_each_stage_asks_its_own_controller_when_given_one(make_context, run_graph):
    context = make_context(PLAN, MODELS)
    planner = ScriptedChatModel(plan=PLAN)
    responder = ScriptedChatModel(respond="from the responder")
    context = dataclasses.replace(context, stage_llms={"plan": planner, "respond": responder})
    out = await run_graph(context)
    assert lead(out["answer"]) == "from the responder"
    assert planner.calls == ["plan"] and responder.calls == ["respond"]
    assert context.llm.calls == ["select"]  # the default controller still chooses the model
