"""A BERT sentence encoder in numpy, for the planner's MiniLM (the demos' retrieval, the direct-answer gate, the step
vote and the trained step chooser).

The planner embeds the request before a new process's first plan. Through `transformers` that first embedding
imports PyTorch and transformers and builds the model (about 3 s on 2 cores, docs/speed.md), though the demo's
expert models need neither. MiniLM is small (6 layers of width 384) and a request is a few dozen tokens, so its
forward pass is a few matrix products: here they are, the arithmetic of `transformers`' `BertModel` (absolute
positions, token type 0, exact GELU, LayerNorm with the config's epsilon), then mean pooling over the real tokens
and L2 normalisation, as sentence-transformers computes mean-pooled models such as all-MiniLM-L6-v2. Weights come
from the folder's `model.safetensors`, tokens from its `tokenizer.json` (the `tokenizers` library, without
transformers).

The runner for feature-extraction tasks (tools/runners/sentence_embeddings.py) keeps transformers, which runs any
encoder architecture; tests hold the two to the same vectors. Folders this module cannot encode exactly (another
architecture, activation, position scheme or pooling) are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hugginggraph.tools.sentence_folder import SentenceFolder

Vectors = npt.NDArray[np.float32]

BATCH = 64
"""Texts encoded together, padded to the longest of them: one batch for a request, a few for the bank's texts."""

_ERF_COEFFICIENTS = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_ERF_P = 0.3275911


class UnsupportedEncoder(ValueError):
    """The folder holds a model this encoder would not compute exactly as `transformers` does."""


@dataclass(frozen=True)
class NumpySentenceEncoder:
    """A BERT encoder's weights and tokenizer: texts in, unit-length mean-pooled vectors out."""

    tokenizer: Any
    """A `tokenizers.Tokenizer`, truncating to the folder's `max_seq_length`."""
    weights: dict[str, Vectors]
    """The safetensors tensors by name, each linear layer's `.weight` stored transposed and contiguous (in by out)."""
    layers: int
    heads: int
    epsilon: float
    pad_id: int

    @classmethod
    def load(cls, folder: Path) -> NumpySentenceEncoder:
        """The encoder of a sentence-transformers folder; UnsupportedEncoder when it is not a mean-pooled BERT."""
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        facts = SentenceFolder.read(folder)
        config = facts.config
        exact = (
            config.get("model_type") == "bert"
            and config.get("hidden_act") == "gelu"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and facts.mean_pooled
            and (folder / "model.safetensors").is_file()
            and (folder / "tokenizer.json").is_file()
        )
        if not exact:
            raise UnsupportedEncoder(f"{folder} is not a mean-pooled BERT with safetensors weights and tokenizer.json")
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=facts.max_length)
        tokenizer.no_padding()
        return cls(
            tokenizer,
            _linears_transposed(load_file(folder / "model.safetensors")),
            int(config["num_hidden_layers"]),
            int(config["num_attention_heads"]),
            float(config.get("layer_norm_eps", 1e-12)),
            int(config.get("pad_token_id", 0)),
        )

    def embed(self, texts: list[str]) -> Vectors:
        """One L2-normalised mean-pooled vector per text, so a dot product is a cosine. Texts are batched by length,
        so that a batch pads little."""
        tokens = [encoding.ids for encoding in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda index: len(tokens[index]))
        vectors = np.zeros((len(texts), self.weights["embeddings.word_embeddings.weight"].shape[1]), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            vectors[batch] = self._encode([tokens[index] for index in batch])
        return vectors

    def _encode(self, tokens: list[list[int]]) -> Vectors:
        length = max(len(ids) for ids in tokens)
        ids = np.array([[*ids, *[self.pad_id] * (length - len(ids))] for ids in tokens])
        mask = np.array([[1.0] * len(ids) + [0.0] * (length - len(ids)) for ids in tokens], dtype=np.float32)
        weights = self.weights
        hidden = (
            weights["embeddings.word_embeddings.weight"][ids]
            + weights["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + weights["embeddings.token_type_embeddings.weight"][0]
        )
        hidden = self._layer_norm(hidden, "embeddings.LayerNorm")
        # Padding is kept out of attention as transformers does: the smallest float added to its scores.
        padding = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in range(self.layers):
            hidden = self._layer(hidden, padding, f"encoder.layer.{layer}.")
        pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _layer(self, hidden: Vectors, padding: Vectors, prefix: str) -> Vectors:
        batch, length, width = hidden.shape
        size = width // self.heads

        def heads(name: str) -> Vectors:
            projected = self._linear(hidden, f"{prefix}attention.self.{name}")
            return projected.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + padding
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attended = (scores / scores.sum(axis=-1, keepdims=True)) @ heads("value")
        attended = attended.transpose(0, 2, 1, 3).reshape(batch, length, width)
        hidden = self._layer_norm(
            hidden + self._linear(attended, f"{prefix}attention.output.dense"), f"{prefix}attention.output.LayerNorm"
        )
        inner = _gelu(self._linear(hidden, f"{prefix}intermediate.dense"))
        return self._layer_norm(hidden + self._linear(inner, f"{prefix}output.dense"), f"{prefix}output.LayerNorm")

    def _linear(self, values: Vectors, name: str) -> Vectors:
        """One matrix product for the whole batch (a stacked one is a product per text)."""
        flat = values.reshape(-1, values.shape[-1]) @ self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]
        return flat.reshape(*values.shape[:-1], -1)

    def _layer_norm(self, values: Vectors, name: str) -> Vectors:
        mean = values.mean(axis=-1, keepdims=True)
        variance = ((values - mean) ** 2).mean(axis=-1, keepdims=True)
        normed = (values - mean) / np.sqrt(variance + np.float32(self.epsilon))
        return normed * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]


def _linears_transposed(tensors: dict[str, Vectors]) -> dict[str, Vectors]:
    """`tensors` with each linear layer's weight (out by in, as PyTorch stores it) transposed into a contiguous
    in-by-out array: OpenBLAS multiplies a request's few rows by a contiguous matrix faster than through a transposed
    view, and the linear layers are most of an embedding's time (docs/speed.md)."""
    return {
        name: np.ascontiguousarray(tensor.T) if tensor.ndim == 2 and name.startswith("encoder.") else tensor
        for name, tensor in tensors.items()
    }


def _gelu(values: Vectors) -> Vectors:
    """BERT's exact GELU, x * (1 + erf(x / sqrt 2)) / 2; numpy has no erf, so Abramowitz and Stegun's 7.1.26, whose
    error (below 1.5e-7) is under float32's resolution of the result."""
    magnitude = np.abs(values) * np.float32(1 / math.sqrt(2.0))
    t = np.reciprocal(np.float32(_ERF_P) * magnitude + 1)
    polynomial = t * np.float32(_ERF_COEFFICIENTS[-1])
    for coefficient in reversed(_ERF_COEFFICIENTS[:-1]):
        polynomial += np.float32(coefficient)
        polynomial *= t
    np.square(magnitude, out=magnitude)
    np.negative(magnitude, out=magnitude)
    np.exp(magnitude, out=magnitude)
    polynomial *= magnitude  # 1 - erf(|x| / sqrt 2)
    erf = np.copysign(1 - polynomial, values)
    erf += 1
    erf *= values
    erf *= np.float32(0.5)
    return erf
