"""Progress events reach a streaming caller per task, as they happen."""

from conftest import echo

from hugginggraph import build_graph


async def test_task_events_stream_as_custom_chunks(make_context):
    plan = [
        {"task": "text-classification", "id": 0, "args": {"text": "a"}},
        {"task": "summarization", "id": 1, "args": {"text": "<GENERATED>-0"}},
        {"task": "text-classification", "id": 2, "args": {"text": "<GENERATED>-1"}},
    ]
    context = make_context(
        plan, {"c": ("text-classification", echo()), "s": ("summarization", echo(fail=OSError("x")))}
    )
    events = []
    async for mode, chunk in build_graph().astream(
        {"request": "r"}, context=context, stream_mode=["updates", "custom"]
    ):
        if mode == "custom":
            events.append((chunk["event"], chunk["task_id"], chunk.get("status")))
            if chunk["event"] == "task_finished":
                assert chunk["result"]["status"] == chunk["status"]  # the whole result, JSON-safe
    assert events == [
        ("task_started", 0, None),
        ("task_finished", 0, "ok"),
        ("task_started", 1, None),
        ("task_finished", 1, "failed"),
        ("task_finished", 2, "skipped"),  # a skipped task never starts, but UIs still hear how it ended
    ]
