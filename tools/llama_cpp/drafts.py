"""Drafts for the embedded controller: tokens guessed cheaply, which llama.cpp then checks all in one forward pass.

On a CPU a pass over a few tokens costs much less than a pass for each (docs/speed.md), so a reply goes faster
whenever the guesses are mostly right; the model's own choice at every position decides what is kept
(`Llama.generate` drops a draft from its first token the model would not have written), so the reply is the
model's: the same as without drafts, but where two tokens are so close that a batch's rounding swaps them.
Two kinds of guess:

- **What the grammar fixes.** A structured reply is mostly keys, quotes, brackets and the rest of an enum value
  once begun (`", "task": "`, `-speech-recognition`): the grammar allows one character there, so the draft walks
  on until it allows several.
- **What the prompt said.** A plan's step words, a file name or a text argument repeat the request: the tokens
  that followed the reply's last two, the latest time the prompt held them (the request comes last).

Functions of llama.cpp objects only; the model class that uses them is `fast_llama.py`'s.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any

import numpy as np
import numpy.typing as npt

MOST_FIXED_CHARACTERS = 96
"""Where a walk through fixed text stops even if the grammar fixes more (one pass holds its tokens)."""

LOOKUP_NGRAM = 2
"""How many of the reply's last tokens must match the prompt: one matches too often by chance (every `"`)."""

LOOKUP_TOKENS = 4
"""How many tokens a prompt match proposes: each wrong one costs a row of the pass, so longer guesses lost more
than they won on `benchmarks/controller.py`'s requests (docs/speed.md)."""


def single_character_tokens(llama: Any) -> dict[str, int]:
    """The printable ASCII characters that are tokens of their own in `llama`'s vocabulary, and those tokens."""
    tokens = {}
    for code in range(32, 127):
        pieces = llama.tokenize(chr(code).encode(), add_bos=False, special=False)
        if len(pieces) == 1:
            tokens[chr(code)] = pieces[0]
    return tokens


def fixed_text(grammar: Any, char_tokens: dict[str, int], last: str) -> str:
    """The text `grammar` (a llama.cpp grammar sampler, left as it is) fixes next: walked on a copy, one character at
    a time, while the grammar allows only one. JSON's optional spaces are filled as Python's `json.dumps` writes them
    (after "," and ":", nowhere else), as the prompt's demos show the model; `last` is the reply's last character.
    `char_tokens` maps characters to their single-character tokens (printable ASCII)."""
    import llama_cpp

    chars = list(char_tokens)
    ids = np.array([char_tokens[char] for char in chars], dtype=np.intc)
    data = (llama_cpp.llama_token_data * len(chars))()
    view = np.ctypeslib.as_array(data)
    probe = llama_cpp.llama_sampler_clone(grammar)
    text = ""
    try:
        while len(text) < MOST_FIXED_CHARACTERS:
            view["id"], view["logit"], view["p"] = ids, 0.0, 0.0
            candidates = llama_cpp.llama_token_data_array(data, len(chars), -1, False)
            llama_cpp.llama_sampler_apply(probe, ctypes.byref(candidates))
            allowed = [char for char, logit in zip(chars, view["logit"], strict=True) if math.isfinite(logit)]
            others = [char for char in allowed if char != " "]
            # A string's content allows nearly every character: a space there is the model's choice, not style.
            if " " in allowed and (last in ",:" or not others) and len(allowed) < len(chars) // 4:
                char = " "
            elif len(others) == 1:
                char = others[0]
            else:
                break
            llama_cpp.llama_sampler_accept(probe, char_tokens[char])
            text, last = text + char, char
    finally:
        llama_cpp.llama_sampler_free(probe)
    return text


def draft_of_fixed_text(text: str, tokens: list[int]) -> list[int]:
    """The tokens of fixed `text` worth proposing: all but the last, unless the text ends with a quote. The model
    often joins the last piece to what follows it (` [` and `{"` as ` [{"`, a space and a digit, `-` and `to`), so
    proposing it would mostly waste a row; after an opening quote comes a word, which it keeps apart."""
    return tokens if text.endswith('"') else tokens[:-1]


def looked_up(input_ids: npt.NDArray[np.intc], reply_start: int) -> npt.NDArray[np.intc]:
    """The `LOOKUP_TOKENS` tokens that followed the reply's last `LOOKUP_NGRAM` tokens in the prompt (the first
    `reply_start` of `input_ids`), the latest time it held them; none when it never did or the reply is shorter."""
    none = np.zeros(0, dtype=np.intc)
    if len(input_ids) - reply_start < LOOKUP_NGRAM or reply_start <= LOOKUP_NGRAM:
        return none
    prompt = np.asarray(input_ids[:reply_start])
    windows = np.lib.stride_tricks.sliding_window_view(prompt[:-1], LOOKUP_NGRAM)  # each has a token after it
    found = np.flatnonzero(np.all(windows == np.asarray(input_ids[-LOOKUP_NGRAM:]), axis=1))
    if len(found) == 0:
        return none
    start = int(found[-1]) + LOOKUP_NGRAM
    return prompt[start : start + LOOKUP_TOKENS].astype(np.intc)
