"""Planned tasks that should read an earlier task's result but were given words, or nothing, instead.

A small controller often plans a later step of a chain on a literal that only describes the earlier result:
"read the summary aloud" becomes text-to-speech of the words "the summary", or the step's own words are copied
into the argument. No user gave that text; run as planned, the task would speak or translate the description of
its input rather than the input. Such a literal is wired to the nearest earlier task that produces text, which is
what the request asked for.

A text input left out altogether loses the same way: "transcribe the call, then answer: who called?" is planned as
question-answering of the question alone, without the passage (the transcript) to answer it from; "describe the
change, then make it to photo.jpg" as an edit of the photo without an instruction; a question about a
picture as visual-question-answering without the question. None of these can run (the runner says so). The text
it lacks (`text`, or a question's `context`, a comparison's `text2`) is the nearest earlier task's text output,
as for a literal above. A plan of one question about a file ("What is the total on invoice.png?" planned as
document-question-answering of the picture alone) has no earlier result: its question is the request itself.

No LLM call: the rules read the plan, the step phrases and the request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from hugginggraph.planning.references import REFERENCE
from hugginggraph.tools.runners.task_inputs import question_and_context, sentences_to_compare
from hugginggraph.tools.tasks import MEDIA_MODALITIES, TaskSpec

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


_SECOND_TEXT: dict[str, tuple[str, Callable[[dict[str, str]], object]]] = {
    "question-answering": ("context", question_and_context),
    "sentence-similarity": ("text2", sentences_to_compare),
}
"""Tasks that read two texts: the name of the second, and the runner's own reading of the pair, which raises
ValueError when the arguments hold only one."""


def _normalized(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _stands_for_earlier_result(value: str, step: str, request: str) -> bool:
    """The literal repeats the task's step, or names an earlier result ("the summary") and is not the user's text."""
    words = _normalized(value)
    if step and words == _normalized(step):
        return True
    users_own = len(words.split()) >= _USERS_OWN_TEXT_WORDS and words in _normalized(request)
    return not users_own and _EARLIER_RESULT.search(value) is not None


def _texts(args: dict[str, Any]) -> list[Any]:
    """The values of a task's text arguments: all but its media files."""
    return [value for name, value in args.items() if name not in MEDIA_MODALITIES]


def _missing_text(task: str, spec: TaskSpec, args: dict[str, Any], texts: list[Any]) -> str | None:
    """The name of a text input the task needs but lacks: its `text` when none of its `texts` (see `_texts`) holds
    words (validation takes a lone `sentence` as the text), or the second text of a two-text task (see
    `_SECOND_TEXT`); None when it has them."""
    if "text" in spec.inputs and not any(isinstance(value, str) and value.strip() for value in texts):
        return "text"
    if task not in _SECOND_TEXT or not isinstance(args.get("text"), str):
        return None
    name, read_pair = _SECOND_TEXT[task]
    try:
        read_pair({key: value for key, value in args.items() if isinstance(value, str)})
    except ValueError:
        return name
    return None


def _asks_about_a_file(spec: TaskSpec) -> bool:
    """Whether the task reads a file and a text: a question about a picture or a document, or an instruction."""
    return "text" in spec.inputs and any(name in MEDIA_MODALITIES for name in spec.inputs)


def wire_back_references(items: list[Any], request: str, tasks: Mapping[str, TaskSpec]) -> tuple[list[Any], int]:
    """The plan with each task whose text reads no earlier result wired to the nearest earlier task producing text,
    where its text stands for that result or a text input is missing (see the module docstring); and how many
    tasks changed. Literals of tasks with media inputs stay (a question about an image): there the words are the
    question."""
    revised: list[Any] = []
    text_outputs: list[int] = []  # ids of earlier tasks that produce text, in plan order
    wired = 0
    alone = sum(isinstance(item, dict) for item in items) == 1
    for item in items:
        spec = tasks.get(str(item.get("task"))) if isinstance(item, dict) else None
        if spec is None or not isinstance(item.get("id"), int) or not isinstance(item.get("args"), dict):
            revised.append(item)
            continue
        args, text = item["args"], item["args"].get("text")
        step = item.get("step") if isinstance(item.get("step"), str) else ""
        texts = _texts(args)
        if text_outputs and not any(REFERENCE.search(str(value)) for value in texts):
            earlier = f"<GENERATED>-{text_outputs[-1]}"
            if spec.inputs == ("text",) and isinstance(text, str) and _stands_for_earlier_result(text, step, request):
                item, wired = {**item, "args": {**args, "text": earlier}}, wired + 1
            elif (missing := _missing_text(item["task"], spec, args, texts)) is not None:
                item, wired = {**item, "args": {**args, missing: earlier}}, wired + 1
        elif alone and _asks_about_a_file(spec) and _missing_text(item["task"], spec, args, texts) == "text":
            item, wired = {**item, "args": {**args, "text": request}}, wired + 1
        revised.append(item)
        if spec.output == "text":
            text_outputs.append(item["id"])
    return revised, wired
