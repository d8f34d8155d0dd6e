import asyncio
from pathlib import Path

from hugginggraph.tools.started_calls import EarlyStarts


async def test_cancelling_a_threads_folder_cancels_its_turns_calls_only(tmp_path: Path):
    starts = EarlyStarts()
    thread, other = tmp_path / "t", tmp_path / "t2"
    calls = {folder: asyncio.ensure_future(asyncio.sleep(60)) for folder in (thread / "turn-1", thread, other)}
    for folder, call in calls.items():
        starts.add(str(folder), {"task_id": 0}, call)
    assert starts.cancel(str(thread)) == 2
    await asyncio.sleep(0)
    assert calls[thread / "turn-1"].cancelled() and calls[thread].cancelled() and not calls[other].cancelled()
    assert starts.take(str(other), {"task_id": 0}) is calls[other]
    calls[other].cancel()
