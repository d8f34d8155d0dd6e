"""Ask a chat model for JSON: structured output where the model supports it, tolerant parsing where not.

Small local models and OpenAI-compatible servers differ in what they support; every stage that wants JSON
from the controller goes through here, so none of them has to care which model it got.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

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


async def ask_json(llm: BaseChatModel, messages: Sequence[BaseMessage], schema: type[SchemaT]) -> LLMReply[SchemaT]:
    """Structured output first; on models without it (or when it fails), a plain call whose text is returned.

    Raises ControllerUnavailable when the model cannot be reached or refuses our key, model name or URL.
    """
    try:
        structured = llm.with_structured_output(schema, include_raw=True)
    except NotImplementedError:
        structured = None
    if structured is not None:
        try:
            reply = await structured.ainvoke(list(messages))
        except _UNAVAILABLE_ERRORS as error:
            raise _unavailable(error) from error
        except Exception:  # a server that rejects the schema still deserves a plain try
            reply = None
        if isinstance(reply, dict):
            parsed = reply.get("parsed")
            if isinstance(parsed, schema):
                return LLMReply(parsed=parsed)
            raw = reply.get("raw")
            if isinstance(raw, BaseMessage) and raw.text:
                return LLMReply(text=raw.text)
    try:
        message = await llm.ainvoke(list(messages))
    except _UNAVAILABLE_ERRORS as error:
        raise _unavailable(error) from error
    return LLMReply(text=message.text)


def extract_json(text: str) -> Any:
    """The first JSON value in `text`, looking inside code fences and past chatter around it.

    Raises ValueError (with the start of the text) when there is none.
    """
    candidates = [*(m.group(1) for m in _FENCE.finditer(text)), text]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        stripped = candidate.strip()
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            pass
        for start, char in enumerate(stripped):
            if char in "[{":
                try:
                    value, _ = decoder.raw_decode(stripped, start)
                except json.JSONDecodeError:
                    continue
                return value
    preview = text.strip()[:120]
    raise ValueError(f"no JSON found in the model's reply: {preview!r}")
