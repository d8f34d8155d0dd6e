"""The load benchmark (benchmarks/load.py) on a smaller load, so its accounting cannot rot: a real `langgraph dev`
carrying fewer runs at once than are fired, each run's outcome judged by the benchmark's own code."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
RUNS = 12
JOBS = 4
"""Fewer jobs than runs: the server queues a third of them, as it queues 40 of the benchmark's 50."""


@pytest.fixture(scope="module")
def benchmark() -> ModuleType:
    """benchmarks/load.py, imported as `python benchmarks/load.py` runs it: with its folder on the path, for the
    harness it imports by name, and registered while it runs, for its dataclasses."""
    spec = importlib.util.spec_from_file_location("load_benchmark", BENCHMARKS / "load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(BENCHMARKS))
        patch.setitem(sys.modules, spec.name, module)
        spec.loader.exec_module(module)
    return module


@pytest.mark.slow
async def test_every_run_under_load_is_answered_or_fails_with_a_reason_and_none_is_lost_or_mixed(
    benchmark: ModuleType, tmp_path: Path
):
    report = await benchmark.load(tmp_path, runs=RUNS, jobs=JOBS, limit_s=240)
    assert sorted(outcome.n for outcome in report.outcomes) == list(range(RUNS))
    everyone = [report.warm_up, *report.outcomes]
    problems = [outcome.line() for outcome in everyone if outcome.status == "lost" or outcome.mixed]
    assert not problems, problems
    assert all(outcome.status == "answered" or outcome.reason for outcome in everyone)
    assert report.summary().startswith(f"load: runs={RUNS} jobs={JOBS} answered=")
