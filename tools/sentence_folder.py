"""What a sentence-transformers folder says beside its encoder's weights: how it pools, and how far it reads.

sentence-transformers keeps both outside the encoder's `config.json`: the pooling recipe in `1_Pooling/config.json`,
the token limit in `sentence_bert_config.json`. The planner's numpy encoder and the feature-extraction runner both
compute mean pooling only and truncate where sentence-transformers would, so both read those files here, the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MEAN_POOLING = "pooling_mode_mean_tokens"


@dataclass(frozen=True)
class SentenceFolder:
    """The encoder's config and the sentence-transformers files around it, each `{}` where the folder lacks it."""

    config: dict[str, Any]
    """The encoder's `config.json`."""
    pooling: dict[str, Any]
    """`1_Pooling/config.json`."""
    sentence_config: dict[str, Any]
    """`sentence_bert_config.json`."""

    @classmethod
    def read(cls, folder: Path) -> SentenceFolder:
        return cls(
            _read_json(folder / "config.json"),
            _read_json(folder / "1_Pooling" / "config.json"),
            _read_json(folder / "sentence_bert_config.json"),
        )

    @property
    def mean_pooled(self) -> bool:
        """Whether sentence-transformers would mean-pool this encoder's tokens (its default when no recipe says)."""
        return bool(self.pooling.get(MEAN_POOLING, True))

    @property
    def pooling_modes(self) -> list[str]:
        """The pooling modes the recipe switches on, for a message refusing a folder that is not mean-pooled."""
        return [key for key, value in self.pooling.items() if key.startswith("pooling_mode_") and value]

    @property
    def max_length(self) -> int:
        """The tokens read from a text: the folder's `max_seq_length`, else all the encoder's positions."""
        return int(self.sentence_config.get("max_seq_length") or self.config["max_position_embeddings"])


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
