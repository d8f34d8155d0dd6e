"""A translation's target language, a summary's length and a zero-shot classification's labels, stated in the
request or the task's step but left out of the plan, are written into the task's arguments; arguments the planner
gave, and tasks without text, stay."""

from typing import Any

import pytest

from hugginggraph.planning.task_options import label_choices, summary_length, with_task_options
from hugginggraph.tools.runners.base import RunnerOutput


def task(task_id: int, task_type: str, step: str = "", **args: str) -> dict[str, Any]:
    return {"step": step, "task": task_type, "id": task_id, "dep": [-1], "args": args}


@pytest.mark.parametrize(
    ("request_text", "language"),
    [
        ("Translate 'Where is the station?' into French.", "French"),
        ("Please translate this sentence in German: good morning", "German"),
        ("Translate the following text from English to spanish.", "Spanish"),
        ("I wrote this in German; translate it into English.", "English"),  # "into" names the target, "in" the source
        ("Give me the Italian translation of my note.", "Italian"),
        ("Translate it to Farsi.", "Persian"),
    ],
)
def test_the_target_language_of_the_request_goes_to_the_translation(request_text: str, language: str):
    plan = [task(0, "translation", text="x")]
    assert with_task_options(plan, request_text) == [task(0, "translation", text="x", language=language)]


@pytest.mark.parametrize(
    "request_text",
    [
        "Translate 'Je voudrais aller en Suisse, to Italian friends' for me.",  # the quoted words are the text
        "Translate this German poem.",  # a source language, no target
        "Translate it and polish the wording.",  # a verb, not the language
    ],
)
def test_no_target_named_leaves_the_translation_as_planned(request_text: str):
    plan = [task(0, "translation", text="x")]
    assert with_task_options(plan, request_text) == plan


def test_each_translation_takes_its_own_steps_language_or_the_requests_in_order():
    request = "Translate the caption into French and German."
    plan = [
        task(0, "image-to-text", image="a.jpg"),
        task(1, "translation", "translate it into French and German", text="<GENERATED>-0"),
        task(2, "translation", "translate it", text="<GENERATED>-0"),
        task(3, "translation", "then into German", text="<GENERATED>-0"),
    ]
    revised = with_task_options(plan, request)
    assert [item["args"].get("language") for item in revised] == [None, "French", "German", "German"]


def test_arguments_the_planner_gave_and_tasks_without_text_stay():
    request = "Translate the summary into French, in one sentence."
    given = task(0, "translation", text="x", language="Spanish")
    textless = task(1, "translation", "translate into French")  # validation would read a lone language as the text
    other = task(2, "text-to-speech", text="x")
    assert with_task_options([given, textless, other], request) == [given, textless, other]


@pytest.mark.parametrize(
    ("text", "length"),
    [
        ("Summarize this article in one sentence.", "one sentence"),
        ("Sum it up in 3 sentences, please", "3 sentences"),
        ("Give me a one-sentence summary.", "one sentence"),
        ("Summarise the report in about fifty words.", None),
        ("Summarise the report in 50 words.", "50 words"),
        ("A short summary of the meeting, please.", "short"),
        ("Briefly summarise the text.", "short"),
        ("Summarize this long article about trains.", None),  # the article is long, not the summary
        ("Summarize 'In one sentence: I quit.'", None),
    ],
)
def test_a_summary_length_is_read_from_the_words_that_state_it(text: str, length: str | None):
    assert summary_length(text) == length


def test_the_summary_length_goes_to_the_summary_and_the_steps_words_win():
    plan = [task(0, "summarization", text="x"), task(1, "summarization", "summarise it in two sentences", text="y")]
    revised = with_task_options(plan, "Summarize both notes in one sentence.")
    assert [item["args"]["length"] for item in revised] == ["one sentence", "2 sentences"]


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        (
            "Is this sentence about sports, cooking or politics: The chef added garlic.",
            ["sports", "cooking", "politics"],
        ),
        (
            "Sort this ticket into billing, technical problem or account access.",
            ["billing", "technical problem", "account access"],
        ),
        ("decide whether it is a complaint, a question or a compliment", ["complaint", "question", "compliment"]),
        ("label it as urgent or spam", ["urgent", "spam"]),
        ("Is this review positive or negative?", []),
        ('Classify "about cats or dogs" by its feeling.', []),  # quoted text is what is classified
    ],
)
def test_the_labels_offered_are_read_from_the_list_that_ends_in_or(text: str, labels: list[str]):
    assert label_choices(text) == labels


def test_the_labels_go_to_the_zero_shot_task_and_the_steps_words_win():
    plan = [
        task(0, "zero-shot-classification", "label it as news or ads", text="x"),
        task(1, "zero-shot-classification", text="y"),
    ]
    revised = with_task_options(plan, "Is each text about sports, cooking or politics?")
    assert [item["args"]["labels"] for item in revised] == ["news, ads", "sports, cooking, politics"]


async def test_the_planning_stage_hands_the_runner_the_language_of_the_request(make_context, run_graph):
    async def translate(card, task, inputs, artifacts) -> RunnerOutput:
        return RunnerOutput(text=f"{inputs['text']} in {inputs.get('language', 'no language')}")

    plan = [{"task": "translation", "id": 0, "dep": [-1], "args": {"text": "Good morning"}}]
    context = make_context(plan, {"opus-mt": ("translation", translate)})
    out = await run_graph(context, "Translate 'Good morning' into French.")
    assert out["results"][0].text == "Good morning in French"
