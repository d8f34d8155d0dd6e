"""When a task may start and how long it may run, under `Limits.max_concurrent_tasks` and the run's deadline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from hugginggraph.graph.budget import out_of_time, time_left, time_limit_reason
from hugginggraph.graph.context import Limits


class Gate:
    """When a task may start and how long it may run: a free slot under `Limits.max_concurrent_tasks`, and the time
    left before the run's deadline (`Limits.run_timeout_s`). Remembers whether the deadline cut the run short."""

    def __init__(self, limits: Limits, deadline: float | None) -> None:
        self.limits = limits
        self.deadline = deadline
        self.slots = asyncio.Semaphore(limits.max_concurrent_tasks) if limits.max_concurrent_tasks else None
        self.cut_short: str | None = None
        """Why the deadline stopped a task, once it has."""

    def cut(self) -> str:
        """Record that the deadline stopped a task; return the reason."""
        self.cut_short = time_limit_reason(self.limits)
        return self.cut_short

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[str | None]:
        """Holds a slot for the block. Yields None, or why the task may not start: the deadline came first."""
        if out_of_time(self.deadline, self.limits):
            yield self.cut()
            return
        if self.slots is None:
            yield None
            return
        try:
            async with asyncio.timeout(time_left(self.deadline)):
                await self.slots.acquire()
        except TimeoutError:
            yield self.cut()
            return
        try:
            yield None
        finally:
            self.slots.release()

    def attempt_timeout(self) -> tuple[float, bool]:
        """Seconds the next model call may take, and whether the run's deadline (not the task's own limit) set it."""
        left = time_left(self.deadline)
        if left is None or left >= self.limits.task_timeout_s:
            return self.limits.task_timeout_s, False
        return max(left, 0.0), True
