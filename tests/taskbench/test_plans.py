"""Our plans in TaskBench's form: `<GENERATED>-k` becomes `<node-j>`, j being task k's position in the plan."""

from __future__ import annotations

from hugginggraph.graph.state import Task
from hugginggraph.planning.plan_check import check_plan
from hugginggraph.taskbench.plans import raw_task_nodes, task_nodes


def test_references_name_positions_in_the_validated_plan_not_task_ids():
    raw_plan = [  # listed out of order, with ids that are not positions
        {"task": "translation", "id": 7, "dep": [3], "args": {"text": "<GENERATED>-3"}},
        {"task": "text-to-speech", "id": 5, "dep": [7], "args": {"text": "<GENERATED>-7"}},
        {"task": "image-to-text", "id": 3, "dep": [-1], "args": {"image": "photo.jpg"}},
    ]
    check = check_plan(raw_plan, None)
    assert [task.id for task in check.tasks] == [3, 7, 5]  # validation puts each task after the one it uses
    assert task_nodes(check.tasks) == [
        {"task": "image-to-text", "arguments": ["photo.jpg"]},
        {"task": "translation", "arguments": ["<node-0>"]},  # task 3 is at position 0
        {"task": "text-to-speech", "arguments": ["<node-1>"]},  # task 7 is at position 1
    ]


def test_every_reference_in_an_argument_and_every_argument_is_kept_in_order():
    tasks = [
        Task(id=10, task="image-to-text", args={"image": "a.jpg"}),
        Task(id=20, task="image-to-text", args={"image": "b.jpg"}),
        Task(
            id=30,
            task="visual-question-answering",
            dep=[10, 20],
            args={"image": "<GENERATED>-20", "text": "<GENERATED>-10 vs <GENERATED>-20"},
        ),
    ]
    assert task_nodes(tasks)[2] == {
        "task": "visual-question-answering",
        "arguments": ["<node-1>", "<node-0> vs <node-1>"],
    }


def test_a_reference_to_a_task_the_plan_lacks_is_left_as_written():
    tasks = [Task(id=0, task="translation", args={"text": "<GENERATED>-4"})]
    assert task_nodes(tasks) == [{"task": "translation", "arguments": ["<GENERATED>-4"]}]


def test_an_empty_plan_has_no_nodes():
    assert task_nodes([]) == []
    assert raw_task_nodes([]) == []


def test_a_raw_plan_keeps_what_reads_as_tasks_and_skips_the_junk():
    items = [
        "junk",
        5,
        None,
        ["a", "list"],
        {"no task": 1},
        {"task": 3},  # a name that is not a string
        {"task": "image-to-text", "id": 2, "args": {"image": "a.jpg"}},
        {"task": "translation", "id": "x", "args": ["<GENERATED>-2", 7]},  # args as a list, an odd id
        {"task": "text-to-speech", "args": "not arguments"},
        {"task": "Summarization", "id": 9, "args": {"text": "<GENERATED>-8"}},  # raw: the name is not normalized
    ]
    assert raw_task_nodes(items) == [
        {"task": "image-to-text", "arguments": ["a.jpg"]},
        {"task": "translation", "arguments": ["<node-0>", "7"]},  # id 2 is the first task kept
        {"task": "text-to-speech", "arguments": []},
        {"task": "Summarization", "arguments": ["<GENERATED>-8"]},  # no task 8: left as written
    ]
