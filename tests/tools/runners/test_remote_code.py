"""A model folder whose config asks for its own code (`auto_map`, a custom diffusers pipeline) is refused by every
local loading path, and its code never runs: `trust_remote_code` is never enabled."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.sentence_embeddings import SentenceEmbeddingRunner
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner


def code_that_tells(marker: Path, class_name: str, base: str) -> str:
    """A module that leaves `marker` behind when it is imported, i.e. when the remote code runs."""
    return (
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('remote code ran')\n"
        f"from {base.rsplit('.', 1)[0]} import {base.rsplit('.', 1)[1]}\n"
        f"class {class_name}({base.rsplit('.', 1)[1]}):\n    model_type = 'evil'\n"
    )


def remote_code_model(folder: Path, marker: Path, model_type: str) -> Path:
    """A transformers model folder whose config maps every Auto class to code shipped in the folder."""
    folder.mkdir()
    auto_map = {
        "AutoConfig": "configuration_evil.EvilConfig",
        "AutoModel": "modeling_evil.EvilModel",
        "AutoModelForSequenceClassification": "modeling_evil.EvilModel",
        "AutoModelForSeq2SeqLM": "modeling_evil.EvilModel",
        "AutoTokenizer": ["tokenization_evil.EvilTokenizer", None],
    }
    config = {"model_type": model_type, "architectures": ["EvilModel"], "auto_map": auto_map}
    (folder / "config.json").write_text(json.dumps(config))
    tokenizer = {"tokenizer_class": "EvilTokenizer", "auto_map": {"AutoTokenizer": auto_map["AutoTokenizer"]}}
    (folder / "tokenizer_config.json").write_text(json.dumps(tokenizer))
    modules = {
        "configuration_evil": ("EvilConfig", "transformers.PretrainedConfig"),
        "modeling_evil": ("EvilModel", "transformers.PreTrainedModel"),
        "tokenization_evil": ("EvilTokenizer", "transformers.PreTrainedTokenizer"),
    }
    for module, (name, base) in modules.items():
        (folder / f"{module}.py").write_text(code_that_tells(marker, name, base))
    return folder


@pytest.mark.parametrize("model_type", ["evil", "bert"])  # a type transformers does not know, and one it does
@pytest.mark.parametrize(
    ("runner", "task", "library"),
    [
        (LocalTransformersRunner, "text-classification", "transformers"),  # a pipeline
        (LocalTransformersRunner, "summarization", "transformers"),  # an Auto class
        (SentenceEmbeddingRunner, "feature-extraction", "sentence-transformers"),
    ],
)
async def test_a_model_asking_for_its_own_code_is_refused_and_its_code_never_runs(
    runner, task, library, model_type, tmp_path: Path
):
    marker = tmp_path / "remote-code-ran"
    folder = remote_code_model(tmp_path / "evil-model", marker, model_type)
    card = CatalogEntry(id="evil-model", task=task, path=str(folder), library=library)
    with pytest.raises(ModelLoadError, match="could not load evil-model") as refused:
        await runner().run(card, task, {"text": "hello"}, ArtifactStore(tmp_path / "run", 0))
    assert not marker.exists()
    if model_type == "evil":  # only its own code could load it: refused for that reason
        assert "contains custom code" in str(refused.value)


def test_the_marker_shows_when_remote_code_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The control: trusting the folder's code runs it and leaves the marker, so its absence above means something."""
    from transformers import AutoConfig, dynamic_module_utils

    # transformers copies the code it runs into its modules cache: this one goes to tmp_path, not ~/.cache.
    monkeypatch.setattr(dynamic_module_utils, "HF_MODULES_CACHE", str(tmp_path / "modules"))
    marker = tmp_path / "remote-code-ran"
    AutoConfig.from_pretrained(remote_code_model(tmp_path / "evil-model", marker, "evil"), trust_remote_code=True)
    assert marker.exists() and (tmp_path / "modules").is_dir()


@pytest.mark.skipif(importlib.util.find_spec("diffusers") is None, reason="diffusers is an optional dependency")
async def test_a_custom_diffusers_pipeline_is_refused_and_its_code_never_runs(tmp_path: Path):
    marker = tmp_path / "remote-code-ran"
    folder = tmp_path / "evil-pipeline"
    folder.mkdir()
    (folder / "model_index.json").write_text(json.dumps({"_class_name": ["pipeline_evil", "EvilPipeline"]}))
    (folder / "pipeline_evil.py").write_text(code_that_tells(marker, "EvilPipeline", "diffusers.DiffusionPipeline"))
    card = CatalogEntry(id="evil-pipeline", task="text-to-image", path=str(folder), library="diffusers")
    with pytest.raises(ModelLoadError, match="could not load evil-pipeline"):
        await LocalTransformersRunner().run(card, "text-to-image", {"text": "a cat"}, ArtifactStore(tmp_path, 0))
    assert not marker.exists()
