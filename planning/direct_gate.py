"""Requests that need no model, told apart before planning (`PlanningAids.direct_gate`).

HuggingGPT's controller answers a greeting, a fact it knows or "what can you do?" itself, with an empty plan. A small
controller does not: told to reply [] when no model is needed, it still plans something (text-to-speech for a
question about a capital city). So each request is first compared with labelled requests of both kinds, by the
embeddings the demo bank retrieves demos with: the bank's demos with a plan need models; its demos with an empty
plan and `prompts/direct_requests.json` need none. The `NEIGHBOURS` nearest labelled requests vote, each with its
similarity, and the request is answered without planning when those needing no model carry `DIRECT_SHARE` of the
vote. A vote of neighbours rather than the single nearest: one labelled request that happens to share a topic
("Who painted the Mona Lisa?" and a demo restyling a photo as a painting) should not decide alone.

A request that brings an input file, or names one, always goes to planning: a file is given to be worked on. File
names and quoted text are left out of the comparison (`step_words`), as in the step vote: "read 'Paris is the
capital of France' aloud" asks for reading aloud, not for a capital.

The rule, its two numbers and the figures they give are in benchmarks/direct_gate.py, tuned on held-out votes of
the labelled requests themselves and on TaskBench's tune part.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from hugginggraph.prompts import load_json
from hugginggraph.tools.demo_bank import DemoBank, Embed, names_file, step_words

NEIGHBOURS = 11
"""How many labelled requests vote on whether a request needs a model."""
DIRECT_SHARE = 0.55
"""The share of the (similarity-weighted) vote that requests needing no model must reach to skip planning."""


def direct_requests() -> list[str]:
    """The labelled requests that need no model (`prompts/direct_requests.json`, grouped by kind)."""
    return [request for requests in load_json("direct_requests").values() for request in requests]


@dataclass(frozen=True)
class Labelled:
    """The labelled requests, embedded as compared (without file names and quoted text)."""

    embed: Embed
    requests: list[str]
    direct: Any
    """Per text: 1.0 when it needs no model, else 0.0 (a numpy vector)."""
    vectors: Any


class DirectGate:
    """Decides, before planning, whether a request needs any model."""

    def __init__(
        self, bank: DemoBank, direct: Sequence[str], neighbours: int = NEIGHBOURS, share: float = DIRECT_SHARE
    ) -> None:
        self.bank = bank
        self.neighbours = neighbours
        self.share = share
        self._direct = [*direct, *(demo.request for demo in bank.demos if not demo.plan)]
        self._models = [demo.request for demo in bank.demos if demo.plan]
        self._lock = threading.Lock()
        self._ready = False
        self._labelled: Labelled | None = None

    def answers_directly(self, request: str, files: Sequence[str] = ()) -> bool:
        """Whether the request needs no model: it brings and names no file, and the vote says so. False without an
        embedder (the bank's): planning then decides, as it did before the gate."""
        if files or names_file(request):
            return False
        shares = self.direct_shares([request])
        return shares is not None and bool(shares[0] >= self.share)

    def direct_shares(self, requests: Sequence[str]) -> Any:
        """Per request, the share of its neighbours' vote for needing no model (a numpy vector); None without an
        embedder."""
        labelled = self.labelled()
        if labelled is None:
            return None
        import numpy as np

        queries = np.asarray(labelled.embed([step_words(request) for request in requests]))
        return vote_shares(queries @ labelled.vectors.T, labelled.direct, self.neighbours)

    def labelled(self) -> Labelled | None:
        """The labelled requests embedded, or None without an embedder. Made on first use (one thread does it; the
        others wait)."""
        with self._lock:
            if not self._ready:
                embed = self.bank.embedder()
                if embed is not None:
                    import numpy as np

                    requests = [*self._direct, *self._models]
                    direct = np.array([1.0] * len(self._direct) + [0.0] * len(self._models))
                    vectors = np.asarray(embed([step_words(request) for request in requests]))
                    self._labelled = Labelled(embed, requests, direct, vectors)
                self._ready = True
            return self._labelled


def vote_shares(similarities: Any, direct: Any, neighbours: int) -> Any:
    """Per request (a row of `similarities`, a column per labelled request), the share of the similarity-weighted
    vote of its `neighbours` nearest labelled requests that goes to needing no model (`direct` is 1.0 for those).
    Negative similarities weigh nothing: an unrelated request is no evidence either way."""
    import numpy as np

    nearest = np.argsort(-similarities, axis=1)[:, :neighbours]
    weights = np.take_along_axis(similarities, nearest, axis=1).clip(min=0.0)
    return (weights * direct[nearest]).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


@cache
def gate_for(bank: DemoBank) -> DirectGate:
    """The gate over a bank's demos and the project's direct requests: one per bank, so each is embedded once."""
    return DirectGate(bank, direct_requests())
