"""The LangGraph server under load: many runs fired at once at a real `langgraph dev` (tests/langgraph_server.py) on
127.0.0.1, each on a LangGraph thread of its own, the scripted controller of the concurrency test
(tests/graph/test_concurrency.py) planning one text-classification task on a tiny random-weight model in the
server's home. The server carries `--jobs` runs at once and queues the rest.

Each run carries its own marker (`job-7`), which the scripted planner and responder pass on, so a run that saw
another run's state would name a second marker: every marker in a run's final state and in its thread's saved
values must be its own, and its answer must name it. A run is answered (its final state has an answer), failed
(with the reason: the server's error, the state's stop reason, or the HTTP error), or lost (not finished within
`--limit-s`). Its latency runs from creating its thread to reading the thread's saved state, so queueing counts.

One run goes first, alone and judged the same way but left out of the figures: the server's first run starts a
model worker, imports the model libraries and loads the model, many times what a later run takes, so without it the
fired runs would wait on that start and the figures would time a cold server, not the load. (Model calls run as the
server's settings say: isolated, as by default on a server, calls of the one model wait for its warm worker, as they
would wait for its lock in a thread; `--in-threads` runs them in the server's threads.)

Prints the warm-up run's line, one line per run that failed, was lost or was mixed, then, last,
`load: runs=.. jobs=.. answered=.. failed=.. lost=.. mixed=.. p50_s=.. p95_s=.. throughput_rps=.. wall_s=..`:
latencies of the runs that finished (answered or failed), answered runs per second of wall time, and wall time from
the first request to the last run's end (server start-up left out). Exits 1 if a run was lost or mixed.
Run: python benchmarks/load.py [--runs 50] [--jobs 10] [--limit-s 600] [--in-threads]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import math
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from harness import ROOT, load_test_module

from hugginggraph.testing.tiny_models import build_tiny_model

sys.path.insert(0, str(ROOT / "tests"))  # the test modules import their helpers (openai_fake, ...) by name
# By name, not from its file: its dataclass needs its module registered (the concurrency test imports it so too).
langgraph_server = importlib.import_module("langgraph_server")
concurrency = load_test_module("tests/graph/test_concurrency.py")

TASK = "text-classification"
TINY_MODEL = f"tiny-{TASK}"

Status = Literal["answered", "failed", "lost"]


@dataclass(frozen=True)
class Outcome:
    """What became of one run."""

    n: int
    """The run's number: its marker is `job-<n>`."""
    status: Status
    reason: str
    """Why it failed or was lost; empty when answered."""
    seconds: float | None
    """From creating its thread to reading its saved state; None when lost."""
    mixed: bool
    """Its state names another run's marker, or its answer does not name its own."""

    def line(self) -> str:
        """The run's line in the report: the warm-up run's, and any run's that failed, was lost or was mixed."""
        mixed = " (mixed: names another run's marker)" if self.mixed else ""
        took = f" in {self.seconds:.1f} s" if self.seconds is not None else ""
        return f"job-{self.n}: {self.status}{took}{mixed}{': ' if self.reason else ''}{self.reason}"


@dataclass(frozen=True)
class Report:
    """Every run's outcome, and the wall time from the first request to the last run's end (or to the bound)."""

    runs: int
    jobs: int
    warm_up: Outcome
    """The run before the others, left out of the figures."""
    outcomes: list[Outcome]
    wall_s: float

    def count(self, status: Status) -> int:
        return sum(outcome.status == status for outcome in self.outcomes)

    @property
    def mixed(self) -> int:
        return sum(outcome.mixed for outcome in self.outcomes)

    def summary(self) -> str:
        latencies = sorted(outcome.seconds for outcome in self.outcomes if outcome.seconds is not None)
        answered = self.count("answered")
        return (
            f"load: runs={self.runs} jobs={self.jobs} answered={answered} failed={self.count('failed')} "
            f"lost={self.count('lost')} mixed={self.mixed} p50_s={percentile(latencies, 0.50):.2f} "
            f"p95_s={percentile(latencies, 0.95):.2f} throughput_rps={answered / self.wall_s:.2f} "
            f"wall_s={self.wall_s:.1f}"
        )


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile of sorted values (NaN for none): defined for one value, as a load may end with."""
    if not ordered:
        return math.nan
    return ordered[max(math.ceil(fraction * len(ordered)) - 1, 0)]


@contextmanager
def marked_server(root: Path, jobs: int, in_threads: bool = False) -> Iterator[Any]:
    """`langgraph dev` carrying `jobs` runs at once, its controller scripted as the concurrency test's: it writes
    each request's marker into its plan, chooses the tiny real model, and names every marker it is shown. Its model
    calls run isolated, as on any server by default, or with `in_threads` in its own threads."""
    build_tiny_model(TASK, root / "home" / "models" / TINY_MODEL)
    replies = {
        "plan": lambda texts: json.dumps({"tasks": concurrency.marked_plan(texts[-1], [TASK])}),
        "respond": lambda texts: concurrency.markers_named(texts[-1]),
        "select": json.dumps({"model_id": TINY_MODEL, "reason": "the tiny real model"}),
    }
    settings = {"HUGGINGGRAPH_ISOLATE_MODELS": "false"} if in_threads else {}
    with langgraph_server.langgraph_dev(root, replies, jobs, settings) as server:
        yield server


def judge(n: int, state: dict[str, Any], saved: Any, seconds: float) -> Outcome:
    """Answered or failed, from the run's final state (`runs/wait` answers a run's error as `__error__`), and
    mixed if anything in it or in its thread's saved values names another run's marker."""
    own = f"job-{n}"
    mixed = bool(set(concurrency.MARKER.findall(json.dumps([state, saved]))) - {own})
    if error := state.get("__error__"):
        return Outcome(n, "failed", f"{error.get('error')}: {error.get('message')}", seconds, mixed)
    if not state.get("answer"):
        reason = state.get("stopped") or state.get("plan_error") or "the final state has no answer"
        return Outcome(n, "failed", reason, seconds, mixed)
    mixed = mixed or own not in concurrency.MARKER.findall(state["answer"])
    return Outcome(n, "answered", "", seconds, mixed)


async def timed_run(client: httpx.AsyncClient, n: int) -> Outcome:
    """Run request `n` on a new thread, as the concurrency test does, and judge it; an HTTP error fails it."""
    started = time.perf_counter()
    try:
        state, saved = await concurrency.run_over_http(client, n)
    except (httpx.HTTPError, ValueError, KeyError) as error:  # ValueError: a body that is not JSON
        return Outcome(n, "failed", f"{type(error).__name__}: {error}", time.perf_counter() - started, False)
    return judge(n, state, saved, time.perf_counter() - started)


async def fire(url: str, runs: int, limit_s: float) -> tuple[Outcome, list[Outcome], float]:
    """A warm-up run (marker `job-<runs>`, apart from the others'), then every run at once on one client with a
    connection for each; those unfinished after `limit_s` are lost."""
    limits = httpx.Limits(max_connections=runs, max_keepalive_connections=runs)
    async with httpx.AsyncClient(base_url=url, timeout=limit_s, limits=limits) as client:
        warm_up = await timed_run(client, runs)
        started = time.perf_counter()
        pending = [asyncio.create_task(timed_run(client, n)) for n in range(runs)]
        await asyncio.wait(pending, timeout=limit_s)
        wall_s = time.perf_counter() - started
        outcomes = [
            task.result() if task.done() else Outcome(n, "lost", f"not finished after {limit_s:g} s", None, False)
            for n, task in enumerate(pending)
        ]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
    return warm_up, outcomes, wall_s


async def load(root: Path, runs: int, jobs: int, limit_s: float, in_threads: bool = False) -> Report:
    """`runs` runs fired at once at a server started in `root` that carries `jobs` of them at a time."""
    with marked_server(root, jobs, in_threads) as server:
        warm_up, outcomes, wall_s = await fire(server.url, runs, limit_s)
    return Report(runs, jobs, warm_up, outcomes, wall_s)


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--runs", type=int, default=50, help="runs fired at once")
    options.add_argument("--jobs", type=int, default=10, help="the server's --n-jobs-per-worker: runs carried at once")
    options.add_argument("--limit-s", type=float, default=600, help="runs unfinished after this many seconds are lost")
    options.add_argument(
        "--in-threads", action="store_true", help="the server runs model calls in its threads, not isolated"
    )
    args = options.parse_args()
    with tempfile.TemporaryDirectory() as root:
        report = asyncio.run(load(Path(root), args.runs, args.jobs, args.limit_s, args.in_threads))
    print(f"warm-up {report.warm_up.line()}")
    for outcome in report.outcomes:
        if outcome.status != "answered" or outcome.mixed:
            print(outcome.line())
    print(report.summary())
    if report.count("lost") or report.mixed or report.warm_up.mixed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
