"""Does replanning once (the `replan` planning aid) answer more requests? Requests whose first task fails on this
machine (a task type only the Hub runs, an expert that finds nothing to read, a model made to fail), each run with
the aid off and on, on the embedded default controller and the offline experts, through the real graph.

A request is answered when every task gave a real result, or the replan's tasks all did (the failed part was done
another way). Prints one line per request and setting, then, last:
`replan: answered_off=a/n answered_on=b/n worse=w seconds_off=.. seconds_on=..` (`worse`: requests answered off
and not on, which must be 0 for the aid to be on by default).

Run: python benchmarks/replan.py [--model local:<name>] (the weights must be installed: `hugginggraph models
install-offline`).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from dataclasses import replace
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

from hugginggraph.context_assembly import build_context
from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.checkpoint import DURABILITY, sqlite_checkpointer
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.planning.replacement import replacement_ids
from hugginggraph.settings import load_settings
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import RunnerOutput

SAMPLES = ("memo.wav", "sign.png")
REQUESTS = (
    "Detect the objects in sign.png.",  # object-detection: the Hub's only
    "Answer this question about sign.png: what does the sign say?",  # visual-question-answering: the Hub's only
    "Estimate the depth of each part of sign.png.",  # depth-estimation: nothing else can
    "The capital of France is [MASK]. Fill in the mask.",  # fill-mask: the Hub's only
    "Draw a picture of a red bus.",  # text-to-image: nothing else can
    "Transcribe memo.wav.",  # works: must stay answered
    "Read the text on sign.png.",  # works: must stay answered
)
FAILED_SUMMARY = "Transcribe memo.wav and summarize the transcript."
"""Run with its summarization made to fail (`FailingSummarizer`), as a model error would."""


def answered(state: dict[str, Any]) -> bool:
    results = state.get("results", {})
    plan = state.get("plan", [])
    if not plan:
        return False
    if all(result.status == "ok" for result in results.values()):
        return True
    added = replacement_ids(state)
    return bool(added) and all(results.get(i) is not None and results[i].status == "ok" for i in added)


async def run_one(context: HuggingGraphContext, request: str, folder: Path, thread: str) -> tuple[Any, float]:
    async with sqlite_checkpointer(folder / "runs.sqlite") as saver:
        started = time.perf_counter()
        state = await build_graph(saver).ainvoke(
            {"request": request, "files": [sample for sample in SAMPLES if sample in request]},
            {"configurable": {"thread_id": thread}},
            context=context,
            durability=DURABILITY,
        )
        return state, time.perf_counter() - started


class FailingSummarizer:
    """Runs every summarization model, and fails, as a model that crashes would (before the real runners)."""

    def can_run(self, card: CatalogEntry) -> bool:
        return card.task == "summarization"

    async def run(self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: Any) -> RunnerOutput:
        raise RuntimeError(f"injected failure: {card.id} crashed")


def with_failing_summaries(context: HuggingGraphContext) -> HuggingGraphContext:
    return replace(context, runners=[FailingSummarizer(), *context.runners])


async def main(model: str | None) -> None:
    settings = load_settings({"model": model, "hub": False})
    with tempfile.TemporaryDirectory(prefix="hugginggraph-replan-") as name:
        folder = Path(name)
        for sample in SAMPLES:
            with as_file(files("hugginggraph").joinpath("samples", sample)) as path:
                shutil.copyfile(path, folder / sample)
        base = build_context(settings, folder)
        cases = [(request, base) for request in REQUESTS] + [(FAILED_SUMMARY, with_failing_summaries(base))]
        totals = {False: [0, 0.0], True: [0, 0.0]}
        worse = 0
        for n, (request, context) in enumerate(cases):
            outcome = {}
            for on in (False, True):
                aided = replace(context, planning=replace(context.planning, replan=on))
                state, seconds = await run_one(aided, request, folder, f"r{n}-{int(on)}")
                outcome[on] = answered(state)
                totals[on][0] += outcome[on]
                totals[on][1] += seconds
                statuses = " ".join(f"{r.task_id}:{r.task}={r.status}" for r in state.get("results", {}).values())
                print(f"{'on ' if on else 'off'} {outcome[on]!s:5} {seconds:5.1f} s  {request}  [{statuses}]")
            worse += outcome[False] and not outcome[True]
        count = len(cases)
        print(
            f"replan: answered_off={totals[False][0]}/{count} answered_on={totals[True][0]}/{count} worse={worse} "
            f"seconds_off={totals[False][1]:.1f} seconds_on={totals[True][1]:.1f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="the controller (default: the settings' own, the embedded 1.5B)")
    asyncio.run(main(parser.parse_args().model))
