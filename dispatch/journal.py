"""The execute step's call journal as tasks use it: a finished call is recorded before its task ends, so a task killed
after its model answered, but before LangGraph saved the result, reads it back when the step runs again."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.tools.call_journal import CallJournal

logger = logging.getLogger(__name__)


class StepJournal:
    """The execute step's `CallJournal`, as its tasks use it: disk calls run in threads, never on the event loop, and
    the wait for the disk comes once, at the step's end, rather than between a task and its dependants. A journal
    that cannot be written (a full disk, a read-only folder) costs only the crash-safety of its results."""

    def __init__(self, journal: CallJournal | None) -> None:
        self.journal = journal
        """None: nothing is recorded or read back (calls started while the plan is written: execution records the
        results it takes from them)."""
        self.syncing: list[asyncio.Future[None]] = []

    async def recorded(self, key: dict[str, Any]) -> TaskResult | None:
        """The result recorded for this call, if it can stand for a new one: every file it names still exists."""
        return None if self.journal is None else await asyncio.to_thread(self._reusable, key)

    def _reusable(self, key: dict[str, Any]) -> TaskResult | None:
        assert self.journal is not None
        try:
            recorded = self.journal.recorded(key)
        except OSError as error:
            logger.warning("task %s: journal not readable (%s); the models are called", key["task_id"], error)
            return None
        if isinstance(recorded, TaskResult) and all(Path(artifact.path).is_file() for artifact in recorded.artifacts):
            return recorded
        return None

    async def record(self, key: dict[str, Any], result: TaskResult) -> None:
        """Record a successful call's result: a write and a rename, a fraction of a millisecond, so the moment in
        which a kill loses a finished call is as short as it can be. Its sync to disk goes on meanwhile."""
        if self.journal is None:
            return
        try:
            path = await asyncio.to_thread(self.journal.record, key, result)
        except OSError as error:
            logger.warning("task %s: result not recorded (%s); a crash would run it again", key["task_id"], error)
            return
        self.syncing.append(asyncio.ensure_future(asyncio.to_thread(self._sync, path, key["task_id"])))

    def _sync(self, path: Path, task_id: int) -> None:
        assert self.journal is not None
        try:
            self.journal.sync(path)
        except OSError as error:
            logger.warning("task %s: result not synced to disk (%s); a power cut would lose it", task_id, error)

    async def synced(self) -> None:
        """Wait until every record is on disk."""
        await asyncio.gather(*self.syncing)


def call_key(task: Task, choice: ModelChoice, inputs: dict[str, str]) -> dict[str, Any]:
    """What a model call's journal record is found by: the same task, inputs and models."""
    return {"task_id": task.id, "task": task.task, "inputs": inputs, "model_ids": choice.model_ids}
