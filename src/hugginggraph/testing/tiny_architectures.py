"""One builder per architecture of the tiny random models of `tiny_models`: config, weights and what loads with them.

Every model is built from a config with hidden size 32 and 2 layers, and saved with its tokenizer, processor or
feature extractor the way a downloaded model's folder holds them. What a task needs beyond the architecture (its
labels, a chat template, the audio rate) is an argument, chosen by the task table in `tiny_models`. Where random
weights would give tests nothing to look at, the models are nudged: the detector is biased so its boxes pass the
pipeline's threshold, and the document reader closes every answer so the pipeline finds one. The diffusion model
needs the optional `diffusers` package, so only its builder imports it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
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
    GPT2Config,
    GPT2LMHeadModel,
    MBartConfig,
    MBartForCausalLM,
    PreTrainedModel,
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

from hugginggraph.testing.tiny_model_parts import (
    SIZE,
    ascii_generation,
    bart_tokenizer,
    byte_bpe_tokenizer,
    character_vocab,
    gpt2_tokenizer,
    label_maps,
    save,
    wordpiece_tokenizer,
)

DOCVQA_TOKENS = ["<s_docvqa>", "<s_question>", "</s_question>", "<s_answer>", "</s_answer>"]
"""The prompt tokens Donut's document question answering is written in."""


# Text models


def gpt2(folder: Path, chat_template: str | None = None) -> str:
    tokenizer = gpt2_tokenizer()
    tokenizer.chat_template = chat_template
    eos = tokenizer.eos_token_id
    ids = {"bos_token_id": eos, "eos_token_id": eos, "pad_token_id": eos}
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=512, n_embd=32, n_layer=2, n_head=2, **ids)
    model = GPT2LMHeadModel(config)
    model.generation_config = ascii_generation(tokenizer, 20, **ids)
    return save(folder, model, tokenizer)


def bert(folder: Path, model_class: type[PreTrainedModel], labels: list[str] | None = None) -> str:
    tokenizer = wordpiece_tokenizer()
    label_config: dict[str, Any] = dict(label_maps(labels)) if labels else {}
    config = BertConfig(vocab_size=len(tokenizer), max_position_embeddings=512, **SIZE, **label_config)
    return save(folder, model_class(config), tokenizer)


def bart(folder: Path) -> str:
    """BART, which serves both summarization and translation: the task is in the weights, not the code."""
    tokenizer = bart_tokenizer()
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
    model.generation_config = ascii_generation(tokenizer, 8, **ids)
    return save(folder, model, tokenizer)


# Vision models


def vit(folder: Path, labels: list[str]) -> str:
    config = ViTConfig(image_size=32, patch_size=8, **SIZE, **label_maps(labels))
    return save(folder, ViTForImageClassification(config), ViTImageProcessorPil(size={"height": 32, "width": 32}))


def dpt(folder: Path) -> str:
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
    return save(folder, DPTForDepthEstimation(config), processor)


def yolos(folder: Path, labels: list[str]) -> str:
    config = YolosConfig(image_size=[64, 64], patch_size=16, num_detection_tokens=5, **SIZE, **label_maps(labels))
    model = YolosForObjectDetection(config)
    _make_detections_visible(model)
    return save(folder, model, YolosImageProcessorPil(size={"shortest_edge": 64, "longest_edge": 64}))


def _make_detections_visible(model: YolosForObjectDetection) -> None:
    """Random weights score every class near 1/n, under the pipeline's 0.5 threshold: make the first label always
    win."""
    with torch.no_grad():
        model.get_parameter("class_labels_classifier.layers.2.bias")[0] = 10.0


def segformer(folder: Path, labels: list[str]) -> str:
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
        **label_maps(labels),
    )
    processor = SegformerImageProcessorPil(size={"height": 32, "width": 32})
    return save(folder, SegformerForSemanticSegmentation(config), processor)


# Vision and language models


def blip(folder: Path) -> str:
    tokenizer = wordpiece_tokenizer(bos_token="[DEC]")
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
    model.generation_config = ascii_generation(tokenizer, 8, **ids)
    image_processor = BlipImageProcessorPil(size={"height": 32, "width": 32})
    return save(folder, model, BlipProcessor(image_processor=image_processor, tokenizer=tokenizer))


def vilt(folder: Path, labels: list[str]) -> str:
    tokenizer = wordpiece_tokenizer()
    config = ViltConfig(vocab_size=len(tokenizer), image_size=32, patch_size=8, **SIZE, **label_maps(labels))
    # `size_divisor` is a real ViLT option that the processor's typed signature leaves out.
    image_processor = ViltImageProcessorPil(size={"shortest_edge": 32}, size_divisor=8)  # type: ignore[call-arg]
    return save(folder, ViltForQuestionAnswering(config), ViltProcessor(image_processor, tokenizer))


def donut(folder: Path) -> str:
    """Donut: a Swin encoder reads the page, an MBart decoder writes the answer after the question prompt."""
    specials = ["<s>", "<pad>", "</s>", "<unk>", *DOCVQA_TOKENS]
    tokenizer = byte_bpe_tokenizer(specials, bos_token="<s>", pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
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
    model.generation_config = ascii_generation(
        tokenizer, 8, eos_token_id=answer_end, forced_eos_token_id=answer_end, **ids
    )
    image_processor = DonutImageProcessorPil(size={"height": 32, "width": 32}, do_align_long_axis=False)
    return save(folder, model, DonutProcessor(image_processor=image_processor, tokenizer=tokenizer))


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


def _audio_features(sampling_rate: int) -> Wav2Vec2FeatureExtractor:
    return Wav2Vec2FeatureExtractor(sampling_rate=sampling_rate, do_normalize=True, return_attention_mask=False)


def wav2vec2_ctc(folder: Path, sampling_rate: int) -> str:
    tokenizer = Wav2Vec2CTCTokenizer(str(character_vocab(folder, ["<pad>", "<s>", "</s>", "<unk>"])))
    config = _wav2vec2_config(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id)
    processor = Wav2Vec2Processor(feature_extractor=_audio_features(sampling_rate), tokenizer=tokenizer)
    return save(folder, Wav2Vec2ForCTC(config), processor)


def wav2vec2_classifier(folder: Path, labels: list[str], sampling_rate: int) -> str:
    config = _wav2vec2_config(**label_maps(labels))
    return save(folder, Wav2Vec2ForSequenceClassification(config), _audio_features(sampling_rate))


def vits(folder: Path, sampling_rate: int) -> str:
    """VITS, reading characters straight from its vocab (no phonemizer)."""
    tokenizer = VitsTokenizer(str(character_vocab(folder, ["<pad>", "<unk>"])), phonemize=False)
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
        sampling_rate=sampling_rate,
        pad_token_id=tokenizer.pad_token_id,
    )
    return save(folder, VitsModel(config), tokenizer)


# Diffusion models


def stable_diffusion(folder: Path) -> str:
    """Stable Diffusion (UNet, VAE, CLIP text encoder, DDIM) making 16-pixel images; it serves text-to-image and
    image-to-image alike. `diffusers` is optional, so it is imported here, by the tests that have it."""
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel

    eos = "<|endoftext|>"
    tokenizer = byte_bpe_tokenizer([eos], bos_token=eos, eos_token=eos, unk_token=eos, pad_token=eos)
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
