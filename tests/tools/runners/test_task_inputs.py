"""How task arguments become model inputs: sound decoding and resampling, the question/context convention, labels
and the mask token. No model is loaded, so these run in milliseconds."""

from __future__ import annotations

import re
import wave
from pathlib import Path

import numpy as np
import pytest
import soundfile

from hugginggraph.tools.runners.task_inputs import (
    DEFAULT_LABELS,
    candidate_labels,
    question_and_context,
    read_audio,
    with_mask_token,
)
from hugginggraph.tools.tasks import AUDIO_EXTENSIONS


def write_wav(path: Path, frames: bytes, *, channels: int, width: int, rate: int) -> str:
    with wave.open(str(path), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(width)
        out.setframerate(rate)
        out.writeframes(frames)
    return str(path)


def test_stereo_8_bit_audio_is_mixed_to_mono_and_resampled(tmp_path: Path):
    # 8-bit WAV is unsigned: 128 is silence. Left is full scale up, right silent: the mix is half scale.
    frames = bytes([255, 128] * 800)  # 0.1 s at 8 kHz
    samples = read_audio(write_wav(tmp_path / "a.wav", frames, channels=2, width=1, rate=8000), 16000)
    assert samples.dtype == np.float32 and samples.shape == (1600,)
    # The resampling filter rings where the clip starts and stops out of silence; between, the level is kept.
    assert np.allclose(samples[200:-200], 127 / 256)


@pytest.mark.parametrize("width", [2, 3, 4])
def test_signed_pcm_of_every_width_scales_to_minus_one_to_one(tmp_path: Path, width: int):
    extremes = [-(2 ** (8 * width - 1)), 0, 2 ** (8 * width - 2)]
    frames = b"".join(value.to_bytes(width, "little", signed=True) for value in extremes)
    samples = read_audio(write_wav(tmp_path / "a.wav", frames, channels=1, width=width, rate=16000), 16000)
    assert samples.tolist() == [-1.0, 0.0, 0.5]


def test_an_empty_clip_stays_empty(tmp_path: Path):
    assert read_audio(write_wav(tmp_path / "a.wav", b"", channels=1, width=2, rate=8000), 16000).shape == (0,)


@pytest.mark.parametrize("extension", AUDIO_EXTENSIONS)
def test_every_advertised_sound_format_decodes_to_mono_at_the_model_rate(tmp_path: Path, extension: str):
    # Half a second of a 440 Hz tone in stereo at 22.05 kHz; a format offered without a decoder fails here.
    seconds, rate, pitch = 0.5, 22050, 440
    tone = 0.5 * np.sin(2 * np.pi * pitch * np.arange(int(seconds * rate)) / rate)
    path = tmp_path / f"tone.{extension}"
    soundfile.write(path, np.stack([tone, tone], axis=1), rate)
    samples = read_audio(str(path), 16000)
    assert samples.dtype == np.float32 and samples.shape == (int(seconds * 16000),)
    assert np.argmax(np.abs(np.fft.rfft(samples))) / seconds == pytest.approx(pitch, abs=1 / seconds)


def test_a_file_that_is_no_sound_is_refused_naming_the_formats_read(tmp_path: Path):
    voice_note = tmp_path / "voice_note.m4a"
    voice_note.write_bytes(b"\x00\x00\x00\x20ftypM4A " + bytes(64))  # an MP4 container's first box
    formats = re.escape(", ".join(AUDIO_EXTENSIONS))
    with pytest.raises(ValueError, match=rf"voice_note\.m4a could not be decoded .*read {formats}; convert it first"):
        read_audio(str(voice_note), 16000)


def test_a_missing_sound_file_is_not_found(tmp_path: Path):
    with pytest.raises(FileNotFoundError):
        read_audio(str(tmp_path / "nowhere.wav"), 16000)


@pytest.mark.parametrize(
    ("inputs", "expected"),
    [
        ({"text": "Who wrote it?", "context": " Ann wrote it. "}, ("Who wrote it?", "Ann wrote it.")),
        ({"text": "Who wrote it? Ann wrote it in May."}, ("Who wrote it?", "Ann wrote it in May.")),
        ({"text": "Ann wrote it in May. When did she write it?"}, ("When did she write it?", "Ann wrote it in May.")),
    ],
)
def test_question_and_context_come_from_context_or_from_the_question_mark(inputs, expected):
    assert question_and_context(inputs) == expected


@pytest.mark.parametrize("text", ["Ann wrote it in May.", "When did Ann write it?"])
def test_question_answering_without_both_parts_says_how_to_pass_them(text: str):
    with pytest.raises(ValueError, match="pass the passage as `context`"):
        question_and_context({"text": text})


def test_candidate_labels_are_comma_separated_with_a_default():
    assert candidate_labels({"text": "x", "labels": " sport, politics,, "}) == ["sport", "politics"]
    assert candidate_labels({"text": "x"}) == list(DEFAULT_LABELS)


def test_the_blank_is_written_in_the_model_s_own_mask_token():
    assert with_mask_token("Paris is the <mask> of France.", "[MASK]") == "Paris is the [MASK] of France."
    assert with_mask_token("a [MASK] b", "<mask>") == "a <mask> b"
    with pytest.raises(ValueError, match="needs a blank"):
        with_mask_token("no blank here", "[MASK]")
