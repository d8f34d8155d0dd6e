"""What the architecture builders of `tiny_architectures` share: the size, label maps, saving, tokenizers and
generation settings.

Tokenizers are built here at run time with the `tokenizers` library, or written as a character `vocab.json`, rather
than downloaded (the Hub cannot be reached) or committed (tokenizers saved by transformers 5.x drop vocab.json and
merges.txt). Each one encodes any text without an unknown token, so a test's input always reaches the model.
Random weights would stop generating at once or write stray bytes; the generation settings here make a text
generator write printable ASCII for a fixed number of tokens instead.
"""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any, TypedDict

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import GenerationConfig, PreTrainedModel, PreTrainedTokenizerFast


class _Size(TypedDict):
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int


class Labels(TypedDict):
    id2label: dict[int, str]
    label2id: dict[str, int]


SIZE = _Size(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
"""The size every encoder shares: small enough to build in milliseconds, large enough to be a real model."""

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A man is playing a guitar on the street.",
    "Hugging Face models run locally in tests.",
    "Paris is the capital of France, and Berlin is the capital of Germany.",
]
"""Text the tokenizers learn their vocabulary from."""


def label_maps(names: list[str]) -> Labels:
    return Labels(id2label=dict(enumerate(names)), label2id={name: i for i, name in enumerate(names)})


def save(folder: Path, model: PreTrainedModel, *companions: Any) -> str:
    """Save the model and what loads with it (tokenizer, processor, ...); return the architecture's name."""
    model.save_pretrained(folder)
    for companion in companions:
        companion.save_pretrained(folder)
    return type(model).__name__


# Tokenizers


def wordpiece_tokenizer(bos_token: str | None = None) -> PreTrainedTokenizerFast:
    """A BERT-style uncased WordPiece tokenizer: every ASCII character is in the vocab, so nothing is [UNK].

    BERT has no start token; a decoder built on BERT's vocabulary (BLIP's) names one as `bos_token`.
    """
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *([bos_token] if bos_token else [])]
    characters = sorted(set(string.printable.lower()) - set(string.whitespace))
    words = sorted({word.strip(string.punctuation) for line in CORPUS for word in line.lower().split()})
    vocab = list(dict.fromkeys(specials + characters + [f"##{char}" for char in characters] + words))
    tokenizer = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocab)}, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[(token, vocab.index(token)) for token in ("[CLS]", "[SEP]")],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        bos_token=bos_token,
        model_max_length=512,
    )


def byte_bpe_tokenizer(specials: list[str], **roles: str) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on `CORPUS` in milliseconds, so any text encodes without [UNK].

    `roles` name the special tokens (`eos_token="</s>"`, ...); a `bos_token` distinct from the `eos_token` is
    put around every text, as BART expects.
    """
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=specials,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    bos, eos = roles.get("bos_token"), roles["eos_token"]
    if bos and bos != eos:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=f"{bos} $A {eos}", special_tokens=[(token, specials.index(token)) for token in (bos, eos)]
        )
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, model_max_length=512, **roles)


def gpt2_tokenizer() -> PreTrainedTokenizerFast:
    return byte_bpe_tokenizer(
        ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )


def bart_tokenizer() -> PreTrainedTokenizerFast:
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    return byte_bpe_tokenizer(
        specials, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>", mask_token="<mask>"
    )


def character_vocab(folder: Path, specials: list[str]) -> Path:
    """A `vocab.json` of the special tokens, lowercase letters, digits, space, `|` and `'`: what CTC and VITS
    tokenizers read (CTC writes `|` between words)."""
    vocab = list(dict.fromkeys([*specials, *string.ascii_lowercase, *string.digits, " ", "|", "'"]))
    path = folder / "vocab.json"
    path.write_text(json.dumps({token: i for i, token in enumerate(vocab)}), encoding="utf-8")
    return path


# Generation


def ascii_generation(tokenizer: PreTrainedTokenizerFast, max_new_tokens: int, **token_ids: Any) -> GenerationConfig:
    """Greedy generation of exactly `max_new_tokens` printable tokens (the last one forced, when `token_ids`
    has a `forced_eos_token_id`): pipelines otherwise ask for 256 new tokens and overrun tiny position tables,
    and random weights would stop at once or write stray bytes."""
    forced = token_ids.get("forced_eos_token_id")
    return GenerationConfig(
        max_new_tokens=max_new_tokens,
        do_sample=False,
        no_repeat_ngram_size=1,
        suppress_tokens=[i for i in _unprintable_tokens(tokenizer.backend_tokenizer) if i != forced],
        **token_ids,
    )


def _unprintable_tokens(tokenizer: Tokenizer) -> list[int]:
    """Ids a random model must not generate: end of text and stray bytes, so it writes whole tokens of ASCII."""
    return [
        token_id
        for token_id in range(tokenizer.get_vocab_size())
        if not _is_printable_ascii(tokenizer.decode([token_id]))  # special tokens decode to ""
    ]


def _is_printable_ascii(text: str) -> bool:
    return bool(text) and text.isascii() and text.isprintable()
