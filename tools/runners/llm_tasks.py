"""How the controller LLM does each text task: what its prompt is filled with, what reply it is asked for, and how
that reply becomes the task's output.

Free text (a summary, a translation, a continuation, a reply) comes back as written. Labels, entities and answer
spans are asked for as JSON of a schema, which a grammar-constrained controller (the embedded one) cannot break,
and are then checked against the input: a label must be a candidate, an entity or an answer must be words of the
text. A reply that fails a check is rejected with the reason, so the task fails rather than passing on a made-up
result. Outputs take the shapes of the `transformers` pipelines (`entity_group`, `answer` with its span, ...), so
whoever reads a result need not know which kind of model made it.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, ClassVar, Literal, cast

from pydantic import BaseModel, Field, ValidationError, create_model

from hugginggraph.tools.languages import language_code, language_name, wrong_language
from hugginggraph.tools.llm_json import extract_json
from hugginggraph.tools.runners.task_inputs import Inputs, candidate_labels, question_and_context


class ReplyRejected(ValueError):
    """The controller's reply cannot stand as the task's output; the message says why."""


class Label(BaseModel):
    label: str


EntityLabel = Literal["PER", "ORG", "LOC", "DATE", "MISC"]
"""CoNLL's entity types, as most token-classification models on the Hub name them, with dates added."""

MAX_ENTITIES = 40
"""The most entities one reply may list: a small model otherwise lists one name until its tokens run out."""


class Entity(BaseModel):
    text: str
    label: EntityLabel


class Entities(BaseModel):
    entities: list[Entity] = Field(max_length=MAX_ENTITIES)


class Answer(BaseModel):
    answer: str


def text_of(inputs: Inputs) -> str:
    """The `text` argument, which every task here reads; missing or blank is an error the user can act on."""
    text = inputs.get("text", "").strip()
    if not text:
        raise ValueError("the task has no text to work on: pass it as `text`")
    return text


def _or_list(items: list[str]) -> str:
    """`a, b or c`, as the prompts name the labels."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} or {items[-1]}"


def _span(needle: str, haystack: str, start: int = 0) -> tuple[int, int] | None:
    """Where `needle` is in `haystack` (from `start`) as whole words, ignoring case and how they are spaced."""
    words = needle.split()
    if not words:
        return None
    pattern = re.compile(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", re.IGNORECASE)
    found = pattern.search(haystack, start)
    return found.span() if found else None


class TextTask:
    """A task whose reply is free text: asked for plainly and kept as written, unless empty."""

    output_key = "generated_text"
    """Where the pipelines of this task put their text, and so where `data` carries it."""

    def values(self, inputs: Inputs) -> dict[str, str]:
        """What the task's prompt templates are filled with."""
        return {"text": text_of(inputs)}

    def schema(self, inputs: Inputs) -> type[BaseModel] | None:
        """The JSON the reply must match; None for free text."""
        return None

    def output(self, reply: Any, inputs: Inputs) -> Any:
        """The task's raw output (pipeline-shaped) from the reply: a `schema` instance, or the reply's text."""
        text = str(reply).strip()
        if not text:
            raise ReplyRejected("the controller's reply was empty")
        return {self.output_key: text}


class Summary(TextTask):
    """A summary, as long as the `length` argument asks ("one sentence", "3 sentences", "50 words", "short")."""

    output_key = "summary_text"
    NAMED_LENGTHS: ClassVar[dict[str, str]] = {
        "short": "in one or two sentences",
        "brief": "in one or two sentences",
        "concise": "in one or two sentences",
        "detailed": "in one detailed paragraph",
        "long": "in one detailed paragraph",
    }
    DEFAULT = "in a few sentences"

    def values(self, inputs: Inputs) -> dict[str, str]:
        return {**super().values(inputs), "length": self.length(inputs.get("length", ""))}

    @classmethod
    def length(cls, asked: str) -> str:
        """The words that tell the model how long to write, from the `length` argument."""
        asked = " ".join(asked.lower().split())
        if not asked:
            return cls.DEFAULT
        if asked.isdigit():
            count = int(asked)
            return "in one sentence" if count == 1 else f"in {count} sentences"
        if asked in cls.NAMED_LENGTHS:
            return cls.NAMED_LENGTHS[asked]
        return asked if asked.startswith("in ") else f"in {asked}"


class Translation(TextTask):
    """A translation into the `language` argument (English when none is given). One that is not in that language
    fails: a small model asked for French may answer in English, or repeat its input."""

    output_key = "translation_text"

    def values(self, inputs: Inputs) -> dict[str, str]:
        return {**super().values(inputs), "language": self.language(inputs)}

    @staticmethod
    def language(inputs: Inputs) -> str:
        """The target language by name, also when given as a code ("fr" -> "French"): models know names better."""
        asked = inputs.get("language", "").strip() or "English"
        code = language_code(asked)
        return language_name(code) if code else asked

    def output(self, reply: Any, inputs: Inputs) -> Any:
        translated = super().output(reply, inputs)
        if reason := wrong_language(translated[self.output_key], self.language(inputs)):
            raise ReplyRejected(reason)
        return {**translated, "language": self.language(inputs)}


class Classification(TextTask):
    """One label among the candidates (`labels`, comma separated; by default the sentiment: positive, negative or
    neutral), chosen by the controller; it gives no probabilities, so the output has no scores."""

    def values(self, inputs: Inputs) -> dict[str, str]:
        return {**super().values(inputs), "labels": _or_list(candidate_labels(inputs))}

    def schema(self, inputs: Inputs) -> type[BaseModel]:
        return _label_schema(tuple(candidate_labels(inputs)))

    def output(self, reply: Any, inputs: Inputs) -> Any:
        chosen = cast("Label", reply).label.strip()
        match = next((label for label in candidate_labels(inputs) if label.lower() == chosen.lower()), None)
        if match is None:
            raise ReplyRejected(f"the controller chose {chosen!r}, not one of {_or_list(candidate_labels(inputs))}")
        return [{"label": match}]


@cache
def _label_schema(labels: tuple[str, ...]) -> type[Label]:
    """`Label` whose JSON schema makes the value an enum of `labels`, so a constrained decoder can only choose among
    them. Validation takes any string: a controller without structured output may write "Positive", which
    `Classification.output` matches to its candidate."""
    field = Field(json_schema_extra={"enum": list(labels)})
    return cast("type[Label]", create_model("Label", __base__=Label, label=(str, field)))


class NamedEntities(TextTask):
    """Named entities, each found in the text (one the text does not contain is dropped: the model made it up),
    with its character span."""

    def schema(self, inputs: Inputs) -> type[BaseModel]:
        return Entities

    def output(self, reply: Any, inputs: Inputs) -> Any:
        text = text_of(inputs)
        found: dict[tuple[int, int], dict[str, Any]] = {}
        for entity in cast("Entities", reply).entities:
            span = _span(entity.text, text)
            while span is not None and span in found:  # the same words again: their next occurrence
                span = _span(entity.text, text, span[1])
            if span is not None:
                start, end = span
                found[span] = {"entity_group": entity.label, "word": text[start:end], "start": start, "end": end}
        return sorted(found.values(), key=lambda entity: entity["start"])


class ExtractiveAnswer(TextTask):
    """The answer to a question as a span of the passage (`context`, or the rest of `text`; see `task_inputs`).
    An answer that is not in the passage is rejected: the task is to find the answer there, not to know it."""

    def values(self, inputs: Inputs) -> dict[str, str]:
        question, context = question_and_context(inputs)
        return {"question": question, "context": context}

    def schema(self, inputs: Inputs) -> type[BaseModel]:
        return Answer

    def output(self, reply: Any, inputs: Inputs) -> Any:
        _, context = question_and_context(inputs)
        answer = cast("Answer", reply).answer.strip().strip("\"'").rstrip(".").strip()
        span = _span(answer, context)
        if span is None:
            raise ReplyRejected(f"the answer {answer!r} is not in the passage" if answer else "the answer is empty")
        return {"answer": context[span[0] : span[1]], "start": span[0], "end": span[1]}


TEXT_TASKS: dict[str, TextTask] = {
    "text-classification": Classification(),
    "zero-shot-classification": Classification(),
    "token-classification": NamedEntities(),
    "question-answering": ExtractiveAnswer(),
    "summarization": Summary(),
    "translation": Translation(),
    "text-generation": TextTask(),
    "conversational": TextTask(),
}
"""Hub task id -> how the controller does it; each also has a prompt in prompts/llm_tasks.json."""


def parse_reply(text: str, schema: type[BaseModel]) -> BaseModel:
    """A plain-text reply read as `schema`, for controllers without structured output."""
    try:
        return schema.model_validate(extract_json(text))
    except (ValueError, ValidationError) as error:
        raise ReplyRejected(f"the controller's reply is not the JSON asked for: {error}") from None
