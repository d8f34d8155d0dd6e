"""A HuggingGraph run in its own process, for the crash-recovery test to SIGKILL and resume.

Usage: python crash_worker.py run|resume WORKDIR THREAD_ID SLOW_SECONDS [CHECKPOINT_URL]
Runs are saved in PostgreSQL at CHECKPOINT_URL when given, else in WORKDIR/checkpoints.sqlite. Every model call
appends `start <model>` / `finish <model>` to WORKDIR/calls.log; the final results go to WORKDIR/<THREAD_ID>.json.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from hugginggraph import HuggingGraphContext, aresume, arun
from hugginggraph.testing import ScriptedChatModel, ScriptedRunner
from hugginggraph.tools.catalog import InMemoryCatalog, ModelCard
from hugginggraph.tools.runners.base import RunnerOutput

PLAN = [
    {"task": "text-generation", "id": 0, "dep": [-1], "args": {"text": "once upon a time"}},
    {"task": "text-classification", "id": 1, "dep": [-1], "args": {"text": "a fine day"}},
    {"task": "summarization", "id": 2, "dep": [0], "args": {"text": "<GENERATED>-0"}},
    {"task": "translation", "id": 3, "dep": [2, 1], "args": {"text": "<GENERATED>-2 / <GENERATED>-1"}},
]
DELAYS = {"text-generation": 0.2, "text-classification": 0.2, "summarization": None, "translation": 0.1}


def logged_model(log: Path, delay: float):
    async def run(card, task, inputs, artifacts) -> RunnerOutput:
        with log.open("a") as out:
            out.write(f"start {card.id}\n")
        await asyncio.sleep(delay)
        with log.open("a") as out:
            out.write(f"finish {card.id}\n")
        return RunnerOutput(text=f"{card.id}[{inputs['text']}]")

    return run


async def main(mode: str, workdir: Path, thread_id: str, slow_seconds: float, checkpoint_url: str | None) -> None:
    log = workdir / "calls.log"
    runner = ScriptedRunner(
        {f"m-{task}": logged_model(log, slow_seconds if delay is None else delay) for task, delay in DELAYS.items()}
    )
    context = HuggingGraphContext(
        llm=ScriptedChatModel(plan=PLAN, respond="All four tasks ran."),
        catalog=InMemoryCatalog(ModelCard(id=f"m-{task}", task=task) for task in DELAYS),
        runners=[runner],
        workspace=workdir,
        artifacts_dir=workdir / "artifacts",
    )
    store = {"checkpoint_url": checkpoint_url, "checkpoint_path": workdir / "checkpoints.sqlite"}
    if mode == "run":
        out = await arun("tell a story", context, thread_id=thread_id, **store)
    else:
        out = await aresume(thread_id, context, **store)
    results = {
        str(task_id): result.model_dump(exclude={"started_at", "finished_at"})
        for task_id, result in out["results"].items()
    }
    (workdir / f"{thread_id}.json").write_text(json.dumps({"results": results, "answer": out["answer"]}))


if __name__ == "__main__":
    mode, workdir, thread_id, slow, *url = sys.argv[1:]
    asyncio.run(main(mode, Path(workdir), thread_id, float(slow), url[0] if url else None))
