"""TaskBench's files as records: the JSONL of ground-truth plans and the tool graph, on small files of our own."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hugginggraph.taskbench.records import (
    TaskBenchRecord,
    load_records,
    read_records,
    sample,
    split,
    tool_output_types,
    tool_registry,
)

# Written for these tests in TaskBench's format, with the fields its data carries that we do not read.
RECORDS: list[dict[str, Any]] = [
    {
        "id": "101",
        "seed": 7,
        "n_tools": 1,
        "type": "single",
        "instruction": "Please read 'menu.png' out loud to me.",
        "task_nodes": [{"task": "Image-to-Text", "arguments": "menu.png"}],  # one argument, not listed
        "task_links": [],
        "task_steps": ["Step 1: read the menu"],
    },
    {
        "id": "102",
        "type": "chain",
        "instruction": "Transcribe memo.wav, then translate the transcript into French.",
        "task_nodes": [
            {"task": "Automatic Speech Recognition", "arguments": ["memo.wav"]},
            {"task": "Translation", "arguments": ["<node-0>"]},
        ],
        "task_links": [{"source": "Automatic Speech Recognition", "target": "Translation"}],
    },
    {
        "id": "103",
        "type": "dag",
        "instruction": "Caption sketch.jpg and also draw a new picture from the words 'a red fox'.",
        "task_nodes": [
            {"task": "Image-to-Text", "arguments": ["sketch.jpg"]},
            {"task": "Text-to-Image", "arguments": [{"text": "a red fox"}]},
            {"task": "Sentence Similarity", "arguments": ["<node-0>", "a red fox"]},
        ],
    },
    {
        "id": "104",
        "type": "single",
        "instruction": "Summarize the news for me.",
        "task_nodes": [{"task": "Summarization"}, {"task": "Translation", "arguments": None}],  # noisy truth
    },
]


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def data(tmp_path: Path) -> Path:
    lines = [json.dumps(record) for record in RECORDS]
    return write_jsonl(tmp_path / "data.jsonl", [*lines[:2], "", "   ", *lines[2:]])  # blank lines in between


def records(count: int) -> list[TaskBenchRecord]:
    return [TaskBenchRecord(id=str(i), instruction=f"request {i}", type="single", task_nodes=[]) for i in range(count)]


def test_records_load_in_file_order_with_blank_lines_skipped(data):
    loaded = load_records(data)
    assert [record.id for record in loaded] == ["101", "102", "103", "104"]
    assert [record.type for record in loaded] == ["single", "chain", "dag", "single"]
    assert loaded[1].task_nodes[1].model_dump() == {"task": "Translation", "arguments": ["<node-0>"]}


def test_a_bare_string_or_object_argument_is_one_argument_and_a_missing_one_is_none(data):
    first, _, third, fourth = load_records(data)
    assert first.task_nodes[0].arguments == ["menu.png"]  # not ["m", "e", "n", "u", ...]
    assert third.task_nodes[1].arguments == [{"text": "a red fox"}]
    assert [node.arguments for node in fourth.task_nodes] == [[], []]


def line(drop: str = "", **fields: Any) -> str:
    """A record's JSON line: a small well-formed one with `fields` changed and the field `drop` left out."""
    record = {"id": "9", "instruction": "Caption a.jpg.", "type": "single", "task_nodes": [], **fields}
    return json.dumps({key: value for key, value in record.items() if key != drop})


# Lines shaped as TaskBench's noisy ones, each with the reason it is skipped for.
NOISY = [
    ("{not json", "not a JSON object"),
    ('["Image-to-Text"]', "not a JSON object"),
    (line(drop="id"), "no id"),
    (line(id=9), "no id"),
    (line(drop="instruction"), "no request"),
    (line(type="tree"), "unknown type"),
    (line(task_nodes={"task": "Image-to-Text", "arguments": ["a.jpg"]}), "task_nodes not a list"),
    (line(drop="task_nodes"), "task_nodes not a list"),
    (line(task_nodes=["Image-to-Text"]), "task node without a task"),
    (line(task_nodes=[{"arguments": ["a.jpg"]}]), "task node without a task"),
    (json.dumps(RECORDS[0]), "repeated id"),
]


def test_malformed_lines_are_skipped_and_counted_by_reason_and_the_rest_is_read(tmp_path):
    lines = [json.dumps(RECORDS[0])]
    for noisy, _ in NOISY:
        lines += [noisy, json.dumps(RECORDS[1])]
    read = read_records(write_jsonl(tmp_path / "noisy.jsonl", lines))
    assert [record.id for record in read.records] == ["101", "102"]
    repeats_of_102 = Counter({"repeated id": len(NOISY) - 1})
    assert read.skipped == Counter(reason for _, reason in NOISY) + repeats_of_102
    assert load_records(tmp_path / "noisy.jsonl") == read.records


def test_fields_never_read_skip_nothing_and_user_request_names_the_request(tmp_path):
    odd = [
        line(id="1", task_links="Image-to-Text -> Translation"),
        line(id="2", task_links=None, task_steps="Step 1: caption a.jpg."),
        line(id="3", task_steps=[{}]),  # and no task_links at all
        line(id="4", drop="instruction", user_request="Read 'menu.png' aloud."),  # as TaskBench's data.json has it
        line(id="5", task_nodes=[{"task": "Image-to-Text", "arguments": 7}]),
    ]
    read = read_records(write_jsonl(tmp_path / "odd.jsonl", odd))
    assert [record.id for record in read.records] == ["1", "2", "3", "4", "5"] and not read.skipped
    assert (read.records[3].instruction, read.records[3].files) == ("Read 'menu.png' aloud.", ["menu.png"])
    assert read.records[4].task_nodes[0].arguments == [7]  # a bare number is one argument, as a bare string is


@pytest.mark.parametrize(
    ("instruction", "files"),
    [
        ("Please read 'menu.png' out loud to me.", ["menu.png"]),
        ('Compare "a.jpg" with b.JPEG, then transcribe talk.mp3.', ["a.jpg", "b.JPEG", "talk.mp3"]),
        ("Describe photo.png. Then describe photo.png again, and 'clip.mp4'.", ["photo.png", "clip.mp4"]),
        ("Caption images/cat-1.webp for me", ["images/cat-1.webp"]),
        ("Summarize the attached notes.txt and this text.", []),  # not a media file
        ("No files here at all.", []),
    ],
)
def test_the_files_a_request_names_are_found_in_order_once_each(instruction, files):
    record = TaskBenchRecord(id="1", instruction=instruction, type="single", task_nodes=[])
    assert record.files == files


@pytest.mark.parametrize(
    ("instruction", "documents"),
    [
        ("I'm reading an article titled 'example.txt'. Summarize example.txt for me.", ["example.txt"]),
        ("Merge notes/a.md with b.TXT, then caption cat.png", ["notes/a.md", "b.TXT"]),
        ("Caption cat.png", []),
    ],
)
def test_the_text_documents_a_request_names_are_apart_from_its_files(instruction, documents):
    record = TaskBenchRecord(id="1", instruction=instruction, type="single", task_nodes=[])
    assert record.text_files == documents


@pytest.mark.parametrize(
    ("instruction", "files"),
    [
        ("Caption ./photo.png please", ["./photo.png"]),
        ("Caption https://example.com/cat.jpg please", ["https://example.com/cat.jpg"]),
    ],
    ids=["relative-path", "url"],
)
def test_files_keep_relative_paths_and_urls_whole(instruction, files):
    record = TaskBenchRecord(id="1", instruction=instruction, type="single", task_nodes=[])
    assert record.files == files


def test_a_sample_is_seeded_and_keeps_file_order():
    pool = records(30)
    chosen = sample(pool, 5, seed=3)
    assert len(chosen) == 5
    assert chosen == sample(pool, 5, seed=3)  # the same seed, the same records
    positions = [pool.index(record) for record in chosen]
    assert positions == sorted(positions)  # in file order, not drawing order
    assert len({tuple(r.id for r in sample(pool, 5, seed)) for seed in range(10)}) > 1  # the seed matters


@pytest.mark.parametrize("size", [None, 4, 10])
def test_a_sample_of_everything_is_every_record_in_order(size):
    pool = records(4)
    assert sample(pool, size, seed=0) == pool


def test_split_partitions_the_records_into_the_sample_and_the_rest():
    pool = records(12)
    test, rest = split(pool, 4, seed=5)
    assert test == sample(pool, 4, seed=5)
    assert {r.id for r in test}.isdisjoint({r.id for r in rest})
    assert sorted([*test, *rest], key=lambda r: int(r.id)) == pool
    assert rest == [record for record in pool if record not in test]  # in file order too


@pytest.fixture
def tool_desc(tmp_path: Path) -> Path:
    nodes = [
        {
            "id": "Image-to-Text",
            "desc": "Describes an image in words. Works on photos.",
            "input-type": ["image"],
            "output-type": ["text"],
        },
        {"id": "Sentence Similarity", "desc": "Scores two texts.", "input-type": ["text", "text"], "output-type": []},
        {
            "id": "Image Editing",
            "desc": "Edits an image as told. Any image.",
            "input-type": ["image", "text"],
            "output-type": ["image"],
        },
        {"id": "Text-to-Speech", "desc": "Reads text aloud", "input-type": ["text"], "output-type": ["audio"]},
        {"id": "Tabular Thing", "desc": "Reads a table.", "input-type": ["table"], "output-type": ["table"]},
    ]
    path = tmp_path / "tool_desc.json"
    path.write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    return path


def test_output_types_are_keyed_by_hub_style_ids_with_none_for_no_output(tool_desc):
    assert tool_output_types(tool_desc) == {
        "image-to-text": "text",
        "sentence-similarity": "none",
        "image-editing": "image",
        "text-to-speech": "audio",
        "tabular-thing": "table",  # as the benchmark says: the metrics compare names, not our modalities
    }


def test_the_tools_become_task_types_with_one_argument_per_input_kind(tool_desc):
    registry = tool_registry(tool_desc)
    assert list(registry) == [
        "image-to-text",
        "sentence-similarity",
        "image-editing",
        "text-to-speech",
        "tabular-thing",
    ]
    summary = {name: (spec.id, spec.inputs, spec.output) for name, spec in registry.items()}
    assert summary == {
        "image-to-text": ("image-to-text", ("image",), "text"),
        "sentence-similarity": ("sentence-similarity", ("text",), "text"),  # ["text", "text"]: one name; [] → text
        "image-editing": ("image-editing", ("image", "text"), "image"),
        "text-to-speech": ("text-to-speech", ("text",), "audio"),
        "tabular-thing": ("tabular-thing", ("text",), "text"),  # kinds we do not have are text
    }
    assert registry["image-to-text"].description == "Describes an image in words."  # the first sentence
    assert registry["text-to-speech"].description == "Reads text aloud"
