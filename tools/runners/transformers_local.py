"""Run models on this machine with `transformers` pipelines, each loaded once per process.

Torch and transformers are imported only when the first model runs: importing them costs seconds, and a CLI
that only plans should not pay it.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from typing import Any

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.outputs import to_runner_output
from hugginggraph.tools.tasks import TASKS

# Hub task id -> the `transformers.pipeline` task that serves it (transformers 5.x names).
PIPELINE_TASKS: dict[str, str] = {
    "token-classification": "token-classification",
    "text-classification": "text-classification",
    "zero-shot-classification": "zero-shot-classification",
    "text-generation": "text-generation",
    "feature-extraction": "feature-extraction",
    "fill-mask": "fill-mask",
    "image-classification": "image-classification",
    "object-detection": "object-detection",
    "image-segmentation": "image-segmentation",
    "depth-estimation": "depth-estimation",
}


class LocalTransformersRunner:
    """A bounded pool of loaded pipelines (least recently used goes first), one load per model id."""

    def __init__(self, device: str = "cpu", max_loaded: int = 8, torch_threads: int | None = None) -> None:
        self.device = device
        self.max_loaded = max_loaded
        self.torch_threads = torch_threads
        self._pipelines: OrderedDict[str, Any] = OrderedDict()
        self._pool_lock = threading.Lock()
        self._model_locks: dict[str, threading.Lock] = {}
        self.loads = 0
        """How many pipelines this runner has built: lets callers check that a model loads once."""

    def can_run(self, card: ModelCard) -> bool:
        return card.library == "transformers" and card.task in PIPELINE_TASKS

    async def run(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        return await asyncio.to_thread(self._run_sync, card, task, inputs, artifacts)

    def _run_sync(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        # One lock per model: it loads once, and calls to one pipeline never overlap (fast tokenizers and some
        # pipelines are not thread-safe). Different models still run in parallel.
        with self._model_lock(card.id):
            pipe = self._pipeline(card)
            raw = pipe(*self._call_args(task, inputs), **self._call_options(task, inputs))
        return to_runner_output(raw, artifacts)

    def _model_lock(self, model_id: str) -> threading.Lock:
        with self._pool_lock:
            return self._model_locks.setdefault(model_id, threading.Lock())

    def _pipeline(self, card: ModelCard) -> Any:
        """The loaded pipeline for `card`, loading it if needed; the caller holds the model's lock."""
        with self._pool_lock:
            if card.id in self._pipelines:
                self._pipelines.move_to_end(card.id)
                return self._pipelines[card.id]
        pipe = self._load(card)
        with self._pool_lock:
            self._pipelines[card.id] = pipe
            while len(self._pipelines) > self.max_loaded:
                self._pipelines.popitem(last=False)
        return pipe

    def _load(self, card: ModelCard) -> Any:
        import torch
        from transformers import pipeline

        if self.torch_threads:
            torch.set_num_threads(self.torch_threads)
        try:
            # transformers' overloads only admit literal task names; ours come from PIPELINE_TASKS.
            pipe = pipeline(  # type: ignore[call-overload]
                PIPELINE_TASKS[card.task],
                model=card.path or card.id,
                device=self.device,
                trust_remote_code=False,
            )
        except Exception as error:
            raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
        self.loads += 1
        return pipe

    @staticmethod
    def _call_args(task: str, inputs: dict[str, str]) -> list[Any]:
        spec = TASKS[task]
        if spec.inputs[0] == "image":
            from PIL import Image

            with Image.open(inputs["image"]) as image:
                return [image.convert("RGB")]
        return [inputs["text"]]

    @staticmethod
    def _call_options(task: str, inputs: dict[str, str]) -> dict[str, Any]:
        """Per-task call options; long inputs are truncated (or, for generation, cut from the front) rather
        than overrunning the model's position table."""
        if task == "zero-shot-classification":
            labels = [label.strip() for label in inputs.get("labels", "").split(",") if label.strip()]
            return {"candidate_labels": labels, "truncation": True}
        if task == "text-generation":
            return {"max_new_tokens": 20, "return_full_text": False, "handle_long_generation": "hole"}
        if task == "text-classification":
            return {"truncation": True}
        return {}
