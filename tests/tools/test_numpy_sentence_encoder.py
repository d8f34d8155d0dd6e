"""The planner's MiniLM in numpy against the same model through transformers (the feature-extraction runner's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.numpy_sentence_encoder import BATCH, NumpySentenceEncoder, UnsupportedEncoder
from hugginggraph.tools.runners.sentence_embeddings import load_encoder

TEXTS = [
    "Transcribe memo.wav, summarize it and read the summary aloud.",
    "Hi",
    "What does the sign in sign.png say?",
    "Describe street.png and count the people in it. " * 60,  # past the 256 tokens MiniLM reads: truncated
]


@pytest.mark.slow
def test_the_vectors_are_those_transformers_computes(minilm: CatalogEntry):
    texts = [*TEXTS, *(f"step {i}: {'translate the text ' * (i % 7)}" for i in range(BATCH + 5))]  # two batches
    encoder = NumpySentenceEncoder.load(Path(str(minilm.path)))

    vectors = encoder.embed(texts)
    reference = load_encoder(minilm).embed(texts).numpy()

    assert vectors.shape == reference.shape == (len(texts), 384) and vectors.dtype == np.float32
    assert np.abs(vectors - reference).max() < 1e-5
    alone = np.concatenate([encoder.embed([text]) for text in TEXTS])  # unpadded: the padding changes nothing
    assert np.abs(alone - vectors[: len(TEXTS)]).max() < 1e-5
    assert encoder.embed([]).shape == (0, 384)


@pytest.mark.slow
def test_the_planners_embedder_imports_no_torch(minilm: CatalogEntry):
    """The point of the numpy encoder: a new process's first plan waits for no PyTorch import."""
    code = (
        "import sys; from hugginggraph.tools.demo_bank import minilm_embedder; "
        "vectors = minilm_embedder()(['read the text on sign.png']); "
        "print(vectors.shape, 'torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["(1,", "384)", "False", "False"]


def test_a_folder_it_would_not_encode_exactly_is_refused(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "roberta", "hidden_act": "gelu"}))
    with pytest.raises(UnsupportedEncoder, match="not a mean-pooled BERT"):
        NumpySentenceEncoder.load(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_act": "gelu"}))
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_mean_tokens": False}))
    with pytest.raises(UnsupportedEncoder):
        NumpySentenceEncoder.load(tmp_path)
