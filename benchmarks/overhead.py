"""Per-task overhead of the graph on a 50-task plan of no-op tasks (a binary tree of dependencies), through
planning, 50 selection branches, execution with a checkpoint write per task, and the answer.

Prints the 1-task run for reference, then, last, `overhead_ms_per_task=<whole 50-task run / 50>` (target <= 5).
Run: python benchmarks/overhead.py
"""

from __future__ import annotations

import asyncio
import statistics

from harness import sleep_plan, time_plan

TASKS = 50
REPEATS = 5


async def median_seconds(tasks: int) -> float:
    durations = dict.fromkeys(range(tasks), 0.0)
    deps = {task_id: [(task_id - 1) // 2] for task_id in range(1, tasks)}
    return statistics.median([await time_plan(sleep_plan(durations, deps)) for _ in range(REPEATS)])


async def main() -> None:
    one = await median_seconds(1)
    many = await median_seconds(TASKS)
    print(f"1-task run: {one * 1000:.1f} ms; {TASKS}-task run: {many * 1000:.1f} ms (medians of {REPEATS})")
    print(f"marginal_ms_per_task={(many - one) * 1000 / (TASKS - 1):.2f}")
    print(f"overhead_ms_per_task={many * 1000 / TASKS:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
