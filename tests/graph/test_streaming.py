"""Progress events reach a streaming caller per task, as they happen, as docs/streaming.md describes them."""

import re
from pathlib import Path

from conftest import echo

from hugginggraph import build_graph

DOC = Path(__file__).parents[2] / "docs" / "streaming.md"


def documented(section: str) -> dict[str, list[str]]:
    """The table under the doc's `## <section>` heading: each row's first cell → the `names` in its second."""
    body = DOC.read_text(encoding="utf-8").split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in body.splitlines() if line.startswith("| `")]
    return {first.strip().strip("`"): re.findall(r"`([^`]+)`", second) for first, second, *_ in rows}


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
            events.append((chunk["event"], chunk.get("task_id"), chunk.get("status")))
            if chunk["event"] == "task_finished":
                assert chunk["result"]["status"] == chunk["status"]  # the whole result, JSON-safe
    assert events == [
        ("task_started", 0, None),
        ("task_finished", 0, "ok"),
        ("task_started", 1, None),
        ("task_finished", 1, "failed"),
        ("task_finished", 2, "skipped"),  # a skipped task never starts, but UIs still hear how it ended
        ("replanned", None, None),  # the scripted planner proposes its plan again: nothing new to run
    ]


async def test_the_documented_task_events_are_the_ones_emitted(make_context):
    plan = [
        {"task": "text-classification", "id": 0, "args": {"text": "a"}},
        {"task": "summarization", "id": 1, "args": {"text": "<GENERATED>-0"}},
        {"task": "text-classification", "id": 2, "args": {"text": "<GENERATED>-1"}},
    ]
    context = make_context(plan, {"c": ("text-classification", echo()), "s": ("summarization", echo(fail=OSError()))})
    emitted: dict[str, set[str]] = {}
    async for chunk in build_graph().astream({"request": "r"}, context=context, stream_mode="custom"):
        emitted.setdefault(chunk["event"], set()).update(chunk)
    assert emitted == {event: set(fields) for event, fields in documented("`custom`: task events").items()}


def test_every_node_s_update_is_documented():
    nodes = set(build_graph().get_graph().nodes) - {"__start__", "__end__"}
    rows = documented("`updates`: one per node")
    assert nodes <= set(rows) and "__interrupt__" in rows
