"""Embeddings of fixed text lists kept on disk, so a new process does not embed them again.

Every process that plans embeds the same few hundred texts before its first request: the demo bank's requests and
labelled steps, and the direct-answer gate's labelled requests. That is the largest part of a cold start after the
controller's load, and the texts change only with a new release, so their vectors are saved in the data directory,
named by a digest of the model and the texts. Short lists (a request, a plan's steps) are embedded as they come:
saving each would fill the folder with vectors never read again.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

Embed = Callable[[list[str]], Any]
"""Texts in, one unit-length vector per text out (a torch tensor or numpy array), so a dot product is a cosine."""

MIN_SAVED_TEXTS = 16
"""Lists shorter than this are embedded afresh each time."""


def disk_cached(embed: Embed, folder: Path, model: str) -> Embed:
    """`embed` giving numpy vectors, with the vectors of lists of `MIN_SAVED_TEXTS` or more texts saved under
    `folder` and read back by later calls (in any process) for the same `model` and texts. A file is written under a
    temporary name and renamed into place, so a reader never sees part of one; an unreadable file is embedded and
    written again."""

    def cached(texts: list[str]) -> Any:
        import numpy as np

        if len(texts) < MIN_SAVED_TEXTS:
            return np.asarray(embed(texts))
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
