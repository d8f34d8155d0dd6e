"""Finding JSON in what a chat model wrote, and ending a plain reply after a few sentences."""

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel

from hugginggraph.tools.llm_json import ask_json, ask_sentences, extract_json


class Tokens(BaseChatModel):
    """Streams the given tokens one by one, as a local controller does, and counts how many were taken."""

    tokens: list[str]
    sent: int = 0

    @property
    def _llm_type(self) -> str:
        return "tokens"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage("".join(self.tokens)))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for token in self.tokens:
            self.sent += 1
            yield ChatGenerationChunk(message=AIMessageChunk(content=token))


class Reply(BaseModel):
    answer: str


class Heard(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tokens: list[str] = []

    def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        self.tokens.append(token)


async def test_a_streamed_reply_reaches_its_listeners_token_by_token_and_comes_back_whole():
    tokens = ['{"', "answer", '":', ' "', "Platform", " 4", '"}']
    heard = Heard()
    reply = await ask_json(Tokens(tokens=tokens), [HumanMessage("What does the sign say?")], Reply, [heard])
    assert [token for token in heard.tokens if token] == tokens  # LangChain ends a stream with an empty one
    assert reply.text == '{"answer": "Platform 4"}'


@pytest.mark.parametrize(
    ("tokens", "taken"),
    [
        # File names and decimals are not ends: the tokenizers write ".wav" whole and "7" "." "30" apart (so a full
        # stop after a number is not taken as an end either: the lead is a little longer, never cut short).
        (
            [
                "The",
                " memo",
                ".wav",
                " asks",
                " for",
                " 7",
                ".",
                "30",
                " tonight",
                ".",
                " Anna",
                " agrees",
                "!",
                " More",
                ".",
            ],
            13,
        ),
        (["It", " says", ' "', "Hi", '."', " Then", " bye", "!\n", "More", "."], 8),
        (["One", " sentence", " only"], 3),
    ],
)
async def test_a_reply_ends_after_its_second_sentence_and_no_more_is_asked_for(tokens, taken):
    llm = Tokens(tokens=tokens)
    assert await ask_sentences(llm, [HumanMessage("hi")], most=2, max_chars=400) == "".join(tokens[:taken])
    assert llm.sent == taken


async def test_a_reply_without_an_end_is_cut_at_its_length():
    llm = Tokens(tokens=[f"word{n} " for n in range(100)])
    reply = await ask_sentences(llm, [HumanMessage("hi")], most=2, max_chars=20)
    assert reply == "word0 word1 word2 wo\u2026"
    assert llm.sent == 4


@pytest.mark.parametrize(
    ("tokens", "kept", "taken"),
    [
        # The 1.5B's lead for "Read this sentence aloud: Goodbye now, see you tomorrow.", greedy.
        (["The", " recording", " shows", " a", " clear", ","] + [" clear", ","] * 60, "", 12),
        (["It", " is", " read", ".", " The", " voice", " is"] + [" very"] * 60, "It is read.", 11),
    ],
)
async def test_a_reply_that_loops_is_closed_and_keeps_its_whole_sentences(tokens, kept, taken):
    llm = Tokens(tokens=tokens)
    assert await ask_sentences(llm, [HumanMessage("hi")], most=2, max_chars=400) == kept
    assert llm.sent == taken


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", [1, 2]),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here: {"a": [1]} and more {"b": 2}', {"a": [1]}),
        ('noise [not json] then {"ok": true}', {"ok": True}),
    ],
)
def test_first_json_value_is_found(text, expected):
    assert extract_json(text) == expected


def test_no_json_raises_with_a_preview():
    with pytest.raises(ValueError, match="no JSON found in the model's reply: 'I cannot do that'"):
        extract_json("I cannot do that")


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, "[" * 3000 + "]" * 3000, "[1," * 20_000, '{"a":' * 5000],
)
def test_json_nested_past_the_stack_is_no_json(text):
    with pytest.raises(ValueError, match="no JSON found"):
        extract_json(text)


def test_json_nested_past_what_a_checkpoint_stores_is_refused():
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        extract_json("[" * 300 + "]" * 300)


def test_values_a_checkpoint_cannot_store_are_made_storable():
    """msgpack refuses lone surrogates and integers past 64 bits; Python refuses integers of over 4,300 digits."""
    value = extract_json('[{"id": ' + "9" * 5000 + ', "dep": [18446744073709551616], "\\ud800key": "\\udfff"}]')
    assert value == [{"id": float("inf"), "dep": [1.8446744073709552e19], "\ufffdkey": "\ufffd"}]
