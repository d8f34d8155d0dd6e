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
import os
import threading
from typing import Literal, Protocol

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.auto_tasks import AUTO_TASKS
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.diffusion_tasks import DIFFUSION_TASKS
from hugginggraph.tools.runners.hub_downloads import HubDownloads
from hugginggraph.tools.runners.model_sources import model_source
from hugginggraph.tools.runners.outputs import to_runner_output
from hugginggraph.tools.runners.pipeline_tasks import PIPELINE_TASKS
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner, torch_bytes
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


class LocalTransformersRunner(PooledRunner[Predictor]):
    """Runs `LOCAL_TASKS` on this machine, keeping loaded models in a `ModelPool` (one load per model id, calls to
    one model one at a time, least recently used evicted first).

    `device` is where models load: "cpu", "cuda", "cuda:1", "mps", ... or "auto", the default: CUDA when
    `torch.cuda.is_available()`, else MPS when available, else the CPU. "auto" is decided at the first load, so
    constructing a runner imports nothing.

    The pool keeps at most `max_loaded` models and at most `max_bytes` bytes of them (parameters and buffers, see
    `torch_bytes`; activations come on top). `max_bytes="auto"`, the default, is half the memory of the device
    (GPU memory for CUDA, the machine's RAM for the CPU and for MPS, which shares it), decided at the first
    load; None sets no bound on bytes. Neither a model in use nor the latest one is evicted (see `ModelPool`), so
    the pool may exceed its bounds for a while.

    A card without a folder names a Hub model: `hub_downloads` fetches its files into the Hugging Face cache, within
    its disk budget and with progress bars, and the model loads from there (default: `HubDownloads()`).
    """

    def __init__(
        self,
        device: str = "auto",
        max_loaded: int = 8,
        torch_threads: int | None = None,
        max_bytes: int | Literal["auto"] | None = "auto",
        hub_downloads: HubDownloads | None = None,
    ) -> None:
        self.device = device
        """The device asked for; "auto" until the first load resolves it (see the class docstring)."""
        self.torch_threads = torch_threads
        """Torch's intra-op threads (process-wide), set at each load; None leaves torch's default."""
        self.hub_downloads = hub_downloads or HubDownloads()
        """Fetches the files of Hub models (cards without a folder) before they load."""
        self._auto_max_bytes = max_bytes == "auto"
        self.pool = ModelPool(
            self._load,
            max_loaded=max_loaded,
            max_bytes=None if max_bytes == "auto" else max_bytes,
            size_of=lambda _card, predictor: torch_bytes(predictor),
        )
        """The loaded predictors: `pool.loaded` and `pool.loaded_bytes` say what it holds."""
        self._device_lock = threading.Lock()

    def can_run(self, card: CatalogEntry) -> bool:
        """Whether the card's task is one of ours, for the card's library, and that library is installed."""
        task = LOCAL_TASKS.get(card.task)
        return task is not None and task.library == card.library and importlib.util.find_spec(card.library) is not None

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        return await asyncio.to_thread(self._run_sync, card, task, inputs, artifacts)

    def _run_sync(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        with self.pool.use(card) as predictor:
            raw = predictor(inputs)
        return to_runner_output(raw, artifacts, task=task, inputs=inputs)

    def _load(self, card: CatalogEntry) -> Predictor:
        source = model_source(card)  # before torch is even imported
        if card.path is None:  # a checked Hub id
            source = self.hub_downloads.fetch(source)
        import torch

        if self.torch_threads:
            torch.set_num_threads(self.torch_threads)
        device = self._resolve_device()
        try:
            return LOCAL_TASKS[card.task].load(source, device)
        except Exception as error:
            raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error

    def _resolve_device(self) -> str:
        """The concrete device, resolving "auto" (and an "auto" memory bound with it) on the first load."""
        with self._device_lock:  # first loads of different models run in parallel
            if self.device == "auto":
                self.device = best_device()
            if self._auto_max_bytes:
                memory = device_memory(self.device)
                self.pool.max_bytes = None if memory is None else memory // 2
                self._auto_max_bytes = False
            return self.device


def best_device() -> str:
    """CUDA when torch can use it, else Apple's MPS, else the CPU."""
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def device_memory(device: str) -> int | None:
    """Total bytes of memory on `device`: the GPU's own for CUDA, the machine's RAM for the CPU and for MPS (which
    shares it); None when it cannot be told (another device type, or a system without `os.sysconf`)."""
    kind = device.split(":")[0]
    if kind == "cuda":
        import torch

        return int(torch.cuda.get_device_properties(torch.device(device)).total_memory)
    if kind in ("cpu", "mps"):
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):  # Windows has no sysconf
            return None
    return None
