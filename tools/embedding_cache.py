"""Embeddings kept: those of fixed text lists on disk, so a new process does not embed them again, and those of
recent short texts in memory, so a run does not embed one text twice.

Every process that plans embeds the same few hundred texts before its first request: the demo bank's requests and
labelled steps, and the direct-answer gate's labelled requests. That is the largest part of a cold start after the
controller's load, and the texts change only with a new release, so their vectors are saved in the data directory,
named by a digest of the model and the texts. Short lists (a request, a plan's steps) are not saved, which would
fill the folder with vectors never read again, but their texts are remembered for a while: the direct-answer gate
and the demos' retrieval embed the same request, and the step vote embeds a streamed plan's steps again at each
revision.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

Embed = Callable[[list[str]], Any]
"""Texts in, one unit-length vector per text out (a torch tensor or numpy array), so a dot product is a cosine."""

MIN_SAVED_TEXTS = 16
"""Lists shorter than this are not saved; their texts are remembered in memory instead."""
RECENT_TEXTS = 256
"""How many short lists' texts an embedder remembers (the least recently used go first)."""


def cached_embedder(embed: Embed, folder: Path, model: str) -> Embed:
    """`embed` giving numpy vectors, with the vectors of lists of `MIN_SAVED_TEXTS` or more texts saved under
    `folder` and read back by later calls (in any process) for the same `model` and texts, and the vectors of the
    last `RECENT_TEXTS` texts of shorter lists kept in memory. A file is written under a temporary name and renamed
    into place, so a reader never sees part of one; an unreadable file is embedded and written again."""
    recent = RecentVectors(embed)

    def cached(texts: list[str]) -> Any:
        import numpy as np

        if len(texts) < MIN_SAVED_TEXTS:
            return recent(texts)
        digest = hashlib.sha256("\0".join([model, *texts]).encode("utf-8", "surrogatepass")).hexdigest()
        path = folder / f"{digest}.npy"
        try:
            vectors = np.load(path, allow_pickle=False)
            if len(vectors) == len(texts):
                return vectors
        except (OSError, ValueError):
            pass
        vectors = np.asarray(embed(texts))
        folder.mkdir(parents=True, exist_ok=True)
        staging = folder / f".{digest}.{uuid.uuid4().hex}.npy"
        np.save(staging, vectors, allow_pickle=False)
        staging.replace(path)
        return vectors

    return cached


class RecentVectors:
    """Embeds short lists, embedding only the texts it has not seen among the last `RECENT_TEXTS`. Safe to call from
    several threads (the planner embeds off the event loop)."""

    def __init__(self, embed: Embed) -> None:
        self.embed = embed
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, texts: list[str]) -> Any:
        import numpy as np

        if not texts:
            return np.asarray(self.embed(texts))
        with self._lock:
            found = {text: self._vectors[text] for text in texts if text in self._vectors}
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            found.update(zip(missing, np.asarray(self.embed(missing)), strict=True))
        with self._lock:
            for text in texts:
                self._vectors[text] = found[text]
                self._vectors.move_to_end(text)
            while len(self._vectors) > RECENT_TEXTS:
                self._vectors.popitem(last=False)
        return np.stack([found[text] for text in texts])
