"""Planned tasks that should read an earlier task's result but were given words instead.

A small controller often plans a later step of a chain on a literal that only describes the earlier result:
"read the summary aloud" becomes text-to-speech of the words "the summary", or the step's own words are copied
into the argument. No user gave that text; run as planned, the task would speak or translate the description of
its input rather than the input. Such a literal is wired to the nearest earlier task that produces text, which is
what the request asked for. No LLM call: the rule reads the plan, the step phrases and the request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hugginggraph.nodes.validation import REFERENCE
from hugginggraph.tools.tasks import TaskSpec

_EARLIER_RESULT = re.compile(
    r"\b(?:the|this|that|these|those|its|their|our|my)\s+(?:\w+\s+){0,2}?"
    r"(?:description|summary|text|caption|result|results|translation|translated|answer|transcript|transcription|"
    r"output|category|classification|labels?|response|findings|story|sentence|phrase|words|content|entities|"
    r"objects?|abstract|script|report|information|analysis|insights?|interpretation|notes?|idea|theme|concept|"
    r"emotions?|sentiment|reply|rundown)\b",
    re.IGNORECASE,
)
_USERS_OWN_TEXT_WORDS = 4
"""A literal of at least this many words found in the request is the user's own text (a sentence to translate),
even if it says "the text"."""


def _normalized(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _stands_for_earlier_result(value: str, step: str, request: str) -> bool:
    """The literal repeats the task's step, or names an earlier result ("the summary") and is not the user's text."""
    words = _normalized(value)
    if step and words == _normalized(step):
        return True
    users_own = len(words.split()) >= _USERS_OWN_TEXT_WORDS and words in _normalized(request)
    return not users_own and _EARLIER_RESULT.search(value) is not None


def wire_back_references(items: list[Any], request: str, tasks: Mapping[str, TaskSpec]) -> tuple[list[Any], int]:
    """The plan with each text-only task that reads no earlier result, and whose text stands for one, wired to the
    nearest earlier task producing text; and how many tasks changed. Tasks with other inputs (a question about an
    image) keep their literals: there the words are the question."""
    revised: list[Any] = []
    text_outputs: list[int] = []  # ids of earlier tasks that produce text, in plan order
    wired = 0
    for item in items:
        spec = tasks.get(str(item.get("task"))) if isinstance(item, dict) else None
        if spec is None or not isinstance(item.get("id"), int) or not isinstance(item.get("args"), dict):
            revised.append(item)
            continue
        args, text = item["args"], item["args"].get("text")
        step = item.get("step") if isinstance(item.get("step"), str) else ""
        if (
            spec.inputs == ("text",)
            and text_outputs
            and isinstance(text, str)
            and not any(REFERENCE.search(str(value)) for value in args.values())
            and _stands_for_earlier_result(text, step, request)
        ):
            item = {**item, "args": {**args, "text": f"<GENERATED>-{text_outputs[-1]}"}}
            wired += 1
        revised.append(item)
        if spec.output == "text":
            text_outputs.append(item["id"])
    return revised, wired
