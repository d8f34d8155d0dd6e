"""Saved prompt states on disk, so that a new process starts with the prompt cache the last one left.

The embedded controller keeps the llama.cpp state after each reply in memory, and the next prompt restores the
longest part it shares with one of them instead of evaluating it again (the planning prompt's system part and task
list, the answer prompt's instructions). Each `hugginggraph run` is a new process, so without these files every
command would evaluate those parts again. A state is written after each reply (a write and a rename), and the newest
ones that fit the cache are read back when the model loads; older files are deleted. A folder holds the states of
one model file, context size and llama-cpp-python version, since a state fits only the context that wrote it.

The files are numpy archives read without pickle. A file that cannot be read or does not fit the context is
deleted and skipped: the prompt is then evaluated, as it would be without the file.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

SUFFIX = ".npz"


def states_folder(root: Path, model_path: Path, n_ctx: int, llama_version: str) -> Path:
    """The folder for the states of this model file, context size and llama-cpp-python version."""
    stat = model_path.stat()
    facts = f"{model_path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}|{llama_version}"
    return root / f"{model_path.stem}-{hashlib.sha256(facts.encode()).hexdigest()[:12]}"


class PromptStateFolder:
    """The saved states of one folder, at most `capacity_bytes` of them (the newest)."""

    def __init__(self, folder: Path, capacity_bytes: int) -> None:
        self.folder = folder
        self.capacity_bytes = capacity_bytes

    def save(self, tokens: Sequence[int], state: Any) -> None:
        """Write a `llama_cpp.LlamaState` whose prompt and reply are `tokens`, then delete the oldest files past the
        capacity. A folder that cannot be written costs only the next process's time: it is logged, not raised."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.folder, suffix=".part", delete=False) as file:
                np.savez(
                    file,
                    tokens=np.asarray(tokens, dtype=np.int32),
                    input_ids=state.input_ids,
                    scores=state.scores,
                    n_tokens=state.n_tokens,
                    seed=state.seed,
                    llama_state=np.frombuffer(state.llama_state, dtype=np.uint8),
                )
            os.replace(file.name, self.path_of(tokens))
            self._prune()
        except OSError as error:
            logger.warning("prompt state not saved in %s (%s); the next process evaluates it again", self.folder, error)

    def newest(self) -> Iterator[tuple[tuple[int, ...], Any]]:
        """The saved states, newest first, as many as fit the capacity: (tokens, `llama_cpp.LlamaState`)."""
        from llama_cpp import LlamaState

        total = 0
        for path in self._files():
            try:
                with np.load(path, allow_pickle=False) as saved:
                    llama_state = saved["llama_state"].tobytes()
                    state = LlamaState(
                        input_ids=saved["input_ids"],
                        scores=saved["scores"],
                        n_tokens=int(saved["n_tokens"]),
                        llama_state=llama_state,
                        llama_state_size=len(llama_state),
                        seed=int(saved["seed"]),
                    )
                    tokens = tuple(int(token) for token in saved["tokens"])
            except (OSError, ValueError, KeyError) as error:
                self.discard(path, f"unreadable: {error}")
                continue
            total += len(llama_state)
            if total > self.capacity_bytes:
                return
            yield tokens, state

    def discard(self, path: Path, why: str) -> None:
        logger.warning("prompt state %s discarded (%s)", path.name, why)
        with contextlib.suppress(OSError):
            path.unlink()

    def path_of(self, tokens: Sequence[int]) -> Path:
        return self.folder / (hashlib.sha256(np.asarray(tokens, dtype=np.int32).tobytes()).hexdigest()[:32] + SUFFIX)

    def _files(self) -> list[Path]:
        """The state files, newest first (another process may delete any of them meanwhile)."""
        dated = []
        for path in self.folder.glob(f"*{SUFFIX}"):
            with contextlib.suppress(OSError):
                dated.append((path.stat().st_mtime_ns, path))
        return [path for _, path in sorted(dated, reverse=True)]

    def _prune(self) -> None:
        total = 0
        for path in self._files():
            with contextlib.suppress(OSError):
                total += path.stat().st_size
                if total > self.capacity_bytes:
                    path.unlink()
