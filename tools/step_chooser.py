"""A trained chooser of task types for plan steps: the step vote's stronger sibling (`PlanningAids.step_chooser`).

The step vote asks the demo bank's nearest labelled steps which task type a step phrase needs. A classifier
trained on many more labelled steps generalises better than five neighbours: a softmax regression over the same
MiniLM vectors, trained by `hugginggraph train-step-chooser` (src/hugginggraph/taskbench/step_chooser_training.py;
the data recipe and its measurements are in docs/planning.md). Its weights ship as
`prompts/planning_step_chooser.npz`; without that file the vote falls back to the bank's neighbours.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from hugginggraph.prompts import read_bytes
from hugginggraph.tools.demo_bank import DemoBank, step_words
from hugginggraph.tools.embedding_cache import Embed
from hugginggraph.tools.tasks import TaskSpec

CHOOSER_FILE = "planning_step_chooser.npz"
"""The shipped weights, in the prompts package beside the demo bank they were partly trained on."""
CHOOSER_CONFIDENCE = 0.6
"""The probability the chooser's first type needs to replace the controller's choice."""


class StepTyper(Protocol):
    """What the step vote asks: for each step phrase, the task type of `tasks` it needs, or None where no type wins
    `majority` of the judgement."""

    def tasks_for_steps(
        self, steps: Sequence[str], tasks: Mapping[str, TaskSpec], majority: float = ...
    ) -> list[str | None]: ...


@dataclass(frozen=True)
class ChooserWeights:
    """A softmax regression over sentence vectors: logits = vector @ weights + bias, one column per class."""

    classes: tuple[str, ...]
    weights: Any
    """(dimensions, classes) array; float32 once saved."""
    bias: Any
    """(classes,) array; float32 once saved."""

    def save(self, path: Path) -> None:
        import numpy as np

        with path.open("wb") as file:
            np.savez(
                file,
                classes=np.asarray(self.classes),
                weights=np.asarray(self.weights, np.float32),
                bias=np.asarray(self.bias, np.float32),
            )

    @classmethod
    def read(cls, data: bytes) -> ChooserWeights:
        import numpy as np

        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            return cls(tuple(str(name) for name in arrays["classes"]), arrays["weights"], arrays["bias"])


class StepChooser:
    """Task types for step phrases from trained weights, over the embedder the weights were trained with."""

    def __init__(self, weights: ChooserWeights, embed: Embed) -> None:
        self.weights = weights
        self._embed = embed

    def tasks_for_steps(
        self, steps: Sequence[str], tasks: Mapping[str, TaskSpec], majority: float = CHOOSER_CONFIDENCE
    ) -> list[str | None]:
        """For each step, the type of `tasks` (among the trained classes) of highest probability, renormalised over
        those types, or None where it is below `majority`."""
        import numpy as np

        usable = [i for i, name in enumerate(self.weights.classes) if name in tasks]
        if not steps or not usable:
            return [None] * len(steps)
        vectors = np.asarray(self._embed([step_words(step) for step in steps]))
        logits = vectors @ self.weights.weights[:, usable] + self.weights.bias[usable]
        exp = np.exp(logits - logits.max(axis=1, keepdims=True))
        probabilities = exp / exp.sum(axis=1, keepdims=True)
        best = probabilities.argmax(axis=1)
        return [
            self.weights.classes[usable[choice]] if row[choice] >= majority else None
            for row, choice in zip(probabilities, best, strict=True)
        ]


@cache
def shipped_weights() -> ChooserWeights | None:
    """The packaged weights, read once per process; None when the file is absent."""
    data = read_bytes(CHOOSER_FILE)
    return None if data is None else ChooserWeights.read(data)


def trained_chooser(bank: DemoBank, weights: ChooserWeights | None = None) -> StepChooser | None:
    """A chooser of `weights` (default: the shipped ones) over the bank's embedder, or None without weights or an
    embedder."""
    weights = weights or shipped_weights()
    embed = bank.embedder() if weights is not None else None
    return None if weights is None or embed is None else StepChooser(weights, embed)
