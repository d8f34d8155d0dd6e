"""A HuggingGraph run in its own process, for the crash tests to SIGKILL and resume.

Usage: python crash_worker.py run|resume WORKDIR THREAD_ID SLOW_SECONDS [CHECKPOINT_URL] [--kill STAGE:INDEX:DELAY]
Runs are saved in PostgreSQL at CHECKPOINT_URL when given, else in WORKDIR/checkpoints.sqlite. Every model call
appends `start <model>` / `finish <model>` to WORKDIR/calls.log; the plan, results and answer go to
WORKDIR/<THREAD_ID>.json. With `--kill`, the worker SIGKILLs itself DELAY seconds after the INDEX-th hook of STAGE
(counted from 0): the controller's call at `plan`, `select` or `respond`, or the start of a model call at `execute`.
Killing itself at a hook is what makes a crash point exact and repeatable, where a kill from outside lands wherever
the process happens to be.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.messages import BaseMessage

from hugginggraph import HuggingGraphContext, aresume, arun
from hugginggraph.graph.context import PlanningAids
from hugginggraph.testing import ScriptedChatModel, ScriptedRunner, stage_of
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog
from hugginggraph.tools.runners.base import RunnerOutput

PLAN = [
    {"task": "text-generation", "id": 0, "dep": [-1], "args": {"text": "once upon a time"}},
    {"task": "text-classification", "id": 1, "dep": [-1], "args": {"text": "a fine day"}},
    {"task": "summarization", "id": 2, "dep": [0], "args": {"text": "<GENERATED>-0"}},
    {"task": "translation", "id": 3, "dep": [2, 1], "args": {"text": "<GENERATED>-2 / <GENERATED>-1"}},
]
DELAYS = {"text-generation": 0.2, "text-classification": 0.2, "summarization": None, "translation": 0.1}
MAIN_MODEL = re.compile(r"(?<![\w-])m-[a-z-]+")
"""The ids of the models the selector picks; each task also has an `alt-` one, so selection asks the LLM."""


class Kill:
    """SIGKILLs this process `delay` seconds after the `index`-th time `stage` is reached."""

    def __init__(self, spec: str) -> None:
        stage, index, delay = spec.split(":")
        self.stage, self.index, self.delay = stage, int(index), float(delay)
        self.seen: Counter[str] = Counter()

    def reached(self, stage: str) -> None:
        self.seen[stage] += 1
        if stage != self.stage or self.seen[stage] != self.index + 1:
            return
        if self.delay == 0:
            os.kill(os.getpid(), signal.SIGKILL)
        # the loop runs on meanwhile, so a delayed kill lands wherever the run has got to, between checkpoints too
        asyncio.get_running_loop().call_later(self.delay, os.kill, os.getpid(), signal.SIGKILL)

    async def after_run(self) -> None:
        """A run that ended before its delayed kill still dies, so it never reports a result."""
        if self.seen[self.stage] <= self.index:
            raise SystemExit(f"the kill point {self.stage}:{self.index} was never reached: {dict(self.seen)}")
        await asyncio.sleep(self.delay + 1)  # the kill is due within `delay`


class HookedChatModel(ScriptedChatModel):
    """The scripted controller, calling `on_reply(stage)` before each reply."""

    on_reply: Callable[[str], None] | None = None

    def _reply(self, messages: Sequence[BaseMessage]) -> str:
        if self.on_reply:
            self.on_reply(stage_of(messages))
        return super()._reply(messages)


def pick_main_model(messages: Sequence[BaseMessage]) -> str:
    match = MAIN_MODEL.search(messages[-1].text)
    return json.dumps({"model_id": match.group() if match else "", "reason": "the main model"})


def answer_from_results(messages: Sequence[BaseMessage]) -> str:
    """An answer that depends on every result, so a resumed run must have the same results to give the same one."""
    return "From the results: " + messages[-1].text.partition("Results:\n")[2]


def logged_model(log: Path, delay: float, kill: Kill | None):
    async def run(card, task, inputs, artifacts) -> RunnerOutput:
        if kill:
            kill.reached("execute")
        with log.open("a") as out:
            out.write(f"start {card.id}\n")
        await asyncio.sleep(delay)
        with log.open("a") as out:
            out.write(f"finish {card.id}\n")
        return RunnerOutput(text=f"{card.id}[{inputs['text']}]")

    return run


async def main(arguments: argparse.Namespace) -> None:
    workdir: Path = arguments.workdir
    kill = Kill(arguments.kill) if arguments.kill else None
    log = workdir / "calls.log"
    scripts = {
        f"{prefix}-{task}": logged_model(log, arguments.slow_seconds if delay is None else delay, kill)
        for task, delay in DELAYS.items()
        for prefix in ("m", "alt")
    }
    cards = [CatalogEntry(id=f"m-{task}", task=task, downloads=10) for task in DELAYS]
    context = HuggingGraphContext(
        llm=HookedChatModel(
            plan=PLAN, select=pick_main_model, respond=answer_from_results, on_reply=kill.reached if kill else None
        ),
        catalog=InMemoryCatalog([*cards, *(CatalogEntry(id=f"alt-{task}", task=task) for task in DELAYS)]),
        runners=[ScriptedRunner(scripts)],
        workspace=workdir,
        artifacts_dir=workdir / "artifacts",
        planning=PlanningAids(demos="static"),  # no retrieval model to load: each process starts faster
    )
    store = {"checkpoint_url": arguments.checkpoint_url, "checkpoint_path": workdir / "checkpoints.sqlite"}
    if arguments.mode == "run":
        out = await arun("tell a story", context, thread_id=arguments.thread_id, **store)
    else:
        out = await aresume(arguments.thread_id, context, **store)
    if kill:
        await kill.after_run()
    results = {
        str(task_id): result.model_dump(exclude={"started_at", "finished_at"})
        for task_id, result in out["results"].items()
    }
    plan = [task.model_dump() for task in out["plan"]]
    summary = {"plan": plan, "results": results, "answer": out["answer"]}
    (workdir / f"{arguments.thread_id}.json").write_text(json.dumps(summary))


def parse(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["run", "resume"])
    parser.add_argument("workdir", type=Path)
    parser.add_argument("thread_id")
    parser.add_argument("slow_seconds", type=float, help="how long the summarization model takes")
    parser.add_argument("checkpoint_url", nargs="?")
    parser.add_argument("--kill", metavar="STAGE:INDEX:DELAY")
    return parser.parse_args(argv)


if __name__ == "__main__":
    asyncio.run(main(parse()))
