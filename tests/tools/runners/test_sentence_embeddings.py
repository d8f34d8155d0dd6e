"""Sentence embeddings and similarity with all-MiniLM-L6-v2 from PyPI, through plain transformers.

The reference scores are what sentence-transformers computes for these pairs (MODELS.md): a paraphrase 0.667,
an unrelated sentence -0.05. The model package is installed by CI; elsewhere the real-weight tests skip.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.sentence_embeddings import LIBRARY, SentenceEmbeddingRunner
from hugginggraph.tools.runners.task_inputs import sentences_to_compare

GUITAR = "A man is playing a guitar."
PARAPHRASE = "Someone plays an instrument."
UNRELATED = "The stock market fell today."


@pytest.mark.slow
async def test_a_paraphrase_scores_higher_than_an_unrelated_sentence(minilm: CatalogEntry, tmp_path: Path):
    output = await SentenceEmbeddingRunner(torch_threads=1).run(
        minilm, "sentence-similarity", {"text": json.dumps([GUITAR, PARAPHRASE, UNRELATED])}, ArtifactStore(tmp_path, 0)
    )
    paraphrase, unrelated = output.data["scores"]
    assert paraphrase == pytest.approx(0.667, abs=0.005) and unrelated == pytest.approx(-0.050, abs=0.005)
    assert output.text == "0.667, -0.050"
    assert output.data["source_sentence"] == GUITAR and output.data["sentences"] == [PARAPHRASE, UNRELATED]


@pytest.mark.slow
async def test_embeddings_are_unit_vectors_whose_dot_product_is_the_similarity(minilm: CatalogEntry, tmp_path: Path):
    runner = SentenceEmbeddingRunner(torch_threads=1)
    store = ArtifactStore(tmp_path, 0)
    guitar, paraphrase = [
        await runner.run(minilm, "feature-extraction", {"text": text}, store) for text in (GUITAR, PARAPHRASE)
    ]
    pair = await runner.run(minilm, "sentence-similarity", {"text": GUITAR, "text2": PARAPHRASE}, store)
    assert guitar.text == "384-dim embedding" and len(guitar.data) == 384
    assert math.fsum(x * x for x in guitar.data) == pytest.approx(1.0, abs=1e-5)
    assert math.fsum(a * b for a, b in zip(guitar.data, paraphrase.data, strict=True)) == pytest.approx(
        pair.data["scores"][0], abs=1e-5
    )
    assert runner.loads == 1


@pytest.mark.slow
async def test_concurrent_calls_load_a_model_once(minilm: CatalogEntry, tmp_path: Path):
    runner = SentenceEmbeddingRunner(torch_threads=1)
    outputs = await asyncio.gather(
        *(runner.run(minilm, "feature-extraction", {"text": GUITAR}, ArtifactStore(tmp_path, i)) for i in range(4))
    )
    assert runner.loads == 1
    assert all(output.data == outputs[0].data for output in outputs)


def test_two_sentences_come_as_text_and_text2_or_as_a_list_in_text():
    assert sentences_to_compare({"text": "A", "text2": "B"}) == ["A", "B"]
    assert sentences_to_compare({"text": '["A", "B", "C"]'}) == ["A", "B", "C"]
    assert sentences_to_compare({"text": "[A] and [B]", "text2": "C"}) == ["[A] and [B]", "C"]


@pytest.mark.parametrize("text", ["A man is playing a guitar.", '["only one"]', "[not json", '{"a": "b"}'])
async def test_one_sentence_fails_with_the_convention_before_any_model_loads(text: str, tmp_path: Path):
    card = CatalogEntry(id="m", task="sentence-similarity", library=LIBRARY, path=str(tmp_path / "no-such-folder"))
    with pytest.raises(ValueError, match='give "text" and "text2"'):
        await SentenceEmbeddingRunner().run(card, "sentence-similarity", {"text": text}, ArtifactStore(tmp_path, 0))


async def test_a_model_that_pools_otherwise_is_refused_not_misread(tmp_path: Path):
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    card = CatalogEntry(id="cls-pooled", task="feature-extraction", library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match="pooling_mode_cls_token"):
        await SentenceEmbeddingRunner().run(card, "feature-extraction", {"text": "x"}, ArtifactStore(tmp_path, 0))


def test_it_runs_sentence_transformers_embedding_and_similarity_only():
    runner = SentenceEmbeddingRunner()
    assert runner.can_run(CatalogEntry(id="m", task="sentence-similarity", library=LIBRARY))
    assert runner.can_run(CatalogEntry(id="m", task="feature-extraction", library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="m", task="feature-extraction", library="transformers"))
    assert not runner.can_run(CatalogEntry(id="m", task="fill-mask", library=LIBRARY))
