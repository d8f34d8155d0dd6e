from hugginggraph.planning.plan_schema import reply_plan
from hugginggraph.planning.plan_stream import whole_tasks


def test_a_task_is_whole_once_the_next_begins_in_either_reply_shape():
    listed = '[{"task": "translation", "id": 0, "dep": [-1], "args": {"text": "hi"}}, {"task": "summ'
    keyed = '{"tasks": [{"step": "read it", "task": "image-to-text", "id": 0}, {"st'
    assert whole_tasks(listed, reply_plan) == [{"task": "translation", "id": 0, "dep": [-1], "args": {"text": "hi"}}]
    assert whole_tasks(keyed, reply_plan) == [{"step": "read it", "task": "image-to-text", "id": 0}]


def test_a_raw_newline_in_a_string_still_reads():
    # JSON forbids it and the fast parser refuses it; small controllers write it, and the lenient parser takes it.
    written = '[{"task": "summarization", "id": 0, "args": {"text": "line one\nline two"}}, {"task'
    assert whole_tasks(written, reply_plan) == [
        {"task": "summarization", "id": 0, "args": {"text": "line one\nline two"}}
    ]


def test_prose_before_the_plan_is_skipped():
    written = 'Here is the plan: [{"task": "translation", "id": 0}, {"task": "su'
    assert whole_tasks(written, reply_plan) == [{"task": "translation", "id": 0}]
