"""Model ids are checked before any load: a strict `owner/name` Hub id or the card's own folder, nothing else; model
folders are listed only from inside the configured model folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, LocalFolderCatalog
from hugginggraph.tools.runners.inference_endpoint import InferenceEndpointRunner
from hugginggraph.tools.runners.model_sources import UnsafeModel, check_hub_id, model_source
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

UNSAFE_IDS = [
    "../../etc",
    "/tmp/model",
    "owner/../../name",
    "owner/name/extra",
    "~/models/x",
    "gpt2",
    "owner/name\n",
    "owner--x/name",
    "owner/.hidden",
    "own er/name",
    "C:\\models\\x",
    "",
    "a" * 97 + "/name",
    "ówner/name",
]


@pytest.mark.parametrize("model_id", ["openai-community/gpt2", "google/vit-base-patch16-224", "a/b", "x_y/m.v1-2"])
def test_hub_ids_of_the_form_owner_name_pass(model_id):
    assert check_hub_id(model_id) == model_id


@pytest.mark.parametrize("model_id", UNSAFE_IDS)
def test_anything_else_is_refused(model_id):
    with pytest.raises(UnsafeModel, match="a Hub id of the form owner/name"):
        check_hub_id(model_id)


def test_a_card_with_a_folder_loads_from_it_and_its_id_is_only_a_name(tmp_path: Path):
    card = CatalogEntry(id="any name at all", task="text-classification", path=str(tmp_path))
    assert model_source(card) == str(tmp_path)
    with pytest.raises(UnsafeModel, match="is not a folder"):
        model_source(card.model_copy(update={"path": str(tmp_path / "gone")}))


def test_a_local_folder_named_like_the_hub_id_is_not_loaded_instead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "acme" / "model").mkdir(parents=True)
    with pytest.raises(UnsafeModel, match="would be loaded instead of the Hub's model"):
        model_source(CatalogEntry(id="acme/model", task="text-classification"))


@pytest.mark.parametrize("model_id", ["../../models/evil", "/tmp/evil", "gpt2"])
async def test_the_local_runner_refuses_an_unsafe_id_before_loading_anything(model_id, tmp_path: Path):
    runner = LocalTransformersRunner(device="cpu")
    card = CatalogEntry(id=model_id, task="text-classification")
    with pytest.raises(UnsafeModel):
        await runner.run(card, "text-classification", {"text": "hi"}, ArtifactStore(tmp_path, 0))
    assert runner.loads == 0


async def test_the_endpoint_runner_puts_no_unsafe_id_in_a_url(tmp_path: Path):
    runner = InferenceEndpointRunner()
    card = CatalogEntry(id="../../v1/admin", task="text-classification", source="hub")
    with pytest.raises(UnsafeModel):
        await runner.run(card, "text-classification", {"text": "hi"}, ArtifactStore(tmp_path, 0))


def test_model_folders_are_listed_only_from_inside_the_configured_folders(tmp_path: Path):
    root, elsewhere = tmp_path / "models", tmp_path / "elsewhere"
    for folder in (root / "inside", elsewhere / "outside"):
        folder.mkdir(parents=True)
        (folder / "config.json").write_text('{"architectures": ["BertForSequenceClassification"]}')
    (root / "escape").symlink_to(elsewhere / "outside", target_is_directory=True)
    (root / "alias").symlink_to(root / "inside", target_is_directory=True)
    catalog = LocalFolderCatalog([root])
    assert sorted(card.id for card in catalog.candidates("text-classification")) == ["alias", "inside"]
