"""Prompt states kept on disk for the next process: the newest that fit, read without pickle, damaged ones dropped;
and, with the real controller, a new process's first prompt restored from the last one's."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from hugginggraph.tools.llama_cpp.local_llama import LocalLlamaChatModel
from hugginggraph.tools.llama_cpp.prompt_states import PromptStateFolder, states_folder

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the local extra)")


def state(size: int, seed: int = 0) -> SimpleNamespace:
    """What `Llama.save_state` returns, with a context state of `size` bytes."""
    return SimpleNamespace(
        input_ids=np.arange(8, dtype=np.intc),
        scores=np.zeros((1, 4), dtype=np.single),
        n_tokens=3,
        seed=seed,
        llama_state=bytes(range(256)) * (size // 256),
    )


def test_the_newest_states_that_fit_are_kept_and_read_back(tmp_path: Path):
    folder = PromptStateFolder(tmp_path / "states", capacity_bytes=250_000)  # two of 100 KB and their headers
    for n, tokens in enumerate([(1, 2), (1, 2, 3), (4, 5)]):
        folder.save(tokens, state(100_000, seed=n))
        os.utime(folder.path_of(tokens), ns=(n * 10**9, n * 10**9))  # written in this order
    read = list(folder.newest())
    assert [tokens for tokens, _ in read] == [(4, 5), (1, 2, 3)]
    assert read[0][1].seed == 2 and read[0][1].llama_state == state(100_000).llama_state
    assert not folder.path_of((1, 2)).exists()  # pruned past the capacity when the third was written


def test_a_damaged_state_is_deleted_and_skipped(tmp_path: Path):
    folder = PromptStateFolder(tmp_path, capacity_bytes=1 << 20)
    folder.save((1, 2), state(256))
    folder.path_of((1, 2)).write_bytes(b"not a numpy archive")
    assert list(folder.newest()) == []
    assert not folder.path_of((1, 2)).exists()


def test_each_model_file_and_context_size_has_its_own_folder(tmp_path: Path):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights")
    root = tmp_path / "states"
    one = states_folder(root, model, 4096, "0.3.36")
    assert one == states_folder(root, model, 4096, "0.3.36")
    assert len({one, states_folder(root, model, 8192, "0.3.36"), states_folder(root, model, 4096, "0.3.37")}) == 3


@pytest.mark.slow
def test_a_new_process_restores_the_prompt_the_last_one_evaluated(tmp_path: Path):
    from test_local_llama import CONTROLLER  # the small controller of the other real-model tests

    from hugginggraph.tools.llama_cpp.gguf_weights import install_hint, missing_requirements
    from hugginggraph.tools.llama_cpp.local_llama import local_chat_model

    if missing_requirements(CONTROLLER):
        pytest.skip(f"the {CONTROLLER} weight packages are not installed: {install_hint(CONTROLLER)}")
    llm = local_chat_model(CONTROLLER, data_dir=tmp_path / "data", prompt_states_dir=str(tmp_path / "states"))
    system = SystemMessage("You answer in one short sentence. " * 20)
    first = llm.invoke([system, HumanMessage("Say hello.")]).usage_metadata
    LocalLlamaChatModel.loaded.clear()  # as a new process starts: nothing loaded, the folder on disk
    again = llm.invoke([system, HumanMessage("Say goodbye.")]).usage_metadata
    assert first is not None and again is not None
    assert first["input_token_details"]["cache_read"] == 0
    assert again["input_token_details"]["cache_read"] > 100  # the system message, not evaluated again
