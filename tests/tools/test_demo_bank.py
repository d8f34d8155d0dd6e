"""The demo bank: the demos nearest to a request, and the vote of its labelled steps on a step's task type. A
word-count embedder keeps these tests exact and fast; the last test uses MiniLM itself."""

from __future__ import annotations

import pytest
from conftest import word_vectors

from hugginggraph.tools.demo_bank import Demo, DemoBank, default_demo_bank, minilm_embedder, step_words
from hugginggraph.tools.tasks import TASKS


def demo(request: str, *steps: tuple[str, str], shown: bool = True) -> Demo:
    plan = [{"step": words, "task": task, "id": i, "dep": [-1], "args": {}} for i, (words, task) in enumerate(steps)]
    return Demo(request=request, plan=plan, shown=shown)


SPEAK = demo("read it aloud", ("read it aloud", "text-to-speech"), ("read the summary aloud", "text-to-speech"))
TRANSLATE = demo("translate it", ("translate it into french", "translation"), ("translate the summary", "translation"))
LONG = demo(
    "caption the photo and read the caption aloud",
    ("caption the photo", "image-to-text"),
    ("write a caption for the photo", "image-to-text"),
    ("read the caption aloud", "text-to-speech"),
    ("translate the caption", "translation"),
    shown=False,
)


def bank(*demos: Demo) -> DemoBank:
    return DemoBank(list(demos), lambda: word_vectors)


def test_a_step_gets_the_task_type_its_nearest_labelled_steps_vote_for():
    votes = bank(SPEAK, TRANSLATE, LONG).tasks_for_steps(["read the french summary aloud", "translate it"], TASKS)
    assert votes == ["text-to-speech", "translation"]


def test_without_a_clear_majority_the_controllers_choice_stands():
    even = bank(demo("x", ("read it", "text-to-speech"), ("translate it", "translation")))
    assert even.tasks_for_steps(["read it and translate it"], TASKS) == [None]


def test_asked_with_no_majority_the_leading_type_wins():
    close = bank(demo("x", ("read it aloud", "text-to-speech"), ("translate it", "translation")))
    assert close.tasks_for_steps(["read it and translate it"], TASKS) == [None]  # 55% of the vote
    assert close.tasks_for_steps(["read it and translate it"], TASKS, majority=0.0) == ["translation"]


def test_labelled_steps_vote_beside_the_demos_steps():
    labelled = DemoBank([TRANSLATE], lambda: word_vectors, [("read it aloud", "text-to-speech")])
    assert labelled.tasks_for_steps(["read the summary aloud"], TASKS) == ["text-to-speech"]
    assert labelled.static(5, TASKS) == [TRANSLATE]  # a labelled step is no demo


def test_only_task_types_the_planner_may_use_vote():
    without_speech = {task: spec for task, spec in TASKS.items() if task != "text-to-speech"}
    assert bank(SPEAK, TRANSLATE).tasks_for_steps(["read it aloud"], without_speech) == ["translation"]


def test_file_names_and_quoted_text_do_not_decide_the_vote():
    assert step_words("caption photo.jpg and say 'read it aloud'") == "caption it and say it"
    labelled = bank(demo("x", ("caption photo.jpg", "image-to-text"), ("read it aloud", "text-to-speech")))
    assert labelled.tasks_for_steps(["read photo.jpg aloud"], TASKS) == ["text-to-speech"]


def test_without_an_embedder_nothing_is_voted():
    assert DemoBank([SPEAK], lambda: None).tasks_for_steps(["read it aloud"], TASKS) == [None]


def test_long_plans_vote_but_are_never_shown_as_demos():
    both = bank(SPEAK, LONG)
    assert both.static(5, TASKS) == [SPEAK]
    assert both.nearest("caption the photo and read the caption aloud", 5, TASKS) == [SPEAK]
    assert bank(SPEAK, TRANSLATE, LONG).tasks_for_steps(["caption the photo"], TASKS) == ["image-to-text"]


def test_the_projects_long_plans_only_vote():
    demos = default_demo_bank().demos
    long_plans = [d for d in demos if not d.shown]
    assert len(long_plans) >= 40 and all(4 <= len(d.plan) <= 6 for d in long_plans)
    assert demos[-len(long_plans) :] == long_plans  # after the bank, whose first demos are the static ones


@pytest.mark.slow
def test_minilm_votes_name_the_task_a_step_describes():
    embed = minilm_embedder()
    if embed is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    labelled = DemoBank(default_demo_bank().demos, lambda: embed)
    steps = {
        "read the translated summary out loud": "text-to-speech",
        "translate the answer into Spanish": "translation",
        "make a short video about the story": "text-to-video",
        "clean up the noisy recording meeting.wav": "audio-to-audio",
    }
    assert labelled.tasks_for_steps(list(steps), TASKS) == list(steps.values())
