"""llama-cpp-python's `Llama`, with two things the embedded controller needs that it lacks.

- **Greedy constrained decoding that checks the best token first.** llama-cpp-python samples through a chain
  (penalties, grammar, greedy) that applies the grammar to every token of the vocabulary (151,936 in Qwen2.5's) at
  each step. Under greedy decoding only the best token matters: if the grammar accepts the model's favourite, that
  is the answer the whole chain would give; only when it refuses is the grammar applied to all. llama.cpp's own
  samplers (`common_sampler_sample`) take the same shortcut. The reply is the same token for token.
- **Prompt accounting.** How many of a reply's prompt tokens were restored (the context, or a saved state, already
  held them) and how many were evaluated: the prompt cache's effect, which the controller reports as LangChain's
  `input_token_details["cache_read"]`.

The class is made on first use, so importing this module does not import llama.cpp.
"""

from __future__ import annotations

import ctypes
import math
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from llama_cpp import Llama


@cache
def fast_llama_class() -> type[Llama]:
    """The `Llama` subclass described above."""
    import llama_cpp
    import numpy as np
    from llama_cpp import Llama

    class FastLlama(Llama):
        best_first: bool = True
        """Take the shortcut (False: always the whole chain, as llama-cpp-python does)."""
        prompt_split: tuple[int, int] | None = None
        """(restored, evaluated) prompt tokens of the latest reply; None until its prompt is evaluated. Set
        None before each reply: its first `eval` is the prompt's part not restored."""

        def eval(self, tokens: Sequence[int]) -> None:
            if self.prompt_split is None:
                self.prompt_split = (self.n_tokens, len(tokens))
            super().eval(tokens)

        def sample(self, *args: Any, **options: Any) -> int:
            grammar = self._grammar_sampler() if self._plain_greedy(options) else None
            if grammar is None:
                return super().sample(*args, **options)
            idx = options.get("idx")
            row = idx - self.n_tokens if idx is not None else -1
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(self._ctx.ctx, row), shape=(self._n_vocab,))
            best = int(np.argmax(logits))
            candidate = llama_cpp.llama_token_data(best, float(logits[best]), 0.0)
            single = llama_cpp.llama_token_data_array(ctypes.pointer(candidate), 1, -1, False)
            llama_cpp.llama_sampler_apply(grammar, ctypes.byref(single))
            if not math.isfinite(candidate.logit):  # refused: the chain applies the grammar to every token
                return super().sample(*args, **options)
            llama_cpp.llama_sampler_accept(self._chain(), best)  # the grammar and penalties move on
            return best

        def _plain_greedy(self, options: dict[str, Any]) -> bool:
            """Whether the chain is neutral penalties, a grammar and greedy: only then is the best token the answer."""
            neutral = (
                options.get("repeat_penalty", 1.0) == 1.0
                and options.get("frequency_penalty", 0.0) == 0.0
                and options.get("presence_penalty", 0.0) == 0.0
            )
            return (
                self.best_first
                and self._sampler is not None
                and options.get("grammar") is not None
                and options.get("temp") == 0.0
                and options.get("logits_processor") is None
                and neutral
            )

        def _chain(self) -> Any:
            """The llama.cpp sampler chain of the reply being generated (`generate` sets it up)."""
            return cast(Any, self._sampler).sampler

        def _grammar_sampler(self) -> Any:
            chain = self._chain()
            for index in range(llama_cpp.llama_sampler_chain_n(chain)):
                sampler = llama_cpp.llama_sampler_chain_get(chain, index)
                if llama_cpp.llama_sampler_name(sampler) == b"grammar":
                    return sampler
            return None

    return FastLlama
