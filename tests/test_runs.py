"""The facade: run, continue a thread, list runs and read their history from the SQLite file."""

from pathlib import Path

from conftest import echo

from hugginggraph import ahistory, arun, athreads


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
    assert out2["answer"] == "second answer"

    history = await ahistory("chat", checkpoint_path=db)
    latest = history[0].values
    assert [m.text for m in latest["messages"]] == ["first request", out1["answer"], "second request", "second answer"]
    assert len(history) > 8 and not seen_history
    assert await athreads(checkpoint_path=db) == ["chat"]


async def test_runs_are_listed_newest_first(make_context, tmp_path: Path):
    db = tmp_path / "runs.sqlite"
    for thread in ("a", "b"):
        await arun("hi", make_context([], {}), thread_id=thread, checkpoint_path=db)
    assert await athreads(checkpoint_path=db) == ["b", "a"]
