"""Runs plans of sleep-based tasks through the real graph (scripted controller, SQLite checkpointer) and times
them. Shared by the benchmarks in this folder."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from langgraph.types import Durability

from hugginggraph import HuggingGraphContext, build_graph, sqlite_checkpointer
from hugginggraph.graph.checkpoint import DURABILITY
from hugginggraph.testing import ScriptedChatModel, ScriptedRunner
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog
from hugginggraph.tools.runners.base import RunnerOutput

TASK_TYPE = "text-classification"

ROOT = Path(__file__).resolve().parents[1]


def load_test_module(relative_path: str) -> ModuleType:
    """A test module imported from its file (tests/ is not a package), so a benchmark times the tests' own cases."""
    path = ROOT / relative_path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def sleeper(card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: Any) -> RunnerOutput:
    """A model that takes `seconds` seconds (0 for a no-op) and returns its text input."""
    seconds = float(inputs.get("seconds", 0))
    if seconds:
        await asyncio.sleep(seconds)
    return RunnerOutput(text=inputs.get("text", ""))


def sleep_plan(durations: dict[int, float], deps: dict[int, list[int]]) -> list[dict[str, Any]]:
    """A HuggingGPT plan whose task i sleeps durations[i] and uses the outputs of deps[i]."""
    return [
        {
            "task": TASK_TYPE,
            "id": task_id,
            "dep": deps.get(task_id) or [-1],
            "args": {
                "text": " ".join(f"<GENERATED>-{d}" for d in deps.get(task_id, [])) or f"input {task_id}",
                "seconds": str(seconds),
            },
        }
        for task_id, seconds in durations.items()
    ]


_RUNS = itertools.count()


def new_request() -> str:
    """A request no earlier run of the process has made: the planner embeds each request it has not seen lately
    (tools/embedding_cache.py), and a benchmark that repeats one would time a run without that work."""
    return f"Classify the sentiment of text {next(_RUNS)}."


def critical_path(durations: dict[int, float], deps: dict[int, list[int]]) -> float:
    finish: dict[int, float] = {}
    for task_id in sorted(durations):  # ids are topologically ordered in these benchmarks
        finish[task_id] = durations[task_id] + max((finish[d] for d in deps.get(task_id, [])), default=0.0)
    return max(finish.values())


class Timing(NamedTuple):
    seconds: float
    checkpoints: int
    """How many checkpoints the run saved."""


async def time_plan(plan: list[dict[str, Any]]) -> float:
    """Seconds for one whole graph run of `plan`: plan, validate, select, execute, respond, with checkpoints."""
    return (await time_run(plan)).seconds


async def time_run(plan: list[dict[str, Any]], durability: Durability = DURABILITY) -> Timing:
    """One whole graph run of `plan`, saved with `durability` (by default as HuggingGraph saves runs)."""
    with tempfile.TemporaryDirectory() as workdir:
        context = sleeper_context(plan, Path(workdir))
        config = {"configurable": {"thread_id": "b"}}
        async with sqlite_checkpointer(Path(workdir) / "checkpoints.sqlite") as saver:
            graph = build_graph(saver)
            started = time.perf_counter()
            out = await graph.ainvoke({"request": new_request()}, config, context=context, durability=durability)
            elapsed = time.perf_counter() - started
            checkpoints = len([saved async for saved in saver.alist(config)])
    failed = [r for r in out["results"].values() if r.status != "ok"]
    if failed or len(out["results"]) != len(plan):
        raise RuntimeError(f"benchmark tasks failed or did not run: {failed or out.get('answer')}")
    return Timing(elapsed, checkpoints)


async def stage_seconds(plan: list[dict[str, Any]]) -> dict[str, float]:
    """Seconds each stage of one graph run of `plan` took, from its start to its end (LangGraph's "tasks" stream),
    saved as HuggingGraph saves runs: where a run's time goes besides its tasks."""
    with tempfile.TemporaryDirectory() as workdir:
        context = sleeper_context(plan, Path(workdir))
        config = {"configurable": {"thread_id": "b"}}
        began: dict[str, float] = {}
        spans: dict[str, float] = {}
        async with sqlite_checkpointer(Path(workdir) / "checkpoints.sqlite") as saver:
            stream = build_graph(saver).astream(
                {"request": new_request()}, config, context=context, stream_mode="tasks", durability=DURABILITY
            )
            async for event in stream:
                now = time.perf_counter()
                if "input" in event:
                    began.setdefault(event["name"], now)
                else:
                    spans[event["name"]] = now - began[event["name"]]
    return spans


def sleeper_context(plan: list[dict[str, Any]], workdir: Path) -> HuggingGraphContext:
    """A scripted controller that plans `plan`, and the sleeper as the one model for its tasks."""
    return HuggingGraphContext(
        llm=ScriptedChatModel(plan=plan),
        catalog=InMemoryCatalog([CatalogEntry(id="sleeper", task=TASK_TYPE)]),
        runners=[ScriptedRunner({"sleeper": sleeper})],
        workspace=workdir,
        artifacts_dir=workdir / "artifacts",
    )
