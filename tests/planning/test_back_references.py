"""Literal text that stands for an earlier task's result is wired to that result, as is a text input left out (an
edit's instruction, a question's passage, a comparison's second sentence); the user's own text, questions about
images and tasks that already read an earlier result keep their arguments."""

from typing import Any

import pytest

from hugginggraph.planning.back_references import wire_back_references
from hugginggraph.tools.tasks import TASKS

REQUEST = "Summarize example.txt's story 'A fox met a crow by the river one morning', then read the summary aloud."


def task(task_id: int, task_type: str, step: str = "", **args: str) -> dict[str, Any]:
    return {"step": step, "task": task_type, "id": task_id, "dep": [-1], "args": args}


SUMMARY = task(0, "summarization", "summarize the story", text="A fox met a crow by the river one morning")


@pytest.mark.parametrize(
    "later",
    [
        task(1, "text-to-speech", "read the summary aloud", text="the summary"),  # names the earlier result
        task(1, "text-to-speech", "read the summary aloud", text="Read the summary aloud."),  # repeats its step
        task(1, "translation", "translate it", text="Translate this short text into French"),
    ],
)
def test_text_standing_for_an_earlier_result_reads_that_result(later: dict[str, Any]):
    revised, wired = wire_back_references([SUMMARY, later], REQUEST, TASKS)
    assert wired == 1
    assert revised == [SUMMARY, {**later, "args": {"text": "<GENERATED>-0"}}]


@pytest.mark.parametrize(
    "later",
    [
        task(1, "text-to-speech", "read the story aloud", text="A fox met a crow by the river one morning"),  # quoted
        task(1, "text-to-speech", "say hello", text="Hello there"),  # new words, no earlier result named
        task(1, "visual-question-answering", "ask about it", image="cat.jpg", text="what is in the picture"),
        task(1, "text-to-speech", "read the summary aloud", text="the summary of <GENERATED>-0"),  # already reads it
    ],
)
def test_the_users_text_questions_and_tasks_reading_a_result_keep_their_arguments(later: dict[str, Any]):
    plan = [SUMMARY, later]
    assert wire_back_references(plan, REQUEST, TASKS) == (plan, 0)


def test_only_an_earlier_task_producing_text_is_read_and_the_nearest_one_wins():
    picture = task(0, "text-to-image", "draw a fox", text="a fox")
    caption = task(1, "image-to-text", "caption the picture", image="<GENERATED>-0")
    first = task(2, "text-to-speech", "read the caption aloud", text="the caption")
    revised, wired = wire_back_references([picture, first], REQUEST, TASKS)
    assert wired == 0  # a picture is no text to read aloud
    revised, wired = wire_back_references([SUMMARY, picture, caption, first], REQUEST, TASKS)
    assert wired == 1 and revised[3]["args"] == {"text": "<GENERATED>-1"}


@pytest.mark.parametrize(
    ("later", "missing"),
    [
        (task(1, "question-answering", "answer who met the crow", text="Who met the crow?"), "context"),
        (task(1, "sentence-similarity", "compare it with the fable", text="A crow outwits a fox"), "text2"),
        (task(1, "image-to-image", "edit the photo to match", image="photo.jpg"), "text"),
        (task(1, "visual-question-answering", "answer it about the photo", image="photo.jpg", text=" "), "text"),
        (task(1, "text-to-speech", "read it aloud"), "text"),
    ],
)
def test_a_text_input_left_out_reads_the_earlier_result(later, missing):
    revised, wired = wire_back_references([SUMMARY, later], REQUEST, TASKS)
    assert wired == 1
    assert revised[1]["args"] == {**later["args"], missing: "<GENERATED>-0"}


@pytest.mark.parametrize(
    "later",
    [
        task(1, "question-answering", "answer it", text="A fox met a crow. Who met the crow?"),  # passage given
        task(1, "question-answering", "answer it", text="Who met the crow?", context="A fox met a crow."),
        task(1, "question-answering", "answer it", text="<GENERATED>-0 Who met the crow?"),  # reads it already
        task(1, "sentence-similarity", "compare them", text='["A fox", "A crow"]'),  # both sentences given
        task(1, "sentence-similarity", "compare them", text="A fox", text2="A crow"),
        task(1, "image-to-image", "make it blue", image="photo.jpg", text="make the sky blue"),
        task(1, "text-to-speech", "say it", sentence="Hello there"),  # validation takes it as the text
    ],
)
def test_tasks_with_all_their_texts_keep_their_arguments(later: dict[str, Any]):
    plan = [SUMMARY, later]
    assert wire_back_references(plan, REQUEST, TASKS) == (plan, 0)


def test_a_text_input_left_out_with_no_earlier_text_is_left_to_fail_with_the_reason():
    picture = task(0, "text-to-image", "draw a fox", text="a fox")
    for later in (
        task(1, "question-answering", "answer who met the crow", text="Who met the crow?"),
        task(1, "image-to-image", "edit the picture", image="<GENERATED>-0"),  # a picture is no instruction
    ):
        plan = [picture, later]
        assert wire_back_references(plan, REQUEST, TASKS) == (plan, 0)


def test_a_lone_question_about_a_file_without_its_question_asks_the_request():
    request = "What is the total amount on invoice.png?"
    question = task(0, "document-question-answering", "answer from invoice.png", image="invoice.png")
    assert wire_back_references([question], request, TASKS) == (
        [task(0, "document-question-answering", "answer from invoice.png", image="invoice.png", text=request)],
        1,
    )
    summary = task(0, "summarization", "summarize it")  # no file: nothing says the request is its input
    assert wire_back_references([summary], "Summarize it.", TASKS) == ([summary], 0)
    draw = task(1, "visual-question-answering", "count the cats", image="cats.png")  # one of two: not the request
    assert wire_back_references([task(0, "text-to-image", "draw", text="x"), draw], request, TASKS)[1] == 0


def test_items_that_are_not_tasks_are_passed_through():
    plan: list[Any] = ["not a task", {"task": "no-such-type", "id": 0}, task(1, "summarization", text="the text")]
    assert wire_back_references(plan, REQUEST, TASKS) == (plan, 0)
