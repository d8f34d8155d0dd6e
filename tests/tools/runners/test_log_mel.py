"""YAMNet's log-mel front end in numpy: how a clip is padded and cut into patches, silence, and where a tone lands.
No model is loaded, so these run in milliseconds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hugginggraph.tools.runners.log_mel import (
    HOP,
    LOG_OFFSET,
    MEL_BANDS,
    MEL_MAX_HZ,
    MEL_MIN_HZ,
    PATCH_FRAMES,
    PATCH_HOP_FRAMES,
    SAMPLE_RATE,
    WINDOW,
    log_mel_patches,
)

ONE_PATCH = (PATCH_FRAMES - 1) * HOP + WINDOW
"""15,600 samples (0.975 s): the shortest clip that fills a patch, as YAMNet's `pad_waveform` counts it."""
PATCH_HOP = PATCH_HOP_FRAMES * HOP


@pytest.mark.parametrize(
    ("samples", "patches"),
    [
        (0, 1),  # an empty clip is one patch of silence
        (1600, 1),
        (ONE_PATCH, 1),
        (ONE_PATCH + 1, 2),  # one sample more is padded to a whole hop more, not dropped
        (ONE_PATCH + PATCH_HOP, 2),
        (3 * SAMPLE_RATE, 6),  # YAMNet's 3-second test clips: 0.975 s, then five hops of 0.48 s
    ],
)
def test_a_clip_is_padded_to_whole_patches_of_96_frames_by_64_bands(samples: int, patches: int):
    found = log_mel_patches(np.zeros(samples, dtype=np.float32))
    assert found.shape == (patches, PATCH_FRAMES, MEL_BANDS) and found.dtype == np.float32


def test_silence_is_the_log_of_the_offset_everywhere():
    assert np.all(log_mel_patches(np.zeros(SAMPLE_RATE, dtype=np.float32)) == np.float32(math.log(LOG_OFFSET)))


def test_patches_overlap_by_half():
    rng = np.random.default_rng(0)
    patches = log_mel_patches(rng.uniform(-1, 1, 3 * SAMPLE_RATE).astype(np.float32))
    assert np.array_equal(patches[0, PATCH_HOP_FRAMES:], patches[1, :PATCH_HOP_FRAMES])


@pytest.mark.parametrize("frequency", [250.0, 1000.0, 4000.0])
def test_a_tone_is_loudest_in_the_mel_band_centred_nearest_to_it(frequency: float):
    time = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    patch = log_mel_patches((0.5 * np.sin(2 * np.pi * frequency * time)).astype(np.float32))[0]
    centres = _mel_band_centres()
    assert patch.mean(axis=0).argmax() == np.abs(centres - frequency).argmin()


def _mel_band_centres() -> np.ndarray:
    """The centres of the 64 bands in hertz, evenly spaced on the HTK mel scale between 125 and 7500 Hz."""
    low, high = (1127 * math.log1p(hertz / 700) for hertz in (MEL_MIN_HZ, MEL_MAX_HZ))
    mels = np.linspace(low, high, MEL_BANDS + 2)[1:-1]
    return 700 * np.expm1(mels / 1127)
