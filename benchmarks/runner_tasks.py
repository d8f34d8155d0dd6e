"""Per-task call times of the local expert runner on the tiny random models `tiny_models` builds from configs.

For each task: the first call into a fresh runner, which loads the model from its folder (the first task run also
pays transformers' lazy imports), and the median of `--calls` calls after it. Torch runs on one thread, so the
numbers compare across machines. The models have 2 layers of width 32, so what is timed is the runner's fixed
cost per task (loading, pre- and post-processing, writing artifacts), not model compute: what a task costs a
graph run beyond its model. Inputs and output checks are the task-coverage test's
(tests/tools/runners/test_task_coverage.py), so every timed call is one that passes it. Diffusion tasks run
only when `diffusers` is installed.

Prints a table, one `task=<id> first_ms=.. steady_ms=..` line per task, then, last, `tasks_ok=<ran>/<asked>`.
Run: python benchmarks/runner_tasks.py [--tasks text-classification,object-detection] [--calls 5]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch
from harness import load_test_module
from transformers.utils import logging as transformers_logging

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.runners.transformers_local import LOCAL_TASKS, LocalTransformersRunner

coverage = load_test_module("tests/tools/runners/test_task_coverage.py")


@dataclass(frozen=True)
class TaskTimes:
    build_ms: float
    """Building the tiny model folder (not a runner cost; shown so a slow first call can be told apart)."""
    first_ms: float
    steady_ms: float


async def time_task(task: str, calls: int, media: dict[str, str], folder: Path, device: str) -> TaskTimes:
    arguments, check = coverage.CASES[task]
    inputs = {name: media.get(value, value) for name, value in arguments.items()}
    started = time.perf_counter()
    card = coverage.tiny_card(task, folder / "model")
    build_ms = (time.perf_counter() - started) * 1000
    runner = LocalTransformersRunner(device=device, torch_threads=1)
    artifacts = ArtifactStore(folder / "run", 0)
    started = time.perf_counter()
    output = await runner.run(card, task, inputs, artifacts)
    first_ms = (time.perf_counter() - started) * 1000
    check(output, inputs)
    steady: list[float] = []
    for _ in range(calls):
        started = time.perf_counter()
        await runner.run(card, task, inputs, artifacts)
        steady.append((time.perf_counter() - started) * 1000)
    return TaskTimes(build_ms, first_ms, statistics.median(steady))


async def main(tasks: list[str], calls: int, device: str) -> None:
    torch.set_num_threads(1)
    transformers_logging.disable_progress_bar()  # a bar per model saved and loaded, on stderr
    times: dict[str, TaskTimes] = {}
    problems: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as workdir:
        media = coverage.make_media(Path(workdir))
        for task in tasks:
            library = LOCAL_TASKS[task].library
            if importlib.util.find_spec(library) is None:
                problems[task] = f"skipped: {library} is not installed"
                continue
            try:
                times[task] = await time_task(task, calls, media, Path(workdir) / task, device)
            except Exception as error:  # one broken task must not hide the others' times
                problems[task] = f"failed: {type(error).__name__}: {error}"
    width = max(len(task) for task in tasks)
    print(f"{'task':<{width}}  {'build_ms':>9}  {'first_ms':>9}  {'steady_ms':>9}")
    for task in tasks:
        if task in times:
            t = times[task]
            print(f"{task:<{width}}  {t.build_ms:9.1f}  {t.first_ms:9.1f}  {t.steady_ms:9.1f}")
        else:
            print(f"{task:<{width}}  {problems[task]}")
    for task, t in times.items():
        print(f"task={task} first_ms={t.first_ms:.1f} steady_ms={t.steady_ms:.1f}")
    print(f"tasks_ok={len(times)}/{len(tasks)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", help="comma-separated Hub task ids (default: every task the runner knows)")
    parser.add_argument("--calls", type=int, default=5, help="calls after the first, whose median is steady_ms")
    parser.add_argument("--device", default="cpu", help="where models load: cpu (default), cuda, auto, ...")
    args = parser.parse_args()
    chosen = args.tasks.split(",") if args.tasks else list(coverage.CASES)
    if unknown := [task for task in chosen if task not in coverage.CASES]:
        parser.error(f"unknown tasks {', '.join(unknown)}; known: {', '.join(coverage.CASES)}")
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    asyncio.run(main(chosen, args.calls, args.device))
