"""The planner's demo bank (prompts/planning_demos.json) and its long plans (prompts/planning_demos_long.json, shown
only on a second look): every demo is a clean plan that validates as it is, and the bank covers every task type in
the shapes requests take (single tasks, chains, DAGs).

The bank is searched per request and its nearest demos are shown to a small controller, which copies them
closely; a demo with a wrong dependency or a stray file name teaches exactly that mistake.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hugginggraph.planning.plan_check import check_plan
from hugginggraph.planning.references import REFERENCE
from hugginggraph.prompts import load_json
from hugginggraph.tools.artifacts import TEXT_FILE_ARGUMENT
from hugginggraph.tools.runners.task_inputs import MASK_SPELLINGS, question_and_context
from hugginggraph.tools.tasks import MEDIA_MODALITIES, TASKS, TaskSpec

EXTRA_TASKS: dict[str, TaskSpec] = {
    spec.id: spec
    for spec in (
        # TaskBench task types our registry lacks; demos using them are shown only where the registry has them.
        TaskSpec(id="image-editing", inputs=("image", "text"), output="image", description="edit an image"),
        TaskSpec(id="tabular-classification", inputs=("image",), output="text", description="classify a table"),
    )
}
KNOWN_TASKS = {**TASKS, **EXTRA_TASKS}

STATIC_REQUESTS = [
    "What objects are in street.png, and how far away does each part of the scene look?",
    "Write a short caption for holiday.jpg, then read the caption out loud.",
    "Transcribe memo.wav, tell me whether it sounds positive or negative, and give it a one-line summary.",
    "Draw a lighthouse on a cliff at sunset and tell me what a classifier thinks the picture shows.",
    "Hi! What can you do?",
]
"""The static demos (shown when retrieval is off or unavailable): first in the bank, unchanged."""

EXTENSIONS = {
    "image": {"jpg", "jpeg", "png", "webp", "bmp", "gif"},
    "audio": {"wav", "mp3", "flac", "ogg"},
    "video": {"mp4", "mov", "avi", "webm"},
}
_ANY_EXTENSION = "|".join(sorted(set().union(*EXTENSIONS.values()), key=len, reverse=True))
FILE_NAME = re.compile(rf"[\w\-]+\.(?:{_ANY_EXTENSION}|txt|pdf|csv|docx?)\b", re.IGNORECASE)
"""A file name as a request or an argument would write it. Media files are listed in `files` and passed as media
arguments; a text file (.txt) the request names is passed by its name as a whole text argument; no other kind
(documents, spreadsheets) may appear."""
QUOTED = re.compile(r'"([^"]+)"')
STAND_IN = "Some generated text."
"""What a `<GENERATED>-k` text reference is replaced by when checking how a runner reads an argument."""

BANK: list[dict[str, Any]] = load_json("planning_demos")
LONG_PLANS: list[dict[str, Any]] = load_json("planning_demos_long")
DEMOS = BANK + LONG_PLANS
PLANNED = [demo for demo in DEMOS if demo["plan"]]


def demo_id(demo: dict[str, Any]) -> str:
    return demo["request"][:50]


def named_files(demo: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The media files and the text files the request names."""
    names = set(FILE_NAME.findall(demo["request"]))
    media = {name for name in names if name.rsplit(".", 1)[-1].lower() in set().union(*EXTENSIONS.values())}
    text = {name for name in names if name.lower().endswith(".txt")}
    assert names == media | text, f"neither a media nor a text file: {sorted(names - media - text)}"
    return media, text


def tasks_of(demo: dict[str, Any]) -> set[str]:
    return {step["task"] for step in demo["plan"]}


def shape(plan: list[dict[str, Any]]) -> str:
    """single: one task; chain: each task uses the one before it; dag: anything else (fan-out, joins, siblings)."""
    if len(plan) == 1:
        return "single"
    if all(step["dep"] == [step["id"] - 1] for step in plan[1:]):
        return "chain"
    return "dag"


def test_bank_holds_about_150_demos_with_the_static_ones_first():
    assert 140 <= len(BANK) <= 160
    assert [demo["request"] for demo in BANK[: len(STATIC_REQUESTS)]] == STATIC_REQUESTS


def test_long_plans_have_four_to_six_tasks_as_chains_and_dags():
    assert len(LONG_PLANS) >= 40
    assert {len(demo["plan"]) for demo in LONG_PLANS} == {4, 5, 6}
    shapes = Counter(shape(demo["plan"]) for demo in LONG_PLANS)
    assert shapes["single"] == 0 and shapes["chain"] >= 20 and shapes["dag"] >= 15, shapes


def test_requests_are_distinct():
    requests = [" ".join(demo["request"].lower().split()) for demo in DEMOS]
    assert [r for r, n in Counter(requests).items() if n > 1] == []


@pytest.mark.parametrize("demo", DEMOS, ids=demo_id)
def test_demo_is_well_formed(demo: dict[str, Any]):
    assert list(demo) == ["request", "files", "plan"]
    assert isinstance(demo["request"], str) and 10 <= len(demo["request"]) <= 600
    assert demo["request"] == demo["request"].strip()
    assert all(isinstance(name, str) for name in demo["files"])
    assert len(set(demo["files"])) == len(demo["files"])
    plan = demo["plan"]
    assert [step["id"] for step in plan] == list(range(len(plan)))
    for step in plan:
        assert list(step) == ["step", "task", "id", "dep", "args"]
        assert 3 <= len(step["step"].split()) <= 12, step["step"]  # the request's words for this task, short
        assert step["task"] in KNOWN_TASKS, step["task"]
        assert all(isinstance(value, str) and value.strip() for value in step["args"].values())


@pytest.mark.parametrize("demo", PLANNED, ids=demo_id)
def test_every_task_gets_its_inputs_and_uses_outputs_of_the_right_kind(demo: dict[str, Any]):
    plan = demo["plan"]
    _, text_files = named_files(demo)
    for step in plan:
        spec = KNOWN_TASKS[step["task"]]
        args: dict[str, str] = step["args"]
        assert set(args) == set(spec.inputs), step
        refs = {int(k) for value in args.values() for k in REFERENCE.findall(value)}
        assert step["dep"] == (sorted(refs) or [-1]), step
        assert all(ref < step["id"] for ref in refs), step
        for name, value in args.items():
            for ref in map(int, REFERENCE.findall(value)):
                assert KNOWN_TASKS[plan[ref]["task"]].output == name, f"{step}: task {ref} makes no {name}"
            if name in MEDIA_MODALITIES and not REFERENCE.fullmatch(value):
                assert value in demo["files"], f"{step}: {value!r} is neither a listed file nor a task's output"
                assert value.rsplit(".", 1)[-1].lower() in EXTENSIONS[name], f"{step}: {value!r} is not {name}"
            elif name == "text" and _text_file_named(value) not in text_files:
                assert not FILE_NAME.search(value), f"{step}: a file name in a text argument"


@pytest.mark.parametrize("demo", DEMOS, ids=demo_id)
def test_files_are_the_media_files_the_request_names_and_each_is_used(demo: dict[str, Any]):
    media, text_files = named_files(demo)
    assert sorted(media) == sorted(demo["files"])
    used = {value for step in demo["plan"] for value in step["args"].values()}
    assert set(demo["files"]) <= used
    text_args = {_text_file_named(step["args"]["text"]) for step in demo["plan"] if "text" in step["args"]}
    assert text_files <= text_args, "a text file the request names is passed by its name as a text argument"


def _text_file_named(value: str) -> str | None:
    """The text file a text argument names, alone or with a question after it, as the executor reads it."""
    match = TEXT_FILE_ARGUMENT.fullmatch(value)
    return match["name"] if match else None


@pytest.mark.parametrize("demo", DEMOS, ids=demo_id)
def test_text_quoted_in_the_request_reaches_a_task_verbatim(demo: dict[str, Any]):
    values = [value for step in demo["plan"] for value in step["args"].values()]
    for quoted in QUOTED.findall(demo["request"]):
        assert any(quoted.strip() in value for value in values), quoted


@pytest.mark.parametrize("demo", PLANNED, ids=demo_id)
def test_plan_passes_validation_without_repairs(demo: dict[str, Any], tmp_path: Path):
    for name in set(demo["files"]) | named_files(demo)[1]:  # the text files too: validation checks they are there
        (tmp_path / name).write_bytes(b"")
    registry = TASKS if tasks_of(demo) <= set(TASKS) else KNOWN_TASKS
    check = check_plan(demo["plan"], tmp_path, tasks=registry)
    assert check.repairs == []
    assert check.doomed == {}
    assert [(t.id, t.task, t.dep) for t in check.tasks] == [
        (step["id"], step["task"], [d for d in step["dep"] if d >= 0]) for step in demo["plan"]
    ]


def _runner_sees(value: str) -> str:
    return REFERENCE.sub(STAND_IN, value)


@pytest.mark.parametrize(
    "step", [step for demo in PLANNED for step in demo["plan"]], ids=lambda step: f"{step['task']}-{step['id']}"
)
def test_text_arguments_read_as_the_runners_read_them(step: dict[str, Any]):
    text = _runner_sees(step["args"].get("text", ""))
    if step["task"] == "sentence-similarity":
        sentences = json.loads(text)
        assert isinstance(sentences, list) and len(sentences) == 2 and all(isinstance(s, str) for s in sentences)
    elif step["task"] == "question-answering":
        question, passage = question_and_context({"text": text})
        assert question.endswith("?") and passage
        assert text.rstrip().endswith(question), "the question comes after its passage"
    elif step["task"] == "fill-mask":
        assert any(mask in text for mask in MASK_SPELLINGS)
    elif step["task"] in ("visual-question-answering", "document-question-answering"):
        assert text.endswith("?")


def test_every_task_type_is_shown_in_enough_demos():
    counts = Counter(task for demo in DEMOS for task in tasks_of(demo))
    assert {task: counts[task] for task in TASKS if counts[task] < 3} == {}
    assert {task: counts[task] for task in EXTRA_TASKS if counts[task] < 5} == {}


def test_demos_mix_single_tasks_chains_and_dags():
    planned = [demo for demo in BANK if demo["plan"]]
    shapes = Counter(shape(demo["plan"]) for demo in planned)
    share = {kind: shapes[kind] / len(planned) for kind in ("single", "chain", "dag")}
    assert 0.30 <= share["single"] <= 0.40, share
    assert 0.40 <= share["chain"] <= 0.50, share
    assert 0.15 <= share["dag"] <= 0.25, share
    chain_lengths = {len(demo["plan"]) for demo in planned if shape(demo["plan"]) == "chain"}
    assert min(chain_lengths) == 2 and max(chain_lengths) <= 5 and len(chain_lengths) >= 3
