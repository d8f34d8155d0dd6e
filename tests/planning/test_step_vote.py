"""The step vote on task types: a clear vote replaces the controller's type where it fits the plan, and a type
that makes media its step never speaks of takes whatever the step's nearest labelled steps lean to. A table
stands in for the bank's vote; the last test uses the project's bank with MiniLM."""

import pytest
from conftest import VotingBank, stepped

from hugginggraph.planning.step_vote import retype_by_steps
from hugginggraph.tools.demo_bank import default_demo_bank, minilm_embedder
from hugginggraph.tools.tasks import TASKS

ASK = "what colour is the car in car.jpg?"
FIND = "find the capital of France in the document"


def test_a_voted_task_type_replaces_the_controllers_and_a_missing_text_input_is_the_step():
    plan = [stepped(ASK, "image-to-text", 0, image="car.jpg"), stepped("say it", "text-to-speech", 1, text="hi")]
    revised, retyped = retype_by_steps(plan, VotingBank({ASK: "visual-question-answering"}), TASKS)
    assert retyped == 1
    assert revised[0] == {**plan[0], "task": "visual-question-answering", "args": {"image": "car.jpg", "text": ASK}}
    assert revised[1] is plan[1]


def test_a_vote_for_a_type_whose_media_the_task_lacks_is_ignored():
    plan = [stepped("describe the poem", "summarization", 0, text="a poem")]
    assert retype_by_steps(plan, VotingBank({"describe the poem": "image-to-text"}), TASKS) == (plan, 0)


def test_media_inputs_the_new_type_does_not_take_are_dropped():
    plan = [stepped("caption it", "visual-question-answering", 0, image="car.jpg", text="caption it")]
    revised, _ = retype_by_steps(plan, VotingBank({"caption it": "image-to-text"}), TASKS)
    assert revised[0]["args"] == {"image": "car.jpg"}


def test_tasks_without_a_step_phrase_are_left_alone():
    plan = [{"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "car.jpg"}}, "not a task"]
    assert retype_by_steps(plan, VotingBank({}), TASKS) == (plan, 0)


def test_a_clear_vote_may_not_change_the_kind_of_output_a_later_task_reads():
    plan = [
        stepped("picture a red fox", "text-to-image", 0, text="a red fox"),
        stepped("make the fox blue", "image-editing", 1, image="<GENERATED>-0", text="make the fox blue"),
    ]
    assert retype_by_steps(plan, VotingBank({"picture a red fox": "text-generation"}), TASKS) == (plan, 0)
    unread = plan[:1]
    assert retype_by_steps(unread, VotingBank({"picture a red fox": "text-generation"}), TASKS)[1] == 1


@pytest.mark.parametrize(
    ("task", "step", "doubted"),
    [
        ("text-to-speech", FIND, True),
        ("text-to-speech", "read the capital of France aloud", False),
        ("text-to-image", FIND, True),
        ("text-to-image", "draw the capital of France", False),
        ("text-to-video", FIND, True),
        ("summarization", FIND, False),  # makes text: its step need not speak of media
    ],
)
def test_a_type_making_media_its_step_never_speaks_of_takes_the_leaning_of_the_vote(task, step, doubted):
    plan = [stepped(step, task, 0, text="example.txt")]
    revised, retyped = retype_by_steps(plan, VotingBank({}, {step: "question-answering"}), TASKS)
    assert retyped == doubted
    assert revised[0]["task"] == ("question-answering" if doubted else task)


def test_a_doubted_type_takes_no_leaning_to_its_own_kind_of_output():
    plan = [stepped(FIND, "text-to-speech", 0, text="example.txt")]
    assert retype_by_steps(plan, VotingBank({}, {FIND: "text-to-speech"}), TASKS) == (plan, 0)


def test_a_doubted_type_is_retyped_though_a_later_task_reads_its_output():
    # Whoever reads a doubted task's output was wired on the same mistake.
    plan = [
        stepped(FIND, "text-to-speech", 0, text="example.txt"),
        stepped("transcribe it", "automatic-speech-recognition", 1, audio="<GENERATED>-0"),
    ]
    revised, retyped = retype_by_steps(plan, VotingBank({}, {FIND: "question-answering"}), TASKS)
    assert (retyped, revised[0]["task"]) == (1, "question-answering")


@pytest.mark.slow
def test_the_projects_bank_retypes_doubted_steps_to_the_text_task_they_describe():
    if minilm_embedder() is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    steps = {
        "answer the question about the article": "question-answering",
        "identify the parts of speech in the description": "token-classification",
        "tell how close the answer is to my sentence": "sentence-similarity",
        "reply to the message in a friendly way": "conversational",
    }
    plan = [stepped(step, "text-to-speech", i, text="some text") for i, step in enumerate(steps)]
    revised, _ = retype_by_steps(plan, default_demo_bank(), TASKS)
    assert [item["task"] for item in revised] == list(steps.values())


@pytest.mark.slow
def test_the_labelled_text_steps_do_not_outvote_the_steps_of_other_text_tasks():
    if minilm_embedder() is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    # hugginggraph demo's controller names text-classification for its summary step: the vote must still mend it.
    plan = [stepped("summarize what it asks for", "text-classification", 0, text="<GENERATED>-1")]
    assert retype_by_steps(plan, default_demo_bank(), TASKS)[0][0]["task"] == "summarization"


def test_a_voted_type_takes_the_media_file_its_step_names_where_the_task_lacks_it():
    step = "apply the changes from the notes to photo.png"
    plan = [stepped(step, "text-to-speech", 0, text="the notes")]
    revised, retyped = retype_by_steps(plan, VotingBank({step: "image-to-image"}), TASKS)
    assert retyped == 1
    assert revised[0]["args"] == {"image": "photo.png", "text": "the notes"}


def test_a_voted_type_reads_the_nearest_earlier_task_making_the_media_it_lacks():
    step = "identify the emotion in the speech"
    plan = [
        stepped("say hello", "text-to-speech", 0, text="hello"),
        stepped("draw it", "text-to-image", 1, text="a cat"),
        stepped(step, "token-classification", 2, text="the speech"),
    ]
    revised, _ = retype_by_steps(plan, VotingBank({step: "audio-classification"}), TASKS)
    assert revised[2]["task"] == "audio-classification"
    assert revised[2]["args"] == {"audio": "<GENERATED>-0"}


def test_a_voted_type_whose_media_is_found_nowhere_is_not_taken():
    step = "identify the emotion in the speech"
    plan = [stepped(step, "token-classification", 0, text="the speech")]
    assert retype_by_steps(plan, VotingBank({step: "audio-classification"}), TASKS) == (plan, 0)


def test_a_vote_that_would_leave_a_given_file_unread_follows_the_planned_task_instead():
    step = "read the text on sign.png aloud"
    plan = [stepped(step, "image-to-text", 0, image="sign.png")]
    revised, retyped = retype_by_steps(plan, VotingBank({step: "text-to-speech"}), TASKS, step)
    assert retyped == 1
    assert revised == [
        plan[0],
        {"step": step, "task": "text-to-speech", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}},
    ]


def test_the_tasks_that_read_a_split_task_read_the_voted_task_after_it():
    step = "translate the words in photo.jpg into French"
    plan = [
        stepped(step, "image-to-text", 0, image="photo.jpg"),
        stepped("say it", "text-to-speech", 1, text="<GENERATED>-0"),
    ]
    plan[1]["dep"] = [0]
    revised, _ = retype_by_steps(plan, VotingBank({step: "translation"}), TASKS, step)
    assert [(item["id"], item["task"], item["dep"], item["args"]) for item in revised] == [
        (0, "image-to-text", [-1], {"image": "photo.jpg"}),
        (2, "translation", [0], {"text": "<GENERATED>-0"}),
        (1, "text-to-speech", [2], {"text": "<GENERATED>-2"}),
    ]


def test_a_file_another_task_reads_does_not_stop_the_vote():
    step = "read the text on sign.png aloud"
    plan = [
        stepped(step, "image-to-text", 0, image="sign.png"),
        stepped("find the signs", "object-detection", 1, image="sign.png"),
    ]
    revised, _ = retype_by_steps(plan, VotingBank({step: "text-to-speech"}), TASKS, step)
    assert revised[0] == {**plan[0], "task": "text-to-speech", "args": {"text": step}}


def test_a_voted_type_that_cannot_read_the_planned_output_leaves_a_lone_file_reader_as_planned():
    step = "make photo.png brighter and say so"
    plan = [stepped(step, "image-to-image", 0, image="photo.png")]
    assert retype_by_steps(plan, VotingBank({step: "text-to-speech"}), TASKS, step) == (plan, 0)


def test_the_task_after_a_lone_file_reader_takes_the_media_file_its_step_names():
    step = "edit photo.png as memo.wav says"
    plan = [stepped(step, "automatic-speech-recognition", 0, audio="memo.wav")]
    revised, _ = retype_by_steps(plan, VotingBank({step: "image-to-image"}), TASKS, step)
    assert revised[0] == plan[0]
    assert revised[1]["task"] == "image-to-image"
    assert revised[1]["args"] == {"image": "photo.png", "text": "<GENERATED>-0"}


def test_only_references_to_the_split_task_move():
    step = "translate the words in photo.jpg into French"
    plan = [
        stepped(step, "image-to-text", 1, image="photo.jpg"),
        stepped("say it", "text-to-speech", 12, text="<GENERATED>-1"),
        stepped("sum up what it says", "summarization", 13, text="<GENERATED>-12 and <GENERATED>-1"),
    ]
    revised, _ = retype_by_steps(plan, VotingBank({step: "translation"}), TASKS, step)
    assert [(item["id"], item["args"]) for item in revised] == [
        (1, {"image": "photo.jpg"}),
        (14, {"text": "<GENERATED>-1"}),
        (12, {"text": "<GENERATED>-14"}),
        (13, {"text": "<GENERATED>-12 and <GENERATED>-14"}),
    ]


def test_a_file_the_request_does_not_name_may_be_dropped_by_the_vote():
    step = "make a video of the story"
    plan = [stepped(step, "visual-question-answering", 0, image="stray_animals.jpg", text="the story")]
    revised, _ = retype_by_steps(plan, VotingBank({step: "text-to-video"}), TASKS, "Make a video of this story: ...")
    assert revised == [{**plan[0], "task": "text-to-video", "args": {"text": "the story"}}]
