"""Model calls started before the execution stage, kept until it asks for them.

The planner's reply is read as it is written (dispatch/early_starts.py): a task that is whole, valid and has its model
settled starts at once, while the planner writes the rest. Its call is kept here under the folder the run writes to
(its thread's folder for its turn) and the call's key (the task, its inputs, its models: `dispatch.journal.call_key`).
The execution stage takes the call whose key equals the one it is about to make and awaits it instead of calling the
model again; a call nobody takes (the finished plan changed the task, or the run stopped first) is cancelled. Nothing
here is checkpointed: a run resumed in another process makes its calls again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def _key(call: Mapping[str, Any]) -> str:
    return json.dumps(call, sort_keys=True, default=str)


class EarlyStarts:
    """The calls started early, by output folder and call key; used on one event loop."""

    def __init__(self) -> None:
        self._calls: dict[str, dict[str, asyncio.Task[Any]]] = {}

    def add(self, folder: str, call: Mapping[str, Any], started: asyncio.Task[T]) -> None:
        self._calls.setdefault(folder, {})[_key(call)] = started

    def take(self, folder: str, call: Mapping[str, Any]) -> asyncio.Task[Any] | None:
        """The call started early with this key, now the caller's to await; None if there is none."""
        return self._calls.get(folder, {}).pop(_key(call), None)

    def cancel(self, folder: str) -> int:
        """Cancel the calls nobody took that write to `folder` or a folder inside it (a thread's folder holds its
        turns'); return how many there were."""
        inside = [kept for kept in self._calls if Path(kept).is_relative_to(folder)]
        left = [started for kept in inside for started in self._calls.pop(kept).values()]
        for started in left:
            started.cancel()
        return len(left)
