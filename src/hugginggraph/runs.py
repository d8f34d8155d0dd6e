"""The small facade for running a request without touching LangGraph: run, resume, list, read history.

Every call opens the SQLite checkpointer for its duration, so a run can be resumed from another process.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.checkpoint import list_threads, sqlite_checkpointer
from hugginggraph.graph.context import HuggingGraphContext


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def arun(
    request: str,
    context: HuggingGraphContext,
    *,
    files: Sequence[str] = (),
    thread_id: str | None = None,
    checkpoint_path: Path | str | None = None,
) -> dict[str, Any]:
    """Run one request (a new turn on `thread_id`, or on a fresh thread) and return the output state."""
    async with sqlite_checkpointer(checkpoint_path) as saver:
        graph = build_graph(saver)
        config = _config(thread_id or uuid.uuid4().hex)
        state: dict[str, Any] = await graph.ainvoke({"request": request, "files": list(files)}, config, context=context)
        return {**state, "thread_id": config["configurable"]["thread_id"]}


def run(request: str, context: HuggingGraphContext, **options: Any) -> dict[str, Any]:
    """`arun` for callers without an event loop."""
    return asyncio.run(arun(request, context, **options))


async def aresume(
    thread_id: str, context: HuggingGraphContext, *, checkpoint_path: Path | str | None = None
) -> dict[str, Any]:
    """Finish an interrupted run from its last checkpoint; finished tasks are not run again."""
    async with sqlite_checkpointer(checkpoint_path) as saver:
        graph = build_graph(saver)
        state: dict[str, Any] = await graph.ainvoke(None, _config(thread_id), context=context)
        return {**state, "thread_id": thread_id}


async def athreads(*, checkpoint_path: Path | str | None = None) -> list[str]:
    """Ids of saved runs, most recent first."""
    async with sqlite_checkpointer(checkpoint_path) as saver:
        return await list_threads(saver)


async def ahistory(thread_id: str, *, checkpoint_path: Path | str | None = None) -> list[StateSnapshot]:
    """Every checkpoint of a run, newest first."""
    async with sqlite_checkpointer(checkpoint_path) as saver:
        graph = build_graph(saver)
        return [snapshot async for snapshot in graph.aget_state_history(_config(thread_id))]
