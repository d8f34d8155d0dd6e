"""TaskBench's data as typed records: the ground-truth plans (`*.jsonl`) and the tool graph (`tool_desc.json`).

A record's `task_nodes` are `{"task": "Image-to-Text", "arguments": ["example.jpg"]}`, where an argument may name
an earlier node's output as `<node-j>`. The ground truth is noisy (unknown tool names, odd arguments, a node
without arguments): records are read as they are, and the metrics tolerate what they contain. A line that cannot
be scored at all (not JSON, no request, `task_nodes` an object) is skipped with a reason, so that one bad record
costs its own score and not the whole file's.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, ValidationError, field_validator

from hugginggraph.tools.tasks import MEDIA_EXTENSIONS, TEXT_EXTENSIONS, Modality, TaskSpec, normalize_task_name

PlanShape = Literal["single", "chain", "dag"]

_MEDIA_FILE = re.compile(rf"(?:https?://)?[\w\-./]+\.(?:{MEDIA_EXTENSIONS})\b", re.IGNORECASE)
_TEXT_FILE = re.compile(rf"[\w\-./]+\.(?:{TEXT_EXTENSIONS})\b", re.IGNORECASE)


class TaskNode(BaseModel):
    task: str
    arguments: list[Any] = Field(default_factory=list)

    @field_validator("arguments", mode="before")
    @classmethod
    def _one_argument_unlisted(cls, value: Any) -> Any:
        """A few records give one argument as a bare string or object: it is one argument (TaskBench's script
        would iterate the string's characters)."""
        if value is None:
            return []
        return value if isinstance(value, list) else [value]


class TaskBenchRecord(BaseModel):
    """One request with its ground-truth plan."""

    id: str
    instruction: str = Field(validation_alias=AliasChoices("instruction", "user_request"))
    """The user's request: `instruction` in TaskBench's released splits, `user_request` in the `data.json` its
    scripts write."""
    type: PlanShape
    task_nodes: list[TaskNode]
    task_steps: list[str] = Field(default_factory=list)
    """The steps in words ("Step 1: Use the Image-to-Text tool to ..."), in TaskBench's released records; only the
    step chooser's training reads them, and an odd value reads as none."""

    @field_validator("task_steps", mode="before")
    @classmethod
    def _steps_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, list) and all(isinstance(step, str) for step in value) else []

    @property
    def files(self) -> list[str]:
        """The media files the instruction names, in order, once each: what a user would attach."""
        return list(dict.fromkeys(match for match in _MEDIA_FILE.findall(self.instruction)))

    @property
    def text_files(self) -> list[str]:
        """The text documents the instruction names ("an article titled 'example.txt'"): in the user's workspace,
        but not among `files`, as TaskBench's plans pass them on as text."""
        return list(dict.fromkeys(_TEXT_FILE.findall(self.instruction)))


SkipReason = Literal[
    "not a JSON object",
    "no id",
    "no request",
    "unknown type",
    "task_nodes not a list",
    "task node without a task",
    "repeated id",
]
"""Why a line of a TaskBench file is not scored: it is not a record, it lacks what planning needs (a string `id`,
the request) or what scoring needs (`type` single, chain or dag; `task_nodes` a list of nodes each naming its task),
or its id was taken by an earlier record (predictions are kept by id). `task_links` are never read, the links being
read from `<node-j>` arguments as TaskBench's metrics do, and `task_steps` only to train the step chooser: a missing
or odd one skips nothing."""

_FIELD_REASONS: dict[str, SkipReason] = {"id": "no id", "instruction": "no request", "type": "unknown type"}
"""The reason for a record whose field of this name did not validate (`task_nodes` has two of its own)."""


@dataclass(frozen=True)
class RecordFile:
    """A TaskBench-format file as read."""

    records: list[TaskBenchRecord]
    """The records that can be planned and scored, in file order."""
    skipped: Counter[SkipReason]
    """Reason → how many lines were left out for it."""


def read_records(path: Path) -> RecordFile:
    """The records of a TaskBench-format JSONL file; blank lines are ignored and malformed ones counted by reason."""
    records: list[TaskBenchRecord] = []
    skipped: Counter[SkipReason] = Counter()
    seen: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        record = _record(line)
        if not isinstance(record, TaskBenchRecord):
            skipped[record] += 1
        elif record.id in seen:
            skipped["repeated id"] += 1
        else:
            seen.add(record.id)
            records.append(record)
    return RecordFile(records, skipped)


def load_records(path: Path) -> list[TaskBenchRecord]:
    """The records of `path` that can be scored; `read_records` also says what was skipped and why."""
    return read_records(path).records


def _record(line: str) -> TaskBenchRecord | SkipReason:
    try:
        fields = json.loads(line)
    except ValueError:
        return "not a JSON object"
    if not isinstance(fields, dict):
        return "not a JSON object"
    try:
        return TaskBenchRecord.model_validate(fields)
    except ValidationError as error:
        where = error.errors()[0]["loc"]  # the first field, in declaration order, that did not validate
        if where[0] != "task_nodes":
            return _FIELD_REASONS[str(where[0])]
        return "task_nodes not a list" if len(where) == 1 else "task node without a task"


def sample(records: Sequence[TaskBenchRecord], size: int | None, seed: int) -> list[TaskBenchRecord]:
    """A seeded random sample of `size` records (all of them when `size` is None or larger), in file order."""
    if size is None or size >= len(records):
        return list(records)
    chosen = set(random.Random(seed).sample(range(len(records)), size))
    return [record for i, record in enumerate(records) if i in chosen]


def split(
    records: Sequence[TaskBenchRecord], size: int, seed: int
) -> tuple[list[TaskBenchRecord], list[TaskBenchRecord]]:
    """The seeded sample of `size` records to report on, and the rest to tune on."""
    test = sample(records, size, seed)
    test_ids = {record.id for record in test}
    return test, [record for record in records if record.id not in test_ids]


def _modality(kind: str) -> Modality:
    return kind if kind in ("text", "image", "audio", "video") else "text"  # type: ignore[return-value]


def _first_sentence(text: str) -> str:
    """Enough of a tool's description for a prompt line (the full ones run to a paragraph each)."""
    return re.split(r"(?<=\.)\s", text.strip(), maxsplit=1)[0]


def _tools(tool_desc: Path) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = json.loads(tool_desc.read_text(encoding="utf-8"))["nodes"]
    return tools


def tool_output_types(tool_desc: Path) -> dict[str, str]:
    """Each tool's output type as TaskBench's metrics read it ("none" for a tool that outputs nothing), keyed by
    Hub-style id."""
    return {normalize_task_name(t["id"]): (t.get("output-type") or ["none"])[0] for t in _tools(tool_desc)}


def tool_registry(tool_desc: Path) -> dict[str, TaskSpec]:
    """The benchmark's tools as task types our planner and validator use, keyed by Hub-style id
    ("Image Editing" → "image-editing"). Each distinct input kind becomes one argument name."""
    registry = {}
    for tool in _tools(tool_desc):
        task_id = normalize_task_name(tool["id"])
        inputs = tuple(dict.fromkeys(_modality(kind) for kind in tool.get("input-type", []))) or ("text",)
        outputs = tool.get("output-type") or ["text"]
        registry[task_id] = TaskSpec(
            id=task_id, inputs=inputs, output=_modality(outputs[0]), description=_first_sentence(tool.get("desc", ""))
        )
    return registry
