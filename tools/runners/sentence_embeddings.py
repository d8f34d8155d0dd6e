"""Run sentence-transformers models with plain `transformers`: embed texts, or score how similar they are.

A sentence-transformers folder is a `transformers` encoder plus a pooling recipe (`1_Pooling/config.json`) and a
length limit (`sentence_bert_config.json`). Mean pooling over the real tokens and L2 normalisation reproduce
what the `sentence-transformers` package computes for mean-pooled models such as all-MiniLM-L6-v2, without
installing that package (it drags in scikit-learn and scipy). Folders that pool another way are refused rather
than embedded wrongly.

`sentence-similarity` reads its sentences as tools/runners/task_inputs.py says. The output text is the cosine
similarity, `0.667`, one per compared sentence, joined by ", ".

Torch and transformers are imported only when the first model loads: importing them costs seconds.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner, torch_bytes
from hugginggraph.tools.runners.task_inputs import sentences_to_compare
from hugginggraph.tools.runners.transformers_names import transformers_names
from hugginggraph.tools.sentence_folder import SentenceFolder

LIBRARY = "sentence-transformers"
"""The Hub's `library_name` of the cards this runner runs."""

TASKS = ("feature-extraction", "sentence-similarity")


def _similarity_output(sentences: list[str], scores: list[float]) -> RunnerOutput:
    """Scores shaped as the Hub's sentence-similarity API gives them: the first sentence against each other one."""
    return RunnerOutput(
        text=", ".join(f"{score:.3f}" for score in scores),
        data={"source_sentence": sentences[0], "sentences": sentences[1:], "scores": scores},
    )


@dataclass(frozen=True)
class SentenceEncoder:
    """A loaded encoder with its tokenizer: texts in, unit-length vectors out."""

    tokenizer: Any
    model: Any
    max_length: int
    """Longer texts are truncated to this many tokens, as sentence-transformers does (`max_seq_length`)."""

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised mean-pooled vector per text (a torch tensor), so a dot product is a cosine."""
        import torch

        batch = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt")
        with torch.inference_mode():
            hidden = self.model(**batch).last_hidden_state
        # Padding must not dilute the mean: weight each token by its attention mask.
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, dim=-1)


def load_encoder(card: CatalogEntry) -> SentenceEncoder:
    """Load a sentence-transformers folder, refusing pooling recipes other than mean pooling."""
    if card.path is None:
        raise ModelLoadError(f"could not load {card.id}: it has no local folder")
    folder = Path(card.path)
    facts = SentenceFolder.read(folder)
    if not facts.mean_pooled:
        raise ModelLoadError(
            f"could not load {card.id}: it pools by {facts.pooling_modes}; only mean pooling is implemented"
        )
    AutoModel, AutoTokenizer = transformers_names("AutoModel", "AutoTokenizer")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
        model = AutoModel.from_pretrained(folder, trust_remote_code=False).eval()
    except Exception as error:
        raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
    return SentenceEncoder(tokenizer, model, facts.max_length)


class SentenceEmbeddingRunner(PooledRunner[SentenceEncoder]):
    """Runs `sentence-transformers` cards for `feature-extraction` and `sentence-similarity`.

    Models stay loaded in a `ModelPool`, one load per model id and one call per model at a time (fast tokenizers
    are not thread-safe). By default nothing is evicted: sentence encoders are small, and few are installed.
    """

    def __init__(self, torch_threads: int | None = None, max_bytes: int | None = None) -> None:
        self.torch_threads = torch_threads
        """Torch's intra-op threads (process-wide), set at each load; None leaves torch's default."""
        self.pool = ModelPool(self._load, max_bytes=max_bytes, size_of=lambda _card, encoder: torch_bytes(encoder))
        """`max_bytes` bounds the encoders' parameters and buffers; None, the default, keeps every encoder loaded."""

    def can_run(self, card: CatalogEntry) -> bool:
        return card.library == LIBRARY and card.task in TASKS

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        return await asyncio.to_thread(self._run_sync, card, task, inputs)

    def _run_sync(self, card: CatalogEntry, task: str, inputs: dict[str, str]) -> RunnerOutput:
        if task == "sentence-similarity":
            sentences = sentences_to_compare(inputs)  # bad arguments fail before any model loads
            with self.pool.use(card) as encoder:
                vectors = encoder.embed(sentences)
            return _similarity_output(sentences, (vectors[1:] @ vectors[0]).tolist())
        if task == "feature-extraction":
            with self.pool.use(card) as encoder:
                vector = encoder.embed([inputs["text"]])[0].tolist()
            return RunnerOutput(text=f"{len(vector)}-dim embedding", data=vector)
        raise ValueError(f"{card.id} cannot do {task}; it does {', '.join(TASKS)}")

    def _load(self, card: CatalogEntry) -> SentenceEncoder:
        if self.torch_threads:
            import torch

            torch.set_num_threads(self.torch_threads)
        return load_encoder(card)
