"""Tiny random-weight Hugging Face model folders, built from configs, for tests.

Tests must run offline (the Hub cannot be reached here) and in seconds, yet exercise the real `transformers`
code path: config, weights, tokenizer or image processor, loaded from a folder by `pipeline(task, model=...)`.
So every model is built from a config with hidden size 32 and 2 layers under a fixed seed, and its tokenizer
is built at run time with the `tokenizers` library (never downloaded, never committed: tokenizers saved by
transformers 5.x drop vocab.json/merges.txt). Each folder also gets a `README.md` model card with flat front
matter (`pipeline_tag`, `downloads`, `model_id`), which is what `read_model_folder` reads.

The weights are random, so outputs are meaningless but deterministic (the same bytes in every process). Where
random weights would give tests nothing to look at, the models are nudged: the text generator may only write
printable ASCII and never stops early, and the detector is biased so its boxes pass the pipeline's threshold.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    BertForTokenClassification,
    DPTConfig,
    DPTForDepthEstimation,
    DPTImageProcessorPil,
    GenerationConfig,
    GPT2Config,
    GPT2LMHeadModel,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    ViTConfig,
    ViTForImageClassification,
    ViTImageProcessorPil,
    YolosConfig,
    YolosForObjectDetection,
    YolosImageProcessorPil,
)


class _Size(TypedDict):
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int


class _Labels(TypedDict):
    id2label: dict[int, str]
    label2id: dict[str, int]


SEED = 0
SIZE = _Size(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
"""The size every encoder shares: small enough to build in milliseconds, large enough to be a real model."""

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A man is playing a guitar on the street.",
    "Hugging Face models run locally in tests.",
    "Paris is the capital of France, and Berlin is the capital of Germany.",
]
"""Text the tokenizers learn their vocabulary from."""

SENTIMENT_LABELS = ["NEGATIVE", "POSITIVE"]
ENTITY_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
IMAGE_LABELS = ["cat", "dog", "bird"]


def build_tiny_model(task: str, folder: Path, *, downloads: int = 0, model_id: str | None = None) -> Path:
    """Build a tiny random model for the Hub task id `task` into `folder` (created) and return the folder."""
    if task not in BUILDERS:
        raise ValueError(f"no tiny model for task {task!r}; known: {', '.join(sorted(BUILDERS))}")
    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(SEED)
    architecture = BUILDERS[task](folder)
    _write_card(folder, task, downloads, model_id or f"tiny-{task}", architecture)
    return folder


def _write_card(folder: Path, task: str, downloads: int, model_id: str, architecture: str) -> None:
    front_matter = f"pipeline_tag: {task}\ndownloads: {downloads}\nmodel_id: {model_id}"
    body = f"Tiny random {architecture} for tests."
    (folder / "README.md").write_text(f"---\n{front_matter}\n---\n\n{body}\n", encoding="utf-8")


def _labels(names: list[str]) -> _Labels:
    return _Labels(id2label=dict(enumerate(names)), label2id={name: i for i, name in enumerate(names)})


# Tokenizers


def _wordpiece_tokenizer() -> PreTrainedTokenizerFast:
    """A BERT-style uncased WordPiece tokenizer: every ASCII character is in the vocab, so nothing is [UNK]."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
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
        model_max_length=512,
    )


def _byte_bpe_tokenizer() -> PreTrainedTokenizerFast:
    """A GPT-2-style byte-level BPE, trained on `CORPUS` in milliseconds; any text encodes without [UNK]."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(CORPUS, trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<|endoftext|>",
        model_max_length=512,
    )


# Text models


def _unprintable_tokens(tokenizer: Tokenizer) -> list[int]:
    """Ids a random model must not generate: end of text and stray bytes, so it writes 20 tokens of ASCII."""
    return [
        token_id
        for token_id in range(tokenizer.get_vocab_size())
        if not _is_printable_ascii(tokenizer.decode([token_id]))  # special tokens decode to ""
    ]


def _is_printable_ascii(text: str) -> bool:
    return bool(text) and text.isascii() and text.isprintable()


def _text_generation(folder: Path) -> str:
    tokenizer = _byte_bpe_tokenizer()
    eos = tokenizer.eos_token_id
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=512,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    model = GPT2LMHeadModel(config)
    model.generation_config = GenerationConfig(
        max_new_tokens=20,
        do_sample=False,
        no_repeat_ngram_size=1,
        suppress_tokens=_unprintable_tokens(tokenizer.backend_tokenizer),
        bos_token_id=eos,
        eos_token_id=eos,
        pad_token_id=eos,
    )
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return "GPT2LMHeadModel"


def _bert(folder: Path, model_class: type[PreTrainedModel], labels: list[str]) -> str:
    tokenizer = _wordpiece_tokenizer()
    config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=512, **SIZE, **_labels(labels))
    model_class(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model_class.__name__


def _text_classification(folder: Path) -> str:
    return _bert(folder, BertForSequenceClassification, SENTIMENT_LABELS)


def _token_classification(folder: Path) -> str:
    return _bert(folder, BertForTokenClassification, ENTITY_LABELS)


# Vision models


def _image_classification(folder: Path) -> str:
    config = ViTConfig(image_size=32, patch_size=8, **SIZE, **_labels(IMAGE_LABELS))
    ViTForImageClassification(config).save_pretrained(folder)
    ViTImageProcessorPil(size={"height": 32, "width": 32}).save_pretrained(folder)
    return "ViTForImageClassification"


def _depth_estimation(folder: Path) -> str:
    config = DPTConfig(
        image_size=32,
        patch_size=8,
        **SIZE,
        backbone_out_indices=[0, 1],
        reassemble_factors=[2, 1],
        neck_hidden_sizes=[16, 32],
        fusion_hidden_size=16,
        use_auxiliary_head=False,
    )
    DPTForDepthEstimation(config).save_pretrained(folder)
    DPTImageProcessorPil(size={"height": 32, "width": 32}, keep_aspect_ratio=False).save_pretrained(folder)
    return "DPTForDepthEstimation"


def _object_detection(folder: Path) -> str:
    config = YolosConfig(image_size=[64, 64], patch_size=16, num_detection_tokens=5, **SIZE, **_labels(IMAGE_LABELS))
    model = YolosForObjectDetection(config)
    _make_detections_visible(model)
    model.save_pretrained(folder)
    YolosImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 64}).save_pretrained(folder)
    return "YolosForObjectDetection"


def _make_detections_visible(model: YolosForObjectDetection) -> None:
    """Random weights score every class near 1/n, under the pipeline's 0.5 threshold: make "cat" always win."""
    with torch.no_grad():
        model.get_parameter("class_labels_classifier.layers.2.bias")[0] = 10.0


BUILDERS: dict[str, Callable[[Path], str]] = {
    "text-generation": _text_generation,
    "text-classification": _text_classification,
    "token-classification": _token_classification,
    "image-classification": _image_classification,
    "depth-estimation": _depth_estimation,
    "object-detection": _object_detection,
}
"""Hub task id -> a function that saves a model folder there and returns the architecture's name."""
