"""Run models on this machine with `transformers` (and `diffusers`, when installed), each loaded once per process.

Most tasks run through a `transformers` pipeline (`pipeline_tasks.py`); those that transformers 5.x dropped
from `pipeline()` run through the Auto classes (`auto_tasks.py`); text-to-image and image-to-image run through
`diffusers` (`diffusion_tasks.py`). Each loads a model into a `Predictor`, a function of the task's arguments,
so the runner only pools predictors and hands their raw output to `outputs.py`. How each task reads its
arguments (question and context, candidate labels, WAV files) is documented in `task_inputs.py`.

Torch and transformers are imported only when the first model runs: importing them costs seconds, and a CLI
that only plans should not pay it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections import OrderedDict
from typing import Protocol

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.auto_tasks import AUTO_TASKS
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.diffusion_tasks import DIFFUSION_TASKS
from hugginggraph.tools.runners.outputs import to_runner_output
from hugginggraph.tools.runners.pipeline_tasks import PIPELINE_TASKS
from hugginggraph.tools.runners.task_inputs import Predictor


class LocalTask(Protocol):
    """How one task type loads a model into a predictor."""

    @property
    def library(self) -> str:
        """The library that runs the task's models, as the Hub names it (a card's `library`)."""
        ...

    def load(self, model: str, device: str) -> Predictor:
        """Load `model` (a local folder or a Hub id) onto `device`; raise when it cannot be loaded."""
        ...


LOCAL_TASKS: dict[str, LocalTask] = {**PIPELINE_TASKS, **AUTO_TASKS, **DIFFUSION_TASKS}
"""Every Hub task id this runner can run, and how."""


class LocalTransformersRunner:
    """A bounded pool of loaded models (least recently used goes first), one load per model id."""

    def __init__(self, device: str = "cpu", max_loaded: int = 8, torch_threads: int | None = None) -> None:
        self.device = device
        self.max_loaded = max_loaded
        self.torch_threads = torch_threads
        self._predictors: OrderedDict[str, Predictor] = OrderedDict()
        self._pool_lock = threading.Lock()
        self._model_locks: dict[str, threading.Lock] = {}
        self.loads = 0
        """How many models this runner has loaded: lets callers check that a model loads once."""

    def can_run(self, card: ModelCard) -> bool:
        """Whether the card's task is one of ours, for the card's library, and that library is installed."""
        task = LOCAL_TASKS.get(card.task)
        return task is not None and task.library == card.library and importlib.util.find_spec(card.library) is not None

    async def run(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        return await asyncio.to_thread(self._run_sync, card, task, inputs, artifacts)

    def _run_sync(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        # One lock per model: it loads once, and calls to one model never overlap (fast tokenizers and some
        # pipelines are not thread-safe). Different models still run in parallel.
        with self._model_lock(card.id):
            raw = self._predictor(card)(inputs)
        return to_runner_output(raw, artifacts, task=task, inputs=inputs)

    def _model_lock(self, model_id: str) -> threading.Lock:
        with self._pool_lock:
            return self._model_locks.setdefault(model_id, threading.Lock())

    def _predictor(self, card: ModelCard) -> Predictor:
        """The loaded predictor for `card`, loading it if needed; the caller holds the model's lock."""
        with self._pool_lock:
            if card.id in self._predictors:
                self._predictors.move_to_end(card.id)
                return self._predictors[card.id]
        predictor = self._load(card)
        with self._pool_lock:
            self._predictors[card.id] = predictor
            while len(self._predictors) > self.max_loaded:
                self._predictors.popitem(last=False)
        return predictor

    def _load(self, card: ModelCard) -> Predictor:
        import torch

        if self.torch_threads:
            torch.set_num_threads(self.torch_threads)
        try:
            predictor = LOCAL_TASKS[card.task].load(card.path or card.id, self.device)
        except Exception as error:
            raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
        self.loads += 1
        return predictor
