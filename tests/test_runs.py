"""The facade: run, continue a thread, list runs and read their history from the SQLite file."""

import json
import sqlite3
from pathlib import Path

import pytest
from conftest import echo, lead

from hugginggraph import NothingSaved, aapprove, ahistory, aresume, arun, athreads


async def test_turns_on_a_thread_keep_the_chat_and_start_with_fresh_results(make_context, tmp_path: Path):
    db = tmp_path / "runs.sqlite"
    first = make_context(
        [
            {"task": "text-classification", "id": 0, "args": {"text": "one"}},
            {"task": "summarization", "id": 1, "args": {"text": "two"}},
        ],
        {"c": ("text-classification", echo()), "s": ("summarization", echo())},
    )
    out1 = await arun("first request", first, thread_id="chat", checkpoint_path=db)
    assert sorted(out1["results"]) == [0, 1]

    second = make_context(
        [{"task": "text-classification", "id": 0, "args": {"text": "three"}}], {"c": ("text-classification", echo())}
    )
    seen_history = []
    second.llm.respond = lambda messages: "second answer"
    out2 = await arun("second request", second, thread_id="chat", checkpoint_path=db)
    assert sorted(out2["results"]) == [0] and out2["results"][0].text == "c(three)"
    assert sorted(out2["choices"]) == [0]
    assert lead(out2["answer"]) == "second answer"

    history = await ahistory("chat", checkpoint_path=db)
    latest = history[0].values
    assert [m.text for m in latest["messages"]] == ["first request", out1["answer"], "second request", out2["answer"]]
    assert len(history) > 8 and not seen_history
    assert await athreads(checkpoint_path=db) == ["chat"]


async def test_runs_are_listed_newest_first(make_context, tmp_path: Path):
    db = tmp_path / "runs.sqlite"
    for thread in ("a", "b"):
        await arun("hi", make_context([], {}), thread_id=thread, checkpoint_path=db)
    assert await athreads(checkpoint_path=db) == ["b", "a"]


async def test_resuming_a_thread_with_nothing_saved_says_so(make_context, tmp_path: Path):
    db, context = tmp_path / "runs.sqlite", make_context([], {})
    nothing = "nothing was saved on thread 'never-ran': run the request again"
    with pytest.raises(NothingSaved, match=nothing):
        await aresume("never-ran", context, checkpoint_path=db)
    with pytest.raises(NothingSaved, match=nothing):
        await aapprove("never-ran", {"action": "approve"}, context, checkpoint_path=db)
    assert await athreads(checkpoint_path=db) == []  # and nothing was run in its place


async def test_the_request_is_saved_before_planning_begins(make_context, tmp_path: Path):
    """So a run killed in its planner's first call can be resumed: the runs are saved with "sync" durability."""
    db, saved = tmp_path / "runs.sqlite", []

    def planner(messages) -> str:
        with sqlite3.connect(db) as another_process:
            query = "select count(*) from checkpoints where thread_id = 'early'"
            saved.append(another_process.execute(query).fetchone()[0])
        return json.dumps({"tasks": []})

    await arun("hi", make_context(planner, {}), thread_id="early", checkpoint_path=db)
    assert saved and saved[0] >= 1
