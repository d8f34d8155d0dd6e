"""The `ModelRunner` interface: how a selected model is run, wherever it lives.

The executor hands a runner a model card, the task id and the task's resolved arguments (text, or paths of
input files for media), and gets back a `RunnerOutput`. Local `transformers`, remote inference endpoints and
the controller LLM itself all sit behind this one small interface.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pydantic import BaseModel, Field

from hugginggraph.tools.artifacts import Artifact, ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry


class RunnerOutput(BaseModel):
    """What one model call produced."""

    text: str
    """The output as text: what a later `<GENERATED>-k` text argument receives, and what the answer quotes."""
    data: Any = None
    """The model's raw output made JSON-safe (labels and scores, boxes, vectors), for callers who want detail."""
    artifacts: list[Artifact] = Field(default_factory=list)
    """Media files written by the call; a later image/audio argument receives the first of its kind."""


class ModelLoadError(RuntimeError):
    """The model could not be loaded at all; retrying the same model is pointless, the next candidate may work."""


class ModelRunner(Protocol):
    """Runs models of some kind (local weights, a remote endpoint, ...)."""

    def can_run(self, card: CatalogEntry) -> bool:
        """Whether this runner knows how to run `card` for its task."""
        ...

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        """Run `card` on `inputs`; raise on failure (the executor turns errors into failed results)."""
        ...


def checked_output(value: object) -> RunnerOutput:
    """`value` if it is a `RunnerOutput`. A runner that returns anything else is broken: the call fails like one
    that raised (and the next attempt or candidate is tried), rather than the executor tripping over it later."""
    if not isinstance(value, RunnerOutput):
        raise TypeError(f"the runner returned {type(value).__name__}, not a RunnerOutput")
    return value


class OneTaskRunner:
    """The checks shared by runners of one library's cards for one task, whose calls read one argument."""

    library: ClassVar[str]
    task: ClassVar[str]
    reads: ClassVar[tuple[str, str]]
    """The argument a call reads, and what it must hold (for the error when it is missing)."""

    def can_run(self, card: CatalogEntry) -> bool:
        return card.library == self.library and card.task == self.task

    def argument(self, card: CatalogEntry, task: str, inputs: dict[str, str]) -> str:
        """The argument the call reads. Raises ValueError for another task or a missing or blank argument."""
        if task != self.task:
            raise ValueError(f"{card.id} cannot do {task}; it does {self.task}")
        name, what = self.reads
        value = inputs.get(name, "")
        if not value.strip():
            raise ValueError(f'{self.task} needs {what} in "{name}"')
        return value
