"""llama-cpp-python's `Llama`, with what the embedded controller needs that it lacks.

- **Greedy constrained decoding that checks the best token first.** llama-cpp-python samples through a chain
  (penalties, grammar, greedy) that applies the grammar to every token of the vocabulary (151,936 in Qwen2.5's) at
  each step. Under greedy decoding only the best token matters: if the grammar accepts the model's favourite, that
  is the answer the whole chain would give; only when it refuses is the grammar applied to all. llama.cpp's own
  samplers (`common_sampler_sample`) take the same shortcut. The reply is the same token for token.
- **Drafts verified in one pass** (`drafts.py`): after each token, the text the grammar fixes next, or else what
  followed the same tokens in the prompt, is evaluated with it in one batch that asks for every row's logits, and
  `Llama.generate` keeps the draft up to the first token the model would not have chosen. llama-cpp-python's
  own route to this (`draft_model` given to the constructor) keeps every token's logits for the whole context
  (context x vocabulary floats: 5 GB for the 1.5B), so the draft is set after loading and only its rows ask.
- **Prompt accounting.** How many of a reply's prompt tokens were restored (the context, or a saved state, already
  held them) and how many were evaluated: the prompt cache's effect, which the controller reports as LangChain's
  `input_token_details["cache_read"]`; and `DecodeCounts`, the work since loading (llama.cpp's own counters call
  every pass of more than one token prompt evaluation, drafts included).

The class is made on first use, so importing this module does not import llama.cpp.
"""

from __future__ import annotations

import ctypes
import math
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from hugginggraph.tools.llama_cpp.drafts import draft_of_fixed_text, fixed_text, looked_up, single_character_tokens

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from llama_cpp import Llama


@dataclass
class DecodeCounts:
    """The model's work since it was loaded; benchmarks read differences."""

    prompt_tokens: int = 0
    """Prompt tokens evaluated (not restored from the cache)."""
    prompt_seconds: float = 0.0
    reply_tokens: int = 0
    """Tokens sampled: the replies' tokens, and each one's end of text."""
    passes: int = 0
    """Forward passes after the prompts: one per reply token without drafts, fewer with them."""
    pass_seconds: float = 0.0


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

        drafts: bool = True
        """Verify drafts (`drafts.py`) with each token (False: one token per pass)."""
        counts: DecodeCounts
        reply_start: int = 0
        """Where the reply being generated begins in `input_ids`: its prompt's length."""
        _verifying: bool = False
        """The next `eval` holds a sampled token and a draft: every row's logits are asked for."""
        _char_tokens: dict[str, int]

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.counts = DecodeCounts()
            self._char_tokens = single_character_tokens(self)
            self.draft_model = cast(Any, self._draft)

        def generate(
            self, tokens: Sequence[int], *args: Any, **options: Any
        ) -> Generator[int, Sequence[int] | None, None]:
            self.reply_start = len(tokens)
            return (yield from super().generate(tokens, *args, **options))

        def eval(self, tokens: Sequence[int]) -> None:
            started = time.perf_counter()
            prompt = self.prompt_split is None
            if prompt:
                self.prompt_split = (self.n_tokens, len(tokens))
            if self._verifying:
                self._verifying = False
                self._ctx.kv_cache_seq_rm(-1, self.n_tokens, -1)
                self._batch.set_batch(batch=tokens, n_past=self.n_tokens, logits_all=True)
                self._ctx.decode(self._batch)
                self.input_ids[self.n_tokens : self.n_tokens + len(tokens)] = tokens
                self.n_tokens += len(tokens)
                self._requires_eval = False
            else:
                super().eval(tokens)
            seconds = time.perf_counter() - started
            if prompt:
                self.counts.prompt_tokens += len(tokens)
                self.counts.prompt_seconds += seconds
            else:
                self.counts.passes += 1
                self.counts.pass_seconds += seconds

        def _draft(self, input_ids: npt.NDArray[np.intc], /, **_: Any) -> npt.NDArray[np.intc]:
            """What `generate` verifies with the token it just sampled (the last of `input_ids`): at most one batch,
            the sampled token and the draft."""
            drafted = self._guess(input_ids)[: self.n_batch - 1] if self.drafts else []
            self._verifying = len(drafted) > 0
            return np.asarray(drafted, dtype=np.intc)

        def _guess(self, input_ids: npt.NDArray[np.intc]) -> Sequence[int] | npt.NDArray[np.intc]:
            """The text the grammar fixes next, else what followed the reply's last tokens in the prompt."""
            grammar = self._grammar_sampler() if self._sampler is not None else None
            if grammar is not None:
                last = self.detokenize([int(input_ids[-1])]).decode("utf-8", errors="ignore")[-1:]
                text = fixed_text(grammar, self._char_tokens, last)
                fixed = self.tokenize(text.encode(), add_bos=False, special=False) if text else []
                if drafted := draft_of_fixed_text(text, fixed):
                    return drafted
            return looked_up(input_ids, self.reply_start)

        def sample(self, *args: Any, **options: Any) -> int:
            self.counts.reply_tokens += 1
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
