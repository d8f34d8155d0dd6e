"""Ask a chat model for JSON: structured output where the model supports it, tolerant parsing where not.

Small local models and OpenAI-compatible servers differ in what they support; every stage that wants JSON
from the controller goes through here, so none of them has to care which model it got.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.exceptions import (
    ModelAuthenticationError,
    ModelConnectionError,
    ModelError,
    ModelNotFoundError,
    ModelPermissionDeniedError,
    ModelTimeoutError,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, merge_configs
from pydantic import BaseModel

SchemaT = TypeVar("SchemaT", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class LLMReply(Generic[SchemaT]):
    """The model's answer: `parsed` when structured output worked, else the raw text to parse."""

    parsed: SchemaT | None = None
    text: str = ""


class ControllerUnavailable(Exception):
    """The controller LLM cannot be used at all: its server is unreachable, or refuses our key or model name.

    Raised instead of trying a plain call, which would fail the same way; the message names the URL asked and
    what to check, so a stage can hand it to the user as it is.
    """


# What each kind of provider failure (langchain-core's names, the same for every provider) means, and what to check.
_UNAVAILABLE: dict[type[ModelError], tuple[str, str]] = {
    ModelConnectionError: ("could not be reached", "check that the server is running and that the base URL is right"),
    ModelTimeoutError: ("did not answer in time", "check that the server is up and not overloaded"),
    ModelAuthenticationError: ("rejected the API key", "check the key you gave"),
    ModelPermissionDeniedError: ("refused this API key access", "check the key's permissions"),
    ModelNotFoundError: ("answered 404", "check the model name, and that the base URL is the API's (often ending /v1)"),
}
_UNAVAILABLE_ERRORS = tuple(_UNAVAILABLE)


def _unavailable(error: ModelError) -> ControllerUnavailable:
    """The user's message for `error`: the URL the client asked (SDKs on httpx keep it) and the innermost cause."""
    problem, advice = next(words for kind, words in _UNAVAILABLE.items() if isinstance(error, kind))
    url = getattr(getattr(error, "request", None), "url", None)
    cause: BaseException = error
    while cause.__cause__ is not None:
        cause = cause.__cause__
    where = f" at {url}" if url else ""
    return ControllerUnavailable(f"the controller LLM{where} {problem} ({type(cause).__name__}: {cause}): {advice}")


async def ask_json(
    llm: BaseChatModel,
    messages: Sequence[BaseMessage],
    schema: type[SchemaT],
    listeners: Sequence[BaseCallbackHandler] = (),
) -> LLMReply[SchemaT]:
    """Structured output first; on an OpenAI-compatible server that refuses it, the schema in llama-cpp-python's
    dialect; on models without either (or when they fail), a plain call whose text is returned.

    With `listeners`, the reply is streamed and they get its tokens as they come (`on_llm_new_token`), from models
    that stream; the reply returned is the same. Raises ControllerUnavailable when the model cannot be reached or
    refuses our key, model name or URL.
    """
    # Added to the callbacks the call inherits (LangGraph's streams, tracing), which a config's own would replace.
    config = merge_configs(ensure_config(), {"callbacks": list(listeners)}) if listeners else {}
    stream = bool(listeners)
    server = _openai_server(llm)
    reply: Any = None
    if server is not None and server in JSON_OBJECT_SERVERS:
        reply = await _schema_as_json_object(llm, messages, schema, config, stream)
    else:
        try:
            structured = llm.with_structured_output(schema, include_raw=True)
        except NotImplementedError:
            structured = None
        if structured is not None:
            try:
                reply = await _whole(structured, messages, config, stream)
            except _UNAVAILABLE_ERRORS as error:
                raise _unavailable(error) from error
            except Exception:  # a server that rejects the schema still deserves another try
                if server is not None:
                    reply = await _schema_as_json_object(llm, messages, schema, config, stream)
                    if reply is not None:
                        JSON_OBJECT_SERVERS.add(server)
    if isinstance(reply, dict):
        parsed = reply.get("parsed")
        if isinstance(parsed, schema):
            return LLMReply(parsed=parsed)
        raw = reply.get("raw")
        if isinstance(raw, BaseMessage) and raw.text:
            return LLMReply(text=raw.text)
    try:
        message = await _whole(llm, messages, config, stream)
    except _UNAVAILABLE_ERRORS as error:
        raise _unavailable(error) from error
    return LLMReply(text=message.text)


JSON_OBJECT_SERVERS: set[tuple[str, str]] = set()
"""OpenAI-compatible servers (base URL, model name) that refused OpenAI's `json_schema` and took the schema as a
`json_object`: asked that way from then on, which spares each call the refusal and the client's retries of it."""


def _openai_server(llm: BaseChatModel) -> tuple[str, str] | None:
    """The (base URL, model name) of a langchain-openai chat model; None for any other kind of model."""
    openai_chat = sys.modules.get("langchain_openai.chat_models.base")  # not imported: no model of it exists
    if openai_chat is None or not isinstance(llm, openai_chat.BaseChatOpenAI):
        return None
    return str(llm.openai_api_base or ""), str(llm.model_name)


async def _schema_as_json_object(
    llm: BaseChatModel,
    messages: Sequence[BaseMessage],
    schema: type[SchemaT],
    config: RunnableConfig,
    stream: bool,
) -> dict[str, Any] | None:
    """The reply to the schema asked in llama-cpp-python's dialect, `response_format: {"type": "json_object",
    "schema": ...}`, which its server (`llama_cpp.server`) constrains decoding to while it refuses OpenAI's
    `json_schema`; as a structured reply's `raw` message, for the caller to parse. None when this is refused too."""
    json_object = {"type": "json_object", "schema": schema.model_json_schema()}
    try:
        message = await _whole(llm.bind(response_format=json_object), messages, config, stream)
    except _UNAVAILABLE_ERRORS as error:
        raise _unavailable(error) from error
    except Exception:  # refused as well: the plain call comes next
        return None
    return {"raw": message, "parsed": None}


async def _whole(
    runnable: Runnable[Any, Any], messages: Sequence[BaseMessage], config: RunnableConfig, stream: bool
) -> Any:
    """The runnable's output for the messages; streamed and added up when `stream` (its parts add: message
    chunks, or the dicts of a structured reply with its raw message)."""
    if not stream:
        return await runnable.ainvoke(list(messages), config)
    whole = None
    with warnings.catch_warnings():
        # Streamed structured output makes langchain-openai dump the SDK's chunks, whose `parsed` field pydantic
        # warns about (langchain-ai/langchain#35538, fixed there for plain calls only): noise, not a problem.
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning, r"pydantic\.main")
        async for part in runnable.astream(list(messages), config):
            whole = part if whole is None else whole + part
    return whole


async def ask_text(llm: BaseChatModel, messages: Sequence[BaseMessage]) -> str:
    """The controller's plain reply. Raises ControllerUnavailable when it cannot be reached or refuses us."""
    try:
        message = await llm.ainvoke(list(messages))
    except _UNAVAILABLE_ERRORS as error:
        raise _unavailable(error) from error
    return message.text


SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*")
"""A token that ends a sentence: its full stop, "!" or "?", and any closing quotes or brackets with it."""


LOOPING = re.compile(r"(.{2,40}?)\1{3,}$", re.DOTALL)
"""A reply that has begun to loop: the same words written four times in a row at its end ("clear, clear, clear,
clear, "), which greedy decoding by a small controller, once in it, does not leave."""


async def ask_sentences(llm: BaseChatModel, messages: Sequence[BaseMessage], most: int, max_chars: int) -> str:
    """The controller's plain reply, ended after its `most`-th sentence (or `max_chars`, with an ellipsis): the
    stream is closed there, so a model that would go on writing is not left to, and a local one stops decoding.
    A sentence ends at a token that is only a full stop, "!" or "?" (closing quotes may come with it), after
    something other than a digit: the controllers' tokenizers write "memo" ".wav" and "7" "." "30", which are not
    ends. A reply that starts `LOOPING` is closed there too and keeps only its whole sentences before it (none: an
    empty reply). The chunks read are exactly those streamed to the user. Raises ControllerUnavailable as
    `ask_text` does."""
    text, sentences, whole = "", 0, 0
    try:
        async for chunk in llm.astream(list(messages)):
            piece = chunk.text
            ends = SENTENCE_END.fullmatch(piece.strip()) is not None and not text[-1:].isdigit()
            text += piece
            if ends:
                sentences, whole = sentences + 1, len(text)
            if sentences >= most:
                break
            if LOOPING.search(text):
                return text[:whole]
            if len(text) > max_chars:
                return text[:max_chars].rstrip() + "\u2026"
    except _UNAVAILABLE_ERRORS as error:
        raise _unavailable(error) from error
    return text


MAX_DEPTH = 64
"""The deepest nesting of lists and objects accepted from a model: no plan or choice comes near it, and the
checkpointer's msgpack refuses values nested past 255 levels, which would stop the run when the state is saved."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_int(digits: str) -> int | float:
    """A JSON integer, read as a float when it is too long for 64 bits: Python refuses to read integers of over
    4,300 digits, which would lose the whole reply, and `storable` turns the rest into floats anyway."""
    return int(digits) if len(digits.lstrip("-")) <= 18 else float(digits)


def extract_json(text: str) -> Any:
    """The first JSON value in `text`, looking inside code fences and past chatter around it.

    Raises ValueError (with the start of the text) when there is none, or when it is nested deeper than
    `MAX_DEPTH`.
    """
    return storable(_first_json_value(text))


def storable(value: Any) -> Any:
    """A value parsed from a model's JSON, made fit for the state, which is checkpointed as msgpack: lone
    surrogates in strings and keys (`"\\ud800"` is valid JSON, but no text) become U+FFFD, and integers past
    64 bits become floats. Raises ValueError when it nests deeper than `MAX_DEPTH`."""
    if _nested_deeper_than(value, MAX_DEPTH):
        raise ValueError(f"the JSON in the model's reply is nested deeper than {MAX_DEPTH} levels")
    return _storable(value)


def _storable(value: Any) -> Any:
    # Recursive: only called on values checked to be within MAX_DEPTH.
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        return float(value)
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    return value


def _first_json_value(text: str) -> Any:
    candidates = [*(m.group(1) for m in _FENCE.finditer(text)), text]
    decoder = json.JSONDecoder(parse_int=_json_int)
    for candidate in candidates:
        stripped = candidate.strip()
        try:
            return decoder.decode(stripped)
        except ValueError:
            pass
        except RecursionError:
            continue  # nested past Python's stack, and so is every value inside: no use trying each of them
        for start, char in enumerate(stripped):
            if char in "[{":
                try:
                    value, _ = decoder.raw_decode(stripped, start)
                except ValueError:
                    continue
                except RecursionError:
                    break
                return value
    preview = text.strip()[:120]
    raise ValueError(f"no JSON found in the model's reply: {preview!r}")


def _nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether lists and objects in `value` nest more than `limit` levels (a loop, not recursion: it is asked of
    values that may be as deep as the parser allows)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False
