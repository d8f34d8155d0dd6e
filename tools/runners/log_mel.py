"""YAMNet's input: a clip of 16 kHz mono sound as log-mel patches of 96 frames by 64 mel bands, in numpy.

The numbers are those YAMNet was trained with (`params.py` and `features.py` in tensorflow/models, research/audioset/
yamnet), and the steps follow `features.py`, so a model trained on them hears what it heard in training: a magnitude
STFT with a 25 ms periodic Hann window every 10 ms (a 512-point FFT), 64 mel bands from 125 to 7500 Hz with
triangles laid out on the HTK mel scale as `tf.signal.linear_to_mel_weight_matrix` lays them (the DC bin left out),
`log(mel + 0.001)`, then windows of 96 frames (0.96 s) every 48 frames. The clip is first padded with silence to
at least one patch and to a whole number of hops, as YAMNet's `pad_waveform` does, so a short or empty clip still
yields a patch (of silence, which the model labels `Silence`) and the end of a long one is not dropped.
"""

from __future__ import annotations

from functools import cache

import numpy as np

SAMPLE_RATE = 16000
WINDOW = 400
"""Samples in an STFT window: 25 ms."""
HOP = 160
"""Samples between STFT windows: 10 ms."""
FFT_LENGTH = 512
"""The smallest power of two that holds a window."""
MEL_BANDS = 64
MEL_MIN_HZ = 125.0
MEL_MAX_HZ = 7500.0
LOG_OFFSET = 0.001
"""Keeps the log finite in silence; its log (-6.9) is also the bottom of the quantised model's input range."""
PATCH_FRAMES = 96
"""Frames in a patch: 0.96 s, the model's input."""
PATCH_HOP_FRAMES = 48


def log_mel_patches(samples: np.ndarray) -> np.ndarray:
    """The patches of `samples` (mono, `SAMPLE_RATE`, in [-1, 1]) as float32 `[patches, PATCH_FRAMES, MEL_BANDS]`."""
    frames = np.lib.stride_tricks.sliding_window_view(_padded(samples), WINDOW)[::HOP]
    magnitudes = np.abs(np.fft.rfft(frames * _hann_window(), FFT_LENGTH))
    log_mel = np.log(magnitudes @ _mel_weights() + LOG_OFFSET).astype(np.float32)
    patches = np.lib.stride_tricks.sliding_window_view(log_mel, PATCH_FRAMES, axis=0)[::PATCH_HOP_FRAMES]
    return np.ascontiguousarray(patches.transpose(0, 2, 1))


def _padded(samples: np.ndarray) -> np.ndarray:
    """`samples` with silence after them: at least one patch's worth, and a whole number of patch hops more."""
    one_patch = (PATCH_FRAMES - 1) * HOP + WINDOW
    patch_hop = PATCH_HOP_FRAMES * HOP
    hops = -(-max(len(samples) - one_patch, 0) // patch_hop)  # rounded up
    return np.pad(samples.astype(np.float64), (0, one_patch + hops * patch_hop - len(samples)))


@cache
def _hann_window() -> np.ndarray:
    """The periodic Hann window of `tf.signal.stft`."""
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(WINDOW) / WINDOW)


@cache
def _mel_weights() -> np.ndarray:
    """`[FFT_LENGTH // 2 + 1, MEL_BANDS]`: each FFT bin's weight in each mel band (module docstring)."""
    bins = _hz_to_mel(np.linspace(0.0, SAMPLE_RATE / 2, FFT_LENGTH // 2 + 1))[:, None]
    edges = np.linspace(_hz_to_mel(MEL_MIN_HZ), _hz_to_mel(MEL_MAX_HZ), MEL_BANDS + 2)
    lower, centre, upper = edges[:-2], edges[1:-1], edges[2:]
    weights = np.maximum(0.0, np.minimum((bins - lower) / (centre - lower), (upper - bins) / (upper - centre)))
    weights[0] = 0.0  # the DC bin carries no band
    return weights


def _hz_to_mel(hertz: np.ndarray | float) -> np.ndarray:
    return 1127.0 * np.log1p(np.asarray(hertz) / 700.0)
