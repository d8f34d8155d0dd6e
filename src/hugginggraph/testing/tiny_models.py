"""Tiny random-weight Hugging Face model folders, built from configs, for tests.

Tests must run offline (the Hub cannot be reached here) and in seconds, yet exercise the real `transformers`
code path: config, weights, tokenizer, image processor or feature extractor, loaded from a folder the way the
local runner loads a downloaded model. So every model is built from a config with hidden size 32 and 2 layers
under a fixed seed, and its tokenizer is built at run time with the `tokenizers` library or from a character
`vocab.json` (never downloaded, never committed: tokenizers saved by transformers 5.x drop vocab.json/merges.txt).
Each folder also gets a `README.md` model card with flat front matter (`pipeline_tag`, `downloads`, `model_id`),
which is what `read_model_folder` reads.

The weights are random, so outputs are meaningless but deterministic (the same bytes in every process). Where
random weights would give tests nothing to look at, the models are nudged: text generators may only write
printable ASCII and never stop early, the detector is biased so its boxes pass the pipeline's threshold, and the
document reader closes every answer so the pipeline finds one. The diffusion model needs the optional `diffusers`
package, so only its builder imports it.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    BertForMaskedLM,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
    BlipConfig,
    BlipForConditionalGeneration,
    BlipImageProcessorPil,
    BlipProcessor,
    CLIPTextConfig,
    CLIPTextModel,
    DonutImageProcessorPil,
    DonutProcessor,
    DonutSwinConfig,
    DonutSwinModel,
    DPTConfig,
    DPTForDepthEstimation,
    DPTImageProcessorPil,
    GenerationConfig,
    GPT2Config,
    GPT2LMHeadModel,
    MBartConfig,
    MBartForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerFast,
    SegformerConfig,
    SegformerForSemanticSegmentation,
    SegformerImageProcessorPil,
    ViltConfig,
    ViltForQuestionAnswering,
    ViltImageProcessorPil,
    ViltProcessor,
    VisionEncoderDecoderModel,
    ViTConfig,
    ViTForImageClassification,
    ViTImageProcessorPil,
    VitsConfig,
    VitsModel,
    VitsTokenizer,
    Wav2Vec2Config,
    Wav2Vec2CTCTokenizer,
    Wav2Vec2FeatureExtractor,
    Wav2Vec2ForCTC,
    Wav2Vec2ForSequenceClassification,
    Wav2Vec2Processor,
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
NLI_LABELS = ["contradiction", "neutral", "entailment"]
"""Zero-shot classification reads the entailment score, so the pipeline looks for a label named so."""
ENTITY_LABELS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
IMAGE_LABELS = ["cat", "dog", "bird"]
ANSWER_LABELS = ["yes", "no", "two", "red"]
SOUND_LABELS = ["speech", "music", "silence"]

CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
"""A minimal chat template, so the conversational model formats messages the way a chat model does."""

SAMPLING_RATE = 16000
"""The rate (Hz) the audio models hear and speak at, as real speech models do."""
DOCVQA_TOKENS = ["<s_docvqa>", "<s_question>", "</s_question>", "<s_answer>", "</s_answer>"]
"""The prompt tokens Donut's document question answering is written in."""


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
    library = "diffusers" if (folder / "model_index.json").is_file() else "transformers"
    front_matter = (
        f"pipeline_tag: {task}\nlibrary_name: {library}\ndownloads: {downloads}\nmodel_id: {model_id}\n"
        "random_weights: true"
    )
    body = f"Tiny random {architecture} for tests."
    (folder / "README.md").write_text(f"---\n{front_matter}\n---\n\n{body}\n", encoding="utf-8")


def _labels(names: list[str]) -> _Labels:
    return _Labels(id2label=dict(enumerate(names)), label2id={name: i for i, name in enumerate(names)})


def _save(folder: Path, model: PreTrainedModel, *companions: Any) -> str:
    """Save the model and what loads with it (tokenizer, processor, ...); return the architecture's name."""
    model.save_pretrained(folder)
    for companion in companions:
        companion.save_pretrained(folder)
    return type(model).__name__


# Tokenizers


def _wordpiece_tokenizer(bos_token: str | None = None) -> PreTrainedTokenizerFast:
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


def _byte_bpe_tokenizer(specials: list[str], **roles: str) -> PreTrainedTokenizerFast:
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


def _gpt2_tokenizer() -> PreTrainedTokenizerFast:
    return _byte_bpe_tokenizer(
        ["<|endoftext|>"], bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )


def _bart_tokenizer() -> PreTrainedTokenizerFast:
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    return _byte_bpe_tokenizer(
        specials, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>", mask_token="<mask>"
    )


def _character_vocab(folder: Path, specials: list[str]) -> Path:
    """A `vocab.json` of the special tokens, lowercase letters, digits, space, `|` and `'`: what CTC and VITS
    tokenizers read (CTC writes `|` between words)."""
    vocab = list(dict.fromkeys([*specials, *string.ascii_lowercase, *string.digits, " ", "|", "'"]))
    path = folder / "vocab.json"
    path.write_text(json.dumps({token: i for i, token in enumerate(vocab)}), encoding="utf-8")
    return path


# Generation


def _unprintable_tokens(tokenizer: Tokenizer) -> list[int]:
    """Ids a random model must not generate: end of text and stray bytes, so it writes whole tokens of ASCII."""
    return [
        token_id
        for token_id in range(tokenizer.get_vocab_size())
        if not _is_printable_ascii(tokenizer.decode([token_id]))  # special tokens decode to ""
    ]


def _is_printable_ascii(text: str) -> bool:
    return bool(text) and text.isascii() and text.isprintable()


def _ascii_generation(tokenizer: PreTrainedTokenizerFast, max_new_tokens: int, **token_ids: Any) -> GenerationConfig:
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


# Text models


def _gpt2(folder: Path, chat_template: str | None = None) -> str:
    tokenizer = _gpt2_tokenizer()
    tokenizer.chat_template = chat_template
    eos = tokenizer.eos_token_id
    ids = {"bos_token_id": eos, "eos_token_id": eos, "pad_token_id": eos}
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=512, n_embd=32, n_layer=2, n_head=2, **ids)
    model = GPT2LMHeadModel(config)
    model.generation_config = _ascii_generation(tokenizer, 20, **ids)
    return _save(folder, model, tokenizer)


def _text_generation(folder: Path) -> str:
    return _gpt2(folder)


def _conversational(folder: Path) -> str:
    return _gpt2(folder, CHAT_TEMPLATE)


def _bert(folder: Path, model_class: type[PreTrainedModel], labels: list[str] | None = None) -> str:
    tokenizer = _wordpiece_tokenizer()
    label_config: dict[str, Any] = dict(_labels(labels)) if labels else {}
    config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=512, **SIZE, **label_config)
    return _save(folder, model_class(config), tokenizer)


def _text_classification(folder: Path) -> str:
    return _bert(folder, BertForSequenceClassification, SENTIMENT_LABELS)


def _zero_shot_classification(folder: Path) -> str:
    return _bert(folder, BertForSequenceClassification, NLI_LABELS)


def _token_classification(folder: Path) -> str:
    return _bert(folder, BertForTokenClassification, ENTITY_LABELS)


def _fill_mask(folder: Path) -> str:
    return _bert(folder, BertForMaskedLM)


def _feature_extraction(folder: Path) -> str:
    return _bert(folder, BertModel)


def _question_answering(folder: Path) -> str:
    return _bert(folder, BertForQuestionAnswering)


def _seq2seq(folder: Path) -> str:
    """BART, which serves both summarization and translation: the task is in the weights, not the code."""
    tokenizer = _bart_tokenizer()
    ids = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
        "decoder_start_token_id": tokenizer.eos_token_id,
    }
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=37,
        decoder_ffn_dim=37,
        max_position_embeddings=512,
        **ids,
    )
    model = BartForConditionalGeneration(config)
    model.generation_config = _ascii_generation(tokenizer, 8, **ids)
    return _save(folder, model, tokenizer)


# Vision models


def _image_classification(folder: Path) -> str:
    config = ViTConfig(image_size=32, patch_size=8, **SIZE, **_labels(IMAGE_LABELS))
    return _save(folder, ViTForImageClassification(config), ViTImageProcessorPil(size={"height": 32, "width": 32}))


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
    processor = DPTImageProcessorPil(size={"height": 32, "width": 32}, keep_aspect_ratio=False)
    return _save(folder, DPTForDepthEstimation(config), processor)


def _object_detection(folder: Path) -> str:
    config = YolosConfig(image_size=[64, 64], patch_size=16, num_detection_tokens=5, **SIZE, **_labels(IMAGE_LABELS))
    model = YolosForObjectDetection(config)
    _make_detections_visible(model)
    return _save(folder, model, YolosImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 64}))


def _make_detections_visible(model: YolosForObjectDetection) -> None:
    """Random weights score every class near 1/n, under the pipeline's 0.5 threshold: make "cat" always win."""
    with torch.no_grad():
        model.get_parameter("class_labels_classifier.layers.2.bias")[0] = 10.0


def _image_segmentation(folder: Path) -> str:
    config = SegformerConfig(
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        patch_sizes=[7, 3],
        strides=[4, 2],
        num_attention_heads=[1, 2],
        mlp_ratios=[2, 2],
        decoder_hidden_size=32,
        **_labels(IMAGE_LABELS),
    )
    processor = SegformerImageProcessorPil(size={"height": 32, "width": 32})
    return _save(folder, SegformerForSemanticSegmentation(config), processor)


# Vision and language models


def _image_to_text(folder: Path) -> str:
    tokenizer = _wordpiece_tokenizer(bos_token="[DEC]")
    ids = {
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.sep_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    text_config = {**SIZE, **ids, "vocab_size": len(tokenizer), "max_position_embeddings": 512}
    config = BlipConfig(
        text_config={**text_config, "sep_token_id": tokenizer.sep_token_id},
        vision_config={**SIZE, "image_size": 32, "patch_size": 8},
        projection_dim=32,
        image_text_hidden_size=32,
    )
    model = BlipForConditionalGeneration(config)
    model.generation_config = _ascii_generation(tokenizer, 8, **ids)
    image_processor = BlipImageProcessorPil(size={"height": 32, "width": 32})
    return _save(folder, model, BlipProcessor(image_processor=image_processor, tokenizer=tokenizer))


def _visual_question_answering(folder: Path) -> str:
    tokenizer = _wordpiece_tokenizer()
    config = ViltConfig(vocab_size=len(tokenizer), image_size=32, patch_size=8, **SIZE, **_labels(ANSWER_LABELS))
    # `size_divisor` is a real ViLT option that the processor's typed signature leaves out.
    image_processor = ViltImageProcessorPil(size={"shortest_edge": 32}, size_divisor=8)  # type: ignore[call-arg]
    return _save(folder, ViltForQuestionAnswering(config), ViltProcessor(image_processor, tokenizer))


def _document_question_answering(folder: Path) -> str:
    """Donut: a Swin encoder reads the page, an MBart decoder writes the answer after the question prompt."""
    specials = ["<s>", "<pad>", "</s>", "<unk>", *DOCVQA_TOKENS]
    tokenizer = _byte_bpe_tokenizer(specials, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    encoder = DonutSwinConfig(
        image_size=[32, 32], patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[1, 2], window_size=4
    )
    decoder = MBartConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        decoder_layers=2,
        decoder_attention_heads=2,
        decoder_ffn_dim=37,
        max_position_embeddings=512,
        is_decoder=True,
        add_cross_attention=True,  # type: ignore[call-arg]  # a generic config option the typed signature omits
    )
    model = VisionEncoderDecoderModel(encoder=DonutSwinModel(encoder), decoder=MBartForCausalLM(decoder))
    answer_end = tokenizer.convert_tokens_to_ids("</s_answer>")
    ids = {"decoder_start_token_id": tokenizer.bos_token_id, "pad_token_id": tokenizer.pad_token_id}
    model.config.update(ids)
    # The pipeline reads the answer between <s_answer> and </s_answer>: random weights must close it.
    model.generation_config = _ascii_generation(
        tokenizer, 8, eos_token_id=answer_end, forced_eos_token_id=answer_end, **ids
    )
    image_processor = DonutImageProcessorPil(size={"height": 32, "width": 32}, do_align_long_axis=False)
    return _save(folder, model, DonutProcessor(image_processor=image_processor, tokenizer=tokenizer))


# Audio models


def _wav2vec2_config(**extra: Any) -> Wav2Vec2Config:
    """A 2-layer Wav2Vec2 whose convolutions turn 16 kHz audio into a frame every 20 ms, as the real ones do."""
    return Wav2Vec2Config(
        **SIZE,
        conv_dim=[16, 16],
        conv_stride=[5, 64],
        conv_kernel=[10, 64],
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        classifier_proj_size=16,
        **extra,
    )


def _audio_features() -> Wav2Vec2FeatureExtractor:
    return Wav2Vec2FeatureExtractor(sampling_rate=SAMPLING_RATE, do_normalize=True, return_attention_mask=False)


def _automatic_speech_recognition(folder: Path) -> str:
    tokenizer = Wav2Vec2CTCTokenizer(str(_character_vocab(folder, ["<pad>", "<s>", "</s>", "<unk>"])))
    config = _wav2vec2_config(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id)
    processor = Wav2Vec2Processor(feature_extractor=_audio_features(), tokenizer=tokenizer)
    return _save(folder, Wav2Vec2ForCTC(config), processor)


def _audio_classification(folder: Path) -> str:
    config = _wav2vec2_config(**_labels(SOUND_LABELS))
    return _save(folder, Wav2Vec2ForSequenceClassification(config), _audio_features())


def _text_to_speech(folder: Path) -> str:
    """VITS, reading characters straight from its vocab (no phonemizer)."""
    tokenizer = VitsTokenizer(str(_character_vocab(folder, ["<pad>", "<unk>"])), phonemize=False)
    config = VitsConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        ffn_dim=37,
        flow_size=16,
        spectrogram_bins=17,
        upsample_initial_channel=32,
        upsample_rates=[4, 4],
        upsample_kernel_sizes=[8, 8],
        resblock_kernel_sizes=[3],
        resblock_dilation_sizes=[[1, 3]],
        depth_separable_num_layers=2,
        duration_predictor_num_flows=2,
        duration_predictor_filter_channels=32,
        prior_encoder_num_flows=2,
        prior_encoder_num_wavenet_layers=2,
        posterior_encoder_num_wavenet_layers=2,
        sampling_rate=SAMPLING_RATE,
        pad_token_id=tokenizer.pad_token_id,
    )
    return _save(folder, VitsModel(config), tokenizer)


# Diffusion models


def _stable_diffusion(folder: Path) -> str:
    """Stable Diffusion (UNet, VAE, CLIP text encoder, DDIM) making 16-pixel images; it serves text-to-image and
    image-to-image alike. `diffusers` is optional, so it is imported here, by the tests that have it."""
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel

    eos = "<|endoftext|>"
    tokenizer = _byte_bpe_tokenizer([eos], bos_token=eos, eos_token=eos, unk_token=eos, pad_token=eos)
    tokenizer.model_max_length = 77  # the pipeline pads every prompt to this many CLIP positions
    ids = {name: tokenizer.eos_token_id for name in ("bos_token_id", "eos_token_id", "pad_token_id")}
    text_encoder = CLIPTextModel(CLIPTextConfig(vocab_size=len(tokenizer), max_position_embeddings=77, **SIZE, **ids))
    blocks = {"block_out_channels": (32, 64), "layers_per_block": 1, "norm_num_groups": 32}
    unet = UNet2DConditionModel(
        sample_size=8,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32,
        attention_head_dim=2,
        **blocks,
    )
    vae = AutoencoderKL(
        down_block_types=("DownEncoderBlock2D",) * 2,
        up_block_types=("UpDecoderBlock2D",) * 2,
        latent_channels=4,
        **blocks,
    )
    pipeline = StableDiffusionPipeline(
        unet=unet,
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        scheduler=DDIMScheduler(clip_sample=False, steps_offset=1),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )
    pipeline.save_pretrained(folder)  # type: ignore[attr-defined]  # inherited from DiffusionPipeline at run time
    return type(pipeline).__name__


BUILDERS: dict[str, Callable[[Path], str]] = {
    "token-classification": _token_classification,
    "text-classification": _text_classification,
    "zero-shot-classification": _zero_shot_classification,
    "summarization": _seq2seq,
    "translation": _seq2seq,
    "question-answering": _question_answering,
    "text-generation": _text_generation,
    "conversational": _conversational,
    "feature-extraction": _feature_extraction,
    "fill-mask": _fill_mask,
    "image-classification": _image_classification,
    "object-detection": _object_detection,
    "image-segmentation": _image_segmentation,
    "depth-estimation": _depth_estimation,
    "image-to-text": _image_to_text,
    "visual-question-answering": _visual_question_answering,
    "document-question-answering": _document_question_answering,
    "automatic-speech-recognition": _automatic_speech_recognition,
    "audio-classification": _audio_classification,
    "text-to-speech": _text_to_speech,
    "text-to-image": _stable_diffusion,
    "image-to-image": _stable_diffusion,
}
"""Hub task id -> a function that saves a model folder there and returns the architecture's name."""
