"""Training the step chooser (`tools/step_chooser.py`): `hugginggraph train-step-chooser`.

The data recipe:

- **TaskBench's tune part**, never its held-out test part (`records.split`, seed 0), less any sample of it an
  evaluation will measure the chooser on (`--leave-out-sample`, `--leave-out-seed`). Each record's `task_steps`
  pair with its `task_nodes` where they are as many. In DAG records the nodes are not always listed in the order of
  the steps, so there only a step that names its node's tool is kept. A step loses its numbering ("Step 2:") and the
  tool names it mentions (the controller's steps name none; the name would decide the class), then its file names
  and quotes, as the vote strips a controller's step (`step_words`).
- **The demo bank's labelled steps** (our plans, long plans and labelled text steps), which also label the Hub task
  types TaskBench's tools lack.

The model is a softmax regression over the bank's MiniLM vectors with a small L2 penalty, fitted by L-BFGS from
zero weights: the loss is convex, so the same data gives the same weights.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Collection, Sequence
from pathlib import Path

from hugginggraph.taskbench.records import TaskBenchRecord, load_records, sample, split, tool_registry
from hugginggraph.tools.demo_bank import DemoBank, default_demo_bank, step_words
from hugginggraph.tools.embedding_cache import Embed
from hugginggraph.tools.step_chooser import ChooserWeights
from hugginggraph.tools.tasks import normalize_task_name

L2_PENALTY = 1e-5
"""On the weights, beside the mean cross-entropy (docs/planning.md: larger values lost accuracy on held-out steps)."""
TEST_PART_SIZE = 200
"""The held-out part the evaluator reports on (`hugginggraph eval --part test`), which training never reads."""
_NUMBERING = re.compile(r"^\s*(?:step\s*\d+\s*[:.)-]?|\d+\s*[.)])\s*", re.IGNORECASE)

LabelledStep = tuple[str, str]
"""A step phrase (as the vote embeds it) and its task type."""


def tool_steps(records: Sequence[TaskBenchRecord], task_types: Collection[str]) -> list[LabelledStep]:
    """The records' steps labelled with their nodes' task types (those of `task_types`), as the recipe says."""
    tool_names = re.compile(
        r"(?:the\s+)?(?:" + "|".join(_spelled(name) for name in sorted(task_types, key=len, reverse=True)) + r")"
        r"(?:\s+(?:tool|model))?",
        re.IGNORECASE,
    )
    labelled = []
    for record in records:
        if len(record.task_steps) != len(record.task_nodes):
            continue
        for step, node in zip(record.task_steps, record.task_nodes, strict=True):
            task = normalize_task_name(node.task)
            names_it = re.search(_spelled(task), step, re.IGNORECASE) is not None
            if task in task_types and (record.type != "dag" or names_it):
                labelled.append((step_words(tool_names.sub("it", _NUMBERING.sub("", step))), task))
    return labelled


def _spelled(task: str) -> str:
    """A pattern for a task type as prose writes it: "image-to-text", "Image to Text", "Image-to-Text"."""
    return r"[-\s]".join(re.escape(word) for word in task.split("-"))


def fit(steps: Sequence[LabelledStep], embed: Embed, l2: float = L2_PENALTY) -> ChooserWeights:
    """A softmax regression from the steps' vectors to their task types (stored as float32 by `save`)."""
    import numpy as np
    import torch

    classes = tuple(sorted({task for _, task in steps}))
    vectors = torch.tensor(np.asarray(embed([phrase for phrase, _ in steps])), dtype=torch.float64)
    labels = torch.tensor([classes.index(task) for _, task in steps])
    weights = torch.zeros(vectors.shape[1], len(classes), dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(len(classes), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([weights, bias], max_iter=500, line_search_fn="strong_wolfe")

    def loss() -> torch.Tensor:
        optimizer.zero_grad()
        value = torch.nn.functional.cross_entropy(vectors @ weights + bias, labels) + l2 * (weights * weights).sum()
        value.backward()
        return value

    optimizer.step(loss)
    return ChooserWeights(classes, weights.detach().numpy(), bias.detach().numpy())


def training_records(
    records: Sequence[TaskBenchRecord], leave_out: int | None = None, seed: int = 0
) -> list[TaskBenchRecord]:
    """The tune part, less the sample `hugginggraph eval --part tune --sample leave_out --seed seed` plans."""
    _, tune = split(records, TEST_PART_SIZE, 0)
    left_out = {record.id for record in sample(tune, leave_out, seed)} if leave_out else set()
    return [record for record in tune if record.id not in left_out]


def train(records: Sequence[TaskBenchRecord], tools: Collection[str], bank: DemoBank) -> ChooserWeights:
    """The chooser trained on the records' steps of the benchmark's `tools` and the bank's labelled steps (the recipe
    above)."""
    embed = bank.embedder()
    if embed is None:
        raise RuntimeError("training the step chooser needs MiniLM: hugginggraph models install-offline")
    return fit([*tool_steps(records, tools), *bank.labelled_steps], embed)


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--data", type=Path, required=True, help="TaskBench's records with task_steps (JSONL)")
    command.add_argument("--tools", type=Path, help="the benchmark's tool_desc.json (default: beside --data)")
    command.add_argument("--out", type=Path, required=True, help="where the weights go (.npz)")
    command.add_argument("--leave-out-sample", type=int, help="leave out the tune sample an evaluation plans")
    command.add_argument("--leave-out-seed", type=int, default=0, help="that sample's seed")


def run_command(args: argparse.Namespace) -> int:
    records = training_records(load_records(args.data), args.leave_out_sample, args.leave_out_seed)
    weights = train(records, tool_registry(args.tools or args.data.parent / "tool_desc.json"), default_demo_bank())
    weights.save(args.out)
    print(f"trained on {len(records)} records: {len(weights.classes)} task types, weights in {args.out}")
    return 0
