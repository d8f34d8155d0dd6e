"""Options the request states for a task that the plan left out: a translation's target language, a summary's
length, the labels a zero-shot classification chooses among.

The planner's schema offers a task its inputs (text, image, ...), not its options, so "translate this into French"
is planned as a translation of the text alone, and the runner would translate it into its default language. The
request (or the task's step phrase, which says the same in fewer words) names the option outright: "into French",
"in German", "to Spanish"; "in one sentence", "in 3 sentences", "a short summary"; "about sports, cooking or
politics", "as urgent, routine or spam". Those words are read here and written into the task's `language`, `length`
or `labels` argument, where the runners read them (`LLMRunner`).

Each task reads its own step phrase first. Without one, the request's languages go to its translations in the
order both are written ("into French and German", two translations: the first French, the second German). Quoted
text is left out of the search: it is what the user wants translated, not how. A task with no `text` argument is
left alone: validation takes a task's one argument as its missing input, and would translate the word "French".

No LLM call: the rules read the plan, the step phrases and the request.
"""

from __future__ import annotations

import re
from typing import Any

from hugginggraph.tools.languages import ALIASES, LANGUAGES, language_name

_NAME = "|".join(sorted([*LANGUAGES, *ALIASES], key=len, reverse=True))
_TARGET = re.compile(
    rf"\b(?P<prep>into|to|in)\s+(?:the\s+)?(?P<first>{_NAME})\b"
    rf"(?P<more>(?:\s*(?:,|and|, and|&)\s*(?:{_NAME})\b)*)",
    re.IGNORECASE,
)
_ADJECTIVE = re.compile(rf"\b(?P<first>{_NAME})\s+(?:translation|version)\b", re.IGNORECASE)
_PREFERENCE = {"into": 0, "to": 1, "in": 2}
"""Which preposition names the target when a request has several ("written in German, into English")."""
_LOWER_CASE_WORDS = {"polish"}
"""Language names that are also English words: taken only when written as a name ("Polish", not "polish it")."""
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|(?<!\w)'[^']*'(?!\w)")

_NUMBERS = {"a": 1, "a single": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_COUNT = r"(?P<count>\d+|a single|one|two|three|four|five|six|a)"
_COUNTED = (
    re.compile(rf"\bin\s+(?:just\s+|only\s+)?{_COUNT}\s+(?P<unit>sentence|word|paragraph|line)s?\b", re.IGNORECASE),
    re.compile(rf"\b{_COUNT}[- ](?P<unit>sentence|word|paragraph|line)\s+summary\b", re.IGNORECASE),
)
_NAMED_LENGTH = re.compile(
    r"\b(?P<adjective>short|brief|concise|quick|detailed|long)\s+summary\b|\b(?P<adverb>briefly|concisely|in detail)\b",
    re.IGNORECASE,
)
_NAMED = {"quick": "short", "briefly": "short", "concisely": "short", "in detail": "detailed", "long": "detailed"}

_LABEL = r"(?:(?:a|an|the)\s+)?[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,2}"
_LABELS = re.compile(
    rf"\b(?:about|into|as|between|among|whether it is|whether it's|is it)\s+"
    rf"(?P<labels>{_LABEL}(?:\s*,\s*{_LABEL})*\s*,?\s+or\s+{_LABEL})",
    re.IGNORECASE,
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)


def with_task_options(items: list[Any], request: str) -> list[Any]:
    """The plan with the target language of each translation, the length of each summary and the labels of each
    zero-shot classification that the request or the task's step states, where the task has no such argument yet."""
    languages = _languages(request)
    revised, translations = [], 0
    for item in items:
        if not (isinstance(item, dict) and isinstance(item.get("args"), dict) and "text" in item["args"]):
            revised.append(item)
            continue
        step = item["step"] if isinstance(item.get("step"), str) else ""
        options: dict[str, str] = {}
        if item.get("task") == "translation":
            own = _languages(step)
            if own:
                options["language"] = own[0]
            elif languages:
                options["language"] = languages[min(translations, len(languages) - 1)]
            translations += 1
        elif item.get("task") == "summarization" and (length := summary_length(step) or summary_length(request)):
            options["length"] = length
        elif item.get("task") == "zero-shot-classification" and (
            labels := label_choices(step) or label_choices(request)
        ):
            options["labels"] = ", ".join(labels)
        missing = {name: value for name, value in options.items() if name not in item["args"]}
        revised.append({**item, "args": {**item["args"], **missing}} if missing else item)
    return revised


def _languages(text: str) -> list[str]:
    """The target languages `text` names, by English name, in order: those after the likeliest preposition
    ("into" before "to" before "in"), else those before "translation" or "version"."""
    text = _QUOTED.sub(" ", text)
    found: list[tuple[int, int, list[str]]] = []
    for match in _TARGET.finditer(text):
        names = [match["first"], *re.findall(_NAME, match["more"], re.IGNORECASE)]
        found.append((_PREFERENCE[match["prep"].lower()], match.start(), names))
    if found:
        best = min(rank for rank, _, _ in found)
        names = [name for rank, _, group in sorted(found, key=lambda f: f[1]) if rank == best for name in group]
    else:
        names = [match["first"] for match in _ADJECTIVE.finditer(text)]
    languages: list[str] = []
    for name in names:
        if name.lower() in _LOWER_CASE_WORDS and not name[0].isupper():
            continue
        language = language_name(LANGUAGES.get(name.lower()) or ALIASES[name.lower()])
        if language not in languages:
            languages.append(language)
    return languages


def summary_length(text: str) -> str | None:
    """The length a summary should have, as `text` states it: "one sentence", "3 sentences", "50 words", or a word
    such as "short" or "detailed"; None when it states none."""
    text = _QUOTED.sub(" ", text)
    for pattern in _COUNTED:
        if match := pattern.search(text):
            count, unit = match["count"].lower(), match["unit"].lower()
            number = int(count) if count.isdigit() else _NUMBERS[count]
            return f"one {unit}" if number == 1 else f"{number} {unit}s"
    if match := _NAMED_LENGTH.search(text):
        name = (match["adjective"] or match["adverb"]).lower()
        return _NAMED.get(name, name)
    return None


def label_choices(text: str) -> list[str]:
    """The labels `text` offers as a list ending in "or", after the word that introduces them ("about sports,
    cooking or politics", "as urgent, routine or spam", "whether it is a complaint or a question"), articles
    dropped; [] when it offers none."""
    match = _LABELS.search(_QUOTED.sub(" ", text))
    if match is None:
        return []
    labels = re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", match["labels"].strip())
    return [_ARTICLE.sub("", label) for label in labels if label]
