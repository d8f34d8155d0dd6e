"""The model pool on plain Python objects: one load per id under threads, LRU eviction by count and by bytes,
models in use kept, load errors retried. The last tests measure real torch modules and are marked slow."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest

from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.pool import ModelPool, torch_bytes


@dataclass
class Model:
    id: str
    size: int


def card(model_id: str) -> CatalogEntry:
    return CatalogEntry(id=model_id, task="text-classification")


SIZES = {"a": 4, "b": 4, "c": 4, "big": 30}


def load(card: CatalogEntry) -> Model:
    return Model(card.id, SIZES[card.id])


def size_of(card: CatalogEntry, model: Model) -> int:
    return model.size


def use(pool: ModelPool[Model], *model_ids: str) -> None:
    for model_id in model_ids:
        with pool.use(card(model_id)) as model:
            assert model.id == model_id


def test_concurrent_users_share_one_load_and_never_overlap():
    busy, overlaps = [0], []

    def slow_load(card: CatalogEntry) -> Model:
        time.sleep(0.05)  # long enough for every thread to ask for the model while it loads
        return load(card)

    def call(pool: ModelPool[Model]) -> Model:
        with pool.use(card("a")) as model:
            busy[0] += 1
            overlaps.append(busy[0] > 1)
            time.sleep(0.001)
            busy[0] -= 1
            return model

    pool = ModelPool(slow_load)
    with ThreadPoolExecutor(max_workers=8) as threads:
        models = list(threads.map(lambda _: call(pool), range(8)))
    assert pool.loads == 1
    assert all(model is models[0] for model in models)
    assert not any(overlaps)


def test_different_models_run_in_parallel():
    both_inside = threading.Barrier(2, timeout=5)

    def call(model_id: str) -> None:
        with pool.use(card(model_id)):
            both_inside.wait()  # breaks (and raises) if one model waits for the other

    pool = ModelPool(load)
    with ThreadPoolExecutor(max_workers=2) as threads:
        list(threads.map(call, ["a", "b"]))
    assert pool.loads == 2


def test_the_least_recently_used_goes_first_when_too_many_are_loaded():
    pool = ModelPool(load, max_loaded=2)
    use(pool, "a", "b", "a", "c")  # "a" was used after "b", so "b" goes
    assert pool.loaded == ["a", "c"] and pool.loads == 3
    use(pool, "b")
    assert pool.loaded == ["c", "b"] and pool.loads == 4


def test_the_least_recently_used_goes_first_when_too_many_bytes_are_loaded():
    pool = ModelPool(load, max_bytes=10, size_of=size_of)
    use(pool, "a", "b")
    assert pool.loaded == ["a", "b"] and pool.loaded_bytes == 8
    use(pool, "a", "c")
    assert pool.loaded == ["a", "c"] and pool.loaded_bytes == 8 and pool.loads == 3


def test_a_model_larger_than_the_bound_stays_until_another_is_used():
    pool = ModelPool(load, max_bytes=10, size_of=size_of)
    use(pool, "a", "big")
    assert pool.loaded == ["big"]
    use(pool, "big")  # not loaded again for every call
    assert pool.loads == 2
    use(pool, "a")
    assert pool.loaded == ["a"] and pool.loads == 3


def test_both_bounds_apply():
    pool = ModelPool(load, max_loaded=2, max_bytes=100, size_of=size_of)
    use(pool, "a", "b", "c")
    assert pool.loaded == ["b", "c"]
    pool.max_bytes = 5
    use(pool, "c")
    assert pool.loaded == ["c"]


def test_a_model_in_use_is_not_evicted_and_the_bound_holds_again_once_it_is_released():
    pool = ModelPool(load, max_loaded=1)
    inside, release = threading.Event(), threading.Event()

    def hold_a() -> None:
        with pool.use(card("a")):
            inside.set()
            release.wait(timeout=5)

    holder = threading.Thread(target=hold_a)
    holder.start()
    assert inside.wait(timeout=5)
    use(pool, "b")
    assert pool.loaded == ["a", "b"]  # over the bound while "a" runs
    release.set()
    holder.join(timeout=5)
    assert pool.loaded == ["b"]
    use(pool, "b")
    assert pool.loads == 2


def test_a_load_error_propagates_keeps_nothing_and_the_next_use_loads_again():
    attempts = []

    def flaky_load(card: CatalogEntry) -> Model:
        attempts.append(card.id)
        if len(attempts) == 1:
            raise OSError("disk hiccup")
        return load(card)

    pool = ModelPool(flaky_load)
    with pytest.raises(OSError, match="disk hiccup"), pool.use(card("a")):
        pytest.fail("the body must not run when the load fails")
    assert pool.loaded == [] and pool.loads == 0
    use(pool, "a")
    assert attempts == ["a", "a"] and pool.loads == 1


def test_an_error_in_the_caller_releases_the_model_and_keeps_it_loaded():
    pool = ModelPool(load)
    with pytest.raises(ValueError, match="bad input"), pool.use(card("a")):
        raise ValueError("bad input")
    use(pool, "a")  # would deadlock if the lock were still held
    assert pool.loads == 1


def test_a_byte_bound_needs_a_way_to_measure():
    with pytest.raises(ValueError, match="size_of"):
        ModelPool(load, max_bytes=10)


@dataclass
class Pipeline:
    """Stands for a transformers pipeline, which keeps its torch module as `.model`."""

    model: object
    tokenizer: object = None


@pytest.mark.slow
def test_torch_bytes_counts_parameters_and_buffers_once_wherever_a_predictor_keeps_them():
    torch = pytest.importorskip("torch")
    linear = torch.nn.Linear(4, 2)  # 8 weights + 2 biases, float32
    norm = torch.nn.BatchNorm1d(3)  # 3 weights + 3 biases; buffers: 3 means, 3 variances (float32), 1 count (int64)
    assert torch_bytes(linear) == 40
    assert torch_bytes(norm) == 12 * 4 + 8
    assert torch_bytes(partial(print, Pipeline(linear))) == 40  # a pipeline predictor
    assert torch_bytes(partial(print, (linear, "a tokenizer"))) == 40  # an Auto-class predictor
    assert torch_bytes(Pipeline({"unet": linear, "vae": norm, "scheduler": None})) == 96  # diffusers' `.components`
    assert torch_bytes([linear, Pipeline(linear)]) == 40  # shared weights count once
    assert torch_bytes("not a model") == 0


@pytest.mark.slow
@pytest.mark.parametrize("task", ["text-classification", "question-answering"])
def test_torch_bytes_of_a_real_predictor_is_its_models_memory_footprint(task: str, tmp_path: Path):
    pytest.importorskip("torch")
    from hugginggraph.testing.tiny_models import build_tiny_model
    from hugginggraph.tools.runners.transformers_local import LOCAL_TASKS

    predictor = LOCAL_TASKS[task].load(str(build_tiny_model(task, tmp_path / "model")), "cpu")
    held = predictor.args[0]  # the pipeline, or the (model, tokenizer) pair, that the predictor calls
    assert torch_bytes(predictor) == held.model.get_memory_footprint() > 0
