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


async def ask_json(llm: BaseChatModel, messages: Sequence[BaseMessage], schema: type[SchemaT]) -> LLMReply[SchemaT]:
    """Structured output first; on models without it (or when it fails), a plain call whose text is returned."""
    try:
        structured = llm.with_structured_output(schema, include_raw=True)
    except NotImplementedError:
        structured = None
    if structured is not None:
        try:
            reply = await structured.ainvoke(list(messages))
        except Exception:  # a server that rejects the schema still deserves a plain try
            reply = None
        if isinstance(reply, dict):
            parsed = reply.get("parsed")
            if isinstance(parsed, schema):
                return LLMReply(parsed=parsed)
            raw = reply.get("raw")
            if isinstance(raw, BaseMessage) and raw.text:
                return LLMReply(text=raw.text)
    message = await llm.ainvoke(list(messages))
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
