"""A llama.cpp model loaded for the embedded controller, with the prompt states it saves and restores.

llama.cpp's context is stateful, so calls on one model take turns. After each reply the model's state is kept in
memory, trimmed to what restoring needs, and written to disk for the next process (`prompt_states.py`), so that a
later prompt restores what it shares with an earlier one instead of evaluating it again.
"""

from __future__ import annotations

import threading
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggraph.tools.llama_cpp.fast_llama import fast_llama_class
from hugginggraph.tools.llama_cpp.library_output import keep_process_output
from hugginggraph.tools.llama_cpp.prompt_states import PromptStateFolder, states_folder

if TYPE_CHECKING:
    from llama_cpp import LlamaRAMCache

N_BATCH = 64
"""Prompt tokens evaluated per batch. llama-cpp-python keeps a logits buffer of n_batch x vocabulary floats and
copies it into every saved prompt state: 64 rather than the default 512 makes that copy an eighth as large (and
quicker to save), while prompt speed does not depend on the batch size (docs/speed.md, measured with
`benchmarks/llama_settings.py`)."""


@dataclass
class LoadedModel:
    """A loaded llama.cpp model, the lock that keeps calls on it from overlapping (its context is stateful), its
    saved prompt states, and the folder that keeps them for the next process."""

    llama: Any
    """A `fast_llama_class()` instance."""
    lock: threading.Lock
    states: LlamaRAMCache | None
    saved: PromptStateFolder | None = None

    @classmethod
    def load(cls, path: str, n_ctx: int, n_threads: int, cache_mb: int, states_dir: Path | None) -> LoadedModel:
        import llama_cpp
        from llama_cpp import LlamaRAMCache

        keep_process_output()
        llama = fast_llama_class()(
            model_path=path,
            n_ctx=n_ctx,
            n_batch=N_BATCH,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            verbose=False,
        )
        if cache_mb <= 0:
            return cls(llama, threading.Lock(), None)
        states = LlamaRAMCache(capacity_bytes=cache_mb << 20)
        llama.set_cache(states)
        saved = None
        if states_dir is not None:
            folder = states_folder(states_dir, Path(path), n_ctx, llama_cpp.__version__)
            saved = PromptStateFolder(folder, cache_mb << 20)
            for tokens, state in reversed(list(saved.newest())):  # the newest last: the context keeps it
                try:
                    llama.load_state(state)
                except RuntimeError as error:  # written by another build, or damaged
                    saved.discard(saved.path_of(tokens), str(error))
                    continue
                states[tokens] = state
        return cls(llama, threading.Lock(), states, saved)

    def complete(self, **request: Any) -> Any:
        """`Llama.create_chat_completion(**request)`, one call at a time."""
        with self.lock:
            self.llama.prompt_split = None
            before = self._newest_key()
            completion = self.llama.create_chat_completion(**request)
            self._keep_newest_state(before)
            completion["usage"]["prompt_tokens_restored"] = self.restored()
        return completion

    def restored(self) -> int:
        """Prompt tokens of the latest reply that were not evaluated again."""
        return self.llama.prompt_split[0] if self.llama.prompt_split else 0

    def stream(self, **request: Any) -> Generator[Any, None, None]:
        """The chunks of `Llama.create_chat_completion(stream=True, **request)`, one token each, then one with no
        choices and the usage, as OpenAI's API ends a stream asked to include it. The model stays locked from the
        first chunk asked for until the last, or until the caller closes the iterator."""
        with self.lock:
            self.llama.prompt_split = None
            before = self._newest_key()
            decoded = 0
            for chunk in self.llama.create_chat_completion(stream=True, **request):
                decoded += bool(chunk["choices"][0]["delta"].get("content"))
                yield chunk
            self._keep_newest_state(before)
            restored, evaluated = self.llama.prompt_split or (0, 0)
            prompt = restored + evaluated
            yield {
                "choices": [],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": decoded,
                    "total_tokens": prompt + decoded,
                    "prompt_tokens_restored": restored,
                },
            }

    def _newest_key(self) -> tuple[int, ...] | None:
        return next(reversed(self.states.cache_state), None) if self.states is not None else None

    def _keep_newest_state(self, before: tuple[int, ...] | None) -> None:
        """Trim the state the reply just saved, if it saved one, and write it for the next process."""
        key = self._newest_key()
        if key is None or key == before or self.states is None:
            return
        newest = self.states.cache_state[key]
        # It holds a copy of the logits of every batch row; restoring needs none (the next prompt always evaluates
        # its last token again), and the cache's capacity counts none.
        newest.scores = newest.scores[-1:].copy()  # a copy: a view would keep the whole buffer alive
        if self.saved is not None:
            self.saved.save(key, newest)
