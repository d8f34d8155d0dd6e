"""Where runs are saved: an async SQLite checkpointer in the user's data directory by default.

SQLite's sync saver refuses async graphs, and HuggingGraph's executor is async, so the async saver is the one.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from platformdirs import user_data_dir


def default_data_dir() -> Path:
    """`$HUGGINGGRAPH_HOME`, else the platform's user data directory (e.g. `~/.local/share/hugginggraph`)."""
    return Path(os.environ.get("HUGGINGGRAPH_HOME") or user_data_dir("hugginggraph"))


def default_checkpoint_path() -> Path:
    return default_data_dir() / "checkpoints.sqlite"


@asynccontextmanager
async def sqlite_checkpointer(path: Path | str | None = None) -> AsyncIterator[BaseCheckpointSaver]:
    """An `AsyncSqliteSaver` on `path` (default: `default_checkpoint_path()`), open for the block."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    target = Path(path) if path is not None else default_checkpoint_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    async with aiosqlite.connect(str(target)) as connection:
        yield AsyncSqliteSaver(connection, serde=checkpoint_serializer())


def checkpoint_serializer() -> JsonPlusSerializer:
    """LangGraph's serializer, allowed to rebuild only its own safe types and our state models: a checkpoint file
    that someone else wrote cannot make us instantiate arbitrary classes."""
    from hugginggraph.graph.state import ModelChoice, Task, TaskResult
    from hugginggraph.tools.artifacts import Artifact

    return JsonPlusSerializer(allowed_msgpack_modules=[Task, ModelChoice, TaskResult, Artifact])


async def list_threads(saver: BaseCheckpointSaver) -> list[str]:
    """Thread ids of every saved run, most recently checkpointed first."""
    seen: dict[str, None] = {}
    async for checkpoint in saver.alist(None):
        seen.setdefault(checkpoint.config["configurable"]["thread_id"], None)
    return list(seen)
