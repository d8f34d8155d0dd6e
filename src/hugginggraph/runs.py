"""The small facade for running a request without touching LangGraph: run, approve, resume, list, read history.

Every call opens the checkpointer for its duration (SQLite at `checkpoint_path`, or PostgreSQL when
`checkpoint_url` is set), so a run can be resumed from another process.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StateSnapshot
from pydantic import SecretStr

from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.checkpoint import DURABILITY, check_saved, list_threads, open_checkpointer
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import Mode
from hugginggraph.nodes.approval import ApprovalDecision, ApprovalRequest


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def _invoke(
    graph_input: Any,
    thread_id: str,
    context: HuggingGraphContext,
    checkpoint_path: Path | str | None,
    checkpoint_url: str | SecretStr | None,
) -> dict[str, Any]:
    async with open_checkpointer(checkpoint_url, checkpoint_path) as saver:
        if graph_input is None or isinstance(graph_input, Command):  # carries on a saved run: there must be one
            await check_saved(saver, thread_id)
        graph = build_graph(saver)
        state: dict[str, Any] = await graph.ainvoke(
            graph_input, _config(thread_id), context=context, durability=DURABILITY
        )
        return {**state, "thread_id": thread_id}


async def arun(
    request: str,
    context: HuggingGraphContext,
    *,
    files: Sequence[str] = (),
    thread_id: str | None = None,
    mode: Mode = "full",
    approval: bool = False,
    checkpoint_path: Path | str | None = None,
    checkpoint_url: str | SecretStr | None = None,
) -> dict[str, Any]:
    """Run one request (a new turn on `thread_id`, or on a fresh thread) and return the output state.

    `mode` "tasks" stops after the plan, "results" before the answer. With `approval`, the run pauses once the
    models are chosen: the state returned then holds the plan and choices, and `pending_approval(state)` the
    question, which `aapprove` answers.
    """
    graph_input = {"request": request, "files": list(files), "mode": mode, "approval": approval}
    return await _invoke(graph_input, thread_id or uuid.uuid4().hex, context, checkpoint_path, checkpoint_url)


def run(request: str, context: HuggingGraphContext, **options: Any) -> dict[str, Any]:
    """`arun` for callers without an event loop."""
    return asyncio.run(arun(request, context, **options))


def pending_approval(state: Mapping[str, Any]) -> ApprovalRequest | None:
    """The question a run paused on (`state["__interrupt__"]`, as `arun` and `aapprove` return it), if it did."""
    interrupts = state.get("__interrupt__") or ()
    return ApprovalRequest.model_validate(interrupts[0].value) if interrupts else None


async def aapprove(
    thread_id: str,
    decision: ApprovalDecision | Mapping[str, Any],
    context: HuggingGraphContext,
    *,
    checkpoint_path: Path | str | None = None,
    checkpoint_url: str | SecretStr | None = None,
) -> dict[str, Any]:
    """Answer the run paused for approval on `thread_id` and carry it on; return its state. It pauses again when
    the answer could not be used (`pending_approval(state).problem` says why) or an edit needs models chosen.
    Raises NothingSaved when the thread has no checkpoint."""
    resume = ApprovalDecision.model_validate(decision).model_dump(mode="json")  # JSON: checkpoints hold no classes
    return await _invoke(Command(resume=resume), thread_id, context, checkpoint_path, checkpoint_url)


async def aresume(
    thread_id: str,
    context: HuggingGraphContext,
    *,
    checkpoint_path: Path | str | None = None,
    checkpoint_url: str | SecretStr | None = None,
) -> dict[str, Any]:
    """Finish an interrupted run from its last checkpoint; finished tasks and finished model calls are not run
    again. A run paused for approval asks again. Raises NothingSaved when the thread has no checkpoint (a wrong id,
    or a run killed before its request was saved): send the request again with `arun`."""
    return await _invoke(None, thread_id, context, checkpoint_path, checkpoint_url)


async def athreads(
    *, checkpoint_path: Path | str | None = None, checkpoint_url: str | SecretStr | None = None
) -> list[str]:
    """Ids of saved runs, most recent first."""
    async with open_checkpointer(checkpoint_url, checkpoint_path) as saver:
        return await list_threads(saver)


async def ahistory(
    thread_id: str, *, checkpoint_path: Path | str | None = None, checkpoint_url: str | SecretStr | None = None
) -> list[StateSnapshot]:
    """Every checkpoint of a run, newest first."""
    async with open_checkpointer(checkpoint_url, checkpoint_path) as saver:
        graph = build_graph(saver)
        return [snapshot async for snapshot in graph.aget_state_history(_config(thread_id))]
