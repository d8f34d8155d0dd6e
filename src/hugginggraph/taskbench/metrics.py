"""TaskBench's plan metrics, computed as its evaluator (`taskbench/evaluate.py` in microsoft/JARVIS) does.

Per record, each side's plan becomes sets of strings; counts are summed over records (micro-averaging), then
F1 = 2·TP / (2·TP + FP + FN):

- **n-F1**, nodes: the set of tool names. Names that are not tools of the benchmark count on neither side (its
  evaluator maps them to a "negative" class it leaves out of the average).
- **e-F1**, links: the set of (source tool, target tool) pairs, read from `<node-j>` arguments (not from
  `task_links`), a node's reference to itself ignored.
- **t-F1**, argument names: the set of "tool-name" strings, where an argument's name is the output type of the
  node it refers to, or for a literal the kind of content it holds (a file's extension says image, audio or
  video; anything else is text).
- **v-F1**, argument names and values: "tool-name-value", the value being the referenced tool's name or the
  literal.

Where TaskBench's script silently drops a record it cannot parse, we do not: a failed plan is an empty one, a
reference to a node that does not exist links nothing and counts as an argument named "other".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hugginggraph.tools.tasks import normalize_task_name

_NODE_REFERENCE = re.compile(r"<node-(\d+)>")
_EXTENSIONS = {
    "image": ("jpg", "png", "jpeg", "gif", "bmp", "tiff", "svg", "ico"),
    "audio": ("mp3", "wav", "wma", "ogg", "aac", "flac", "aiff", "au"),
    "video": ("mp4", "avi", "mov", "flv", "wmv", "mkv", "webm", "m4v", "mpg", "mpeg"),
}


def content_type(value: str) -> str:
    """TaskBench's guess at what a literal argument holds: a dot-extension anywhere in it decides."""
    text = value.strip("'")
    return next((kind for kind, exts in _EXTENSIONS.items() if any(f".{ext}" in text for ext in exts)), "text")


def _argument_text(argument: Any) -> str:
    if isinstance(argument, dict):
        argument = next(iter(argument.values()), "")
    if isinstance(argument, list):
        argument = " ".join(str(item) for item in argument)
    return str(argument)


@dataclass(frozen=True)
class PlanSets:
    """One plan as the sets TaskBench compares."""

    nodes: frozenset[str]
    links: frozenset[tuple[str, str]]
    arg_names: frozenset[str]
    arg_values: frozenset[str]


def plan_sets(task_nodes: Sequence[Mapping[str, Any]], output_types: Mapping[str, str]) -> PlanSets:
    """The sets of one plan (`[{"task", "arguments"}]`); `output_types` maps a tool name to its output type."""
    names = [normalize_task_name(str(node.get("task", ""))) for node in task_nodes]
    links: set[tuple[str, str]] = set()
    arg_names: set[str] = set()
    arg_values: set[str] = set()
    for index, (name, node) in enumerate(zip(names, task_nodes, strict=True)):
        for argument in node.get("arguments") or []:
            text = _argument_text(argument)
            reference = _NODE_REFERENCE.search(text)  # TaskBench reads the first reference of an argument only
            if reference is None:
                kind, value = content_type(text), text
            elif int(reference.group(1)) == index:
                continue
            elif int(reference.group(1)) < len(names):
                source = names[int(reference.group(1))]
                links.add((source, name))
                kind, value = output_types.get(source, "other"), source
            else:
                kind, value = "other", text
            arg_names.add(f"{name}-{kind}")
            arg_values.add(f"{name}-{kind}-{value}")
    return PlanSets(frozenset(names), frozenset(links), frozenset(arg_names), frozenset(arg_values))


@dataclass
class Counts:
    """True positives, false positives and false negatives summed over records."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, truth: Iterable[Any], predicted: Iterable[Any]) -> None:
        truth, predicted = set(truth), set(predicted)
        self.tp += len(truth & predicted)
        self.fp += len(predicted - truth)
        self.fn += len(truth - predicted)

    @property
    def f1(self) -> float | None:
        """None when neither side has anything (e.g. links among single-task plans): there is nothing to score."""
        denominator = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denominator if denominator else None

    def as_list(self) -> list[int]:
        return [self.tp, self.fp, self.fn]


@dataclass
class PlanScores:
    """Micro-averaged counts of the four metrics over a set of records."""

    nodes: Counts = field(default_factory=Counts)
    links: Counts = field(default_factory=Counts)
    arg_names: Counts = field(default_factory=Counts)
    arg_values: Counts = field(default_factory=Counts)
    records: int = 0
    missed_tasks: Counter[str] = field(default_factory=Counter)
    """Task type → records whose truth has it and whose plan does not."""
    extra_tasks: Counter[str] = field(default_factory=Counter)
    """Task type → records whose plan has it and whose truth does not."""
    links_missed_between_planned: int = 0
    """Links the truth has and the plan lacks although the plan has both their task types: the most that drawing
    links anew, without adding tasks, could win."""

    def add(self, truth: PlanSets, predicted: PlanSets, tools: frozenset[str]) -> None:
        truth_nodes, predicted_nodes = truth.nodes & tools, predicted.nodes & tools
        self.nodes.add(truth_nodes, predicted_nodes)
        self.missed_tasks.update(truth_nodes - predicted_nodes)
        self.extra_tasks.update(predicted_nodes - truth_nodes)
        self.links.add(truth.links, predicted.links)
        self.links_missed_between_planned += sum(
            source in predicted.nodes and target in predicted.nodes for source, target in truth.links - predicted.links
        )
        self.arg_names.add(truth.arg_names, predicted.arg_names)
        self.arg_values.add(truth.arg_values, predicted.arg_values)
        self.records += 1

    def as_percent(self) -> dict[str, float | None]:
        """n-F1, e-F1, t-F1, v-F1 in percent, as the paper reports them (None: nothing to score)."""
        counts = {"n-F1": self.nodes, "e-F1": self.links, "t-F1": self.arg_names, "v-F1": self.arg_values}
        return {name: None if (f1 := c.f1) is None else 100 * f1 for name, c in counts.items()}
