"""A pool of loaded models shared by the local runners: each model loads once, calls to it never overlap, and the
least recently used models are dropped when the pool holds too many of them or too many bytes.

A runner gives the pool a `load(card)` function and, for a memory bound, a `size_of(card, model)` function, then
runs every call inside `with pool.use(card) as model:`; as a `PooledRunner` it keeps the pool as `pool` and tells
its count of loads. The pool is thread-safe: runners call it from `asyncio.to_thread` workers.

One lock per model id is held for the whole `with` block. It makes a second caller wait for the first load
instead of loading the same weights again, and it serialises calls to one model (fast tokenizers, some pipelines
and CTranslate2's per-model threads do not take concurrent calls well); different models still run in parallel.
The lock also marks a model as in use, and a model in use is never evicted: when every model over the bound is in
use, the pool holds more than its bound until they are released, and evicts then. Nor is the most recently used
model evicted, so a model larger than `max_bytes` on its own stays loaded until another one is used, rather than
being loaded again for every call. The lock is not re-entrant: using a model inside its own `with` block deadlocks.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from hugginggraph.tools.catalog import CatalogEntry

if TYPE_CHECKING:
    import torch

T = TypeVar("T")


@dataclass(frozen=True)
class _Loaded(Generic[T]):
    model: T
    size: int
    """Bytes, as `size_of` measured them once, right after the load."""


class ModelPool(Generic[T]):
    """Loaded models by card id, least recently used first, bounded by count and/or bytes (None: no bound)."""

    def __init__(
        self,
        load: Callable[[CatalogEntry], T],
        *,
        max_loaded: int | None = None,
        max_bytes: int | None = None,
        size_of: Callable[[CatalogEntry, T], int] | None = None,
    ) -> None:
        if max_bytes is not None and size_of is None:
            raise ValueError("a pool bounded by bytes needs size_of to measure its models")
        self._load = load
        self._size_of = size_of
        self.max_loaded = max_loaded
        """At most this many models stay loaded (models in use and the latest aside); None: no bound on the count."""
        self.max_bytes = max_bytes
        """At most this many bytes of models stay loaded (models in use and the latest aside); None: no bound."""
        self.loads = 0
        """How many models this pool has loaded: lets callers check that a model loads once."""
        self._entries: OrderedDict[str, _Loaded[T]] = OrderedDict()
        self._model_locks: dict[str, threading.Lock] = {}
        # Guards the fields above; never held while a model loads or runs. Model locks are taken before it,
        # except in `_evict`, which only tries them without waiting.
        self._guard = threading.Lock()

    @contextmanager
    def use(self, card: CatalogEntry) -> Iterator[T]:
        """The loaded model for `card`, loading it first if needed, with the model's lock held until the block
        ends. A load error propagates and nothing is kept, so the next `use` tries the load again."""
        try:
            with self._model_lock(card.id):
                yield self._get(card)
        finally:
            self._evict()  # models that were in use when the bound was last exceeded may go now

    @property
    def loaded(self) -> list[str]:
        """The ids of the loaded models, least recently used first."""
        with self._guard:
            return list(self._entries)

    @property
    def loaded_bytes(self) -> int:
        """The loaded models' total size as `size_of` measured it (0 without `size_of`)."""
        with self._guard:
            return sum(entry.size for entry in self._entries.values())

    def _model_lock(self, model_id: str) -> threading.Lock:
        # Locks are kept for good, even when their model is evicted: a thread may already hold this one, and a
        # second lock for the same id would let two loads or two calls overlap. One small lock per id ever used.
        with self._guard:
            return self._model_locks.setdefault(model_id, threading.Lock())

    def _get(self, card: CatalogEntry) -> T:
        """The model for `card`, loaded if absent; the caller holds the model's lock, so no one else loads it."""
        with self._guard:
            entry = self._entries.get(card.id)
            if entry is not None:
                self._entries.move_to_end(card.id)
                return entry.model
        model = self._load(card)
        size = self._size_of(card, model) if self._size_of else 0
        with self._guard:
            self._entries[card.id] = _Loaded(model, size)
            self.loads += 1
        # The new model's size is known only now, so the memory briefly holds it and the models it displaces.
        self._evict()
        return model

    def _evict(self) -> None:
        """Drop least recently used models until the pool is within its bounds, skipping models in use and the
        most recently used one."""
        dropped: list[_Loaded[T]] = []
        with self._guard:
            for model_id in list(self._entries)[:-1]:  # least recently used first; never the most recent
                if not self._over_bound():
                    break
                lock = self._model_locks[model_id]
                if lock.acquire(blocking=False):  # held: the model is in use (or loading, or about to be)
                    try:
                        dropped.append(self._entries.pop(model_id))
                    finally:
                        lock.release()
        # `dropped` goes out of scope after the guard is released: freeing a large model takes time.

    def _over_bound(self) -> bool:
        too_many = self.max_loaded is not None and len(self._entries) > self.max_loaded
        too_big = self.max_bytes is not None and sum(e.size for e in self._entries.values()) > self.max_bytes
        return too_many or too_big


class PooledRunner(Generic[T]):
    """What every runner that keeps its models in a `ModelPool` shares: the pool, and the count of loads that
    callers and tests read without reaching into it."""

    pool: ModelPool[T]
    """The loaded models; the runner's `__init__` builds it with the runner's own load function and bounds."""

    @property
    def loads(self) -> int:
        """How many models this runner has loaded: lets callers check that a model loads once."""
        return self.pool.loads


def torch_bytes(value: Any) -> int:
    """Bytes held by the parameters and buffers of the torch modules in `value`, each tensor counted once.

    `value` may be a module, a `transformers` pipeline or anything else keeping its module as `.model`, a
    `diffusers` pipeline (its `.components`), or a `functools.partial`, tuple, list or dict holding these, which
    is how the runners' predictors keep their models. Anything else counts 0 bytes. Activations and the CUDA
    allocator's cache are not counted: leave room for them when choosing a bound.
    """
    tensors = {
        id(tensor): tensor
        for module in _modules_in(value, depth=4)
        for tensor in itertools.chain(module.parameters(), module.buffers())
    }
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors.values())


def _modules_in(value: Any, depth: int) -> Iterator[torch.nn.Module]:
    import torch

    if isinstance(value, torch.nn.Module):
        yield value
        return
    if depth == 0:
        return
    if isinstance(value, partial):
        children = [*value.args, *value.keywords.values()]
    elif isinstance(value, tuple | list):
        children = list(value)
    elif isinstance(value, dict):
        children = list(value.values())
    else:
        children = [getattr(value, "model", None), getattr(value, "components", None)]
    for child in children:
        yield from _modules_in(child, depth - 1)
