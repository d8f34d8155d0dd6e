"""What saving runs with "sync" durability costs against LangGraph's default "async", on a small run: the crash
tests' four-task plan (two roots, a chain of two after them) of no-op models, so the graph's own work is all there
is to time, through planning, selection, execution and the answer on a SQLite checkpointer.

Prints the median run under each mode, the checkpoints a run saves and what each costs in "sync" mode; what one
call journal record costs (in both modes, once per successful model call): its write and rename, and its sync to
disk (the execute step does both in threads); then, last, `durability_ratio=<sync run / async run>`.
Run: python benchmarks/durability.py
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from harness import sleep_plan, time_run
from langgraph.types import Durability

from hugginggraph.graph.checkpoint import checkpoint_serializer
from hugginggraph.graph.state import TaskResult
from hugginggraph.tools.call_journal import CallJournal

PLAN = sleep_plan({0: 0.0, 1: 0.0, 2: 0.0, 3: 0.0}, {2: [0], 3: [2, 1]})
REPEATS = 21


def record_seconds(repeats: int = 50) -> tuple[float, float]:
    """The median times to record one task's result (a write and a rename) and to sync it (two fsyncs: the file,
    its folder)."""
    result = TaskResult(task_id=0, task="summarization", status="ok", text="a summary " * 20, model_id="m")
    writes, syncs = [], []
    with tempfile.TemporaryDirectory() as folder:
        journal = CallJournal(Path(folder), checkpoint_serializer())
        for n in range(repeats):
            started = time.perf_counter()
            path = journal.record({"n": n}, result)
            written = time.perf_counter()
            journal.sync(path)
            writes.append(written - started)
            syncs.append(time.perf_counter() - written)
    return statistics.median(writes), statistics.median(syncs)


async def main() -> None:
    runs: dict[Durability, list[float]] = {"async": [], "sync": []}
    checkpoints = 0
    for _ in range(REPEATS):  # the modes take turns, so a slow spell of the machine hits both
        for mode in runs:
            timing = await time_run(PLAN, mode)
            runs[mode].append(timing.seconds)
            checkpoints = timing.checkpoints
    fast, safe = statistics.median(runs["async"]), statistics.median(runs["sync"])
    print(f"async: {fast * 1000:.1f} ms per run; sync: {safe * 1000:.1f} ms per run (medians of {REPEATS})")
    print(f"checkpoints per run: {checkpoints}; sync_ms_per_checkpoint={(safe - fast) * 1000 / checkpoints:.2f}")
    write, sync = record_seconds()
    print(f"journal_write_ms={write * 1000:.2f} journal_sync_ms={sync * 1000:.2f}")
    print(f"durability_ratio={safe / fast:.3f}")


if __name__ == "__main__":
    asyncio.run(main())
