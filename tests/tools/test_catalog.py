"""Catalogs: ranking by downloads, and model folders read from their model cards."""

import json
from pathlib import Path

from hugginggraph.tools.catalog import (
    CatalogEntry,
    CatalogUnavailable,
    CombinedCatalog,
    HFCacheCatalog,
    InMemoryCatalog,
    LocalFolderCatalog,
    describe,
    read_model_folder,
)


def save_folder(root: Path, name: str, card: str | None, config: bool = True) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    if config:
        (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    if card is not None:
        (folder / "README.md").write_text(card)


def test_candidates_are_filtered_by_task_and_ranked_by_downloads_then_likes():
    catalog = InMemoryCatalog(
        [
            CatalogEntry(id="a", task="summarization", downloads=5, likes=1),
            CatalogEntry(id="b", task="summarization", downloads=9),
            CatalogEntry(id="c", task="summarization", downloads=5, likes=7),
            CatalogEntry(id="d", task="translation", downloads=99),
        ]
    )
    assert [card.id for card in catalog.candidates("summarization")] == ["b", "c", "a"]
    assert catalog.get("d").task == "translation" and catalog.get("zzz") is None


def test_local_folders_are_read_from_their_model_cards(tmp_path: Path):
    save_folder(
        tmp_path,
        "tiny-sum",
        "---\npipeline_tag: summarization\ndownloads: 42\nlicense: mit\ntags:\n  - x\n---\n"
        "# Tiny\n\nShort summaries.\n",
    )
    save_folder(tmp_path, "no-task", "# A card without front matter\n")
    save_folder(tmp_path, "no-config", "---\npipeline_tag: summarization\n---\n", config=False)
    save_folder(tmp_path, "named", "---\npipeline_tag: translation\nmodel_id: org/named\n---\n")
    catalog = LocalFolderCatalog([tmp_path])
    (card,) = catalog.candidates("summarization")
    assert (card.id, card.downloads, card.description) == ("tiny-sum", 42, "Short summaries.")
    assert card.path == str((tmp_path / "tiny-sum").resolve())
    assert catalog.get("org/named").task == "translation"
    assert catalog.get("no-task") is None and catalog.get("no-config") is None


def test_front_matter_is_read_as_yaml(tmp_path: Path):
    save_folder(
        tmp_path,
        "yaml",
        '---\npipeline_tag: "summarization"\nlikes: 7\nrandom_weights: true\n'
        'widget:\n  - text: "key: value"\nlibrary_name: transformers\n---\nSums up.\n',
    )
    card = read_model_folder(tmp_path / "yaml")
    assert (card.task, card.likes, card.random_weights, card.description) == ("summarization", 7, True, "Sums up.")


def test_a_card_whose_front_matter_is_not_a_yaml_mapping_is_all_body(tmp_path: Path):
    config = {"architectures": ["BertForSequenceClassification"]}
    for name, front_matter in (("unclosed", "pipeline_tag: [summarization"), ("listed", "- summarization")):
        save_folder(tmp_path, name, f"---\n{front_matter}\n---\nBody.\n")
        (tmp_path / name / "config.json").write_text(json.dumps(config))
        card = read_model_folder(tmp_path / name)
        assert card.task == "text-classification" and card.description.endswith("Body.")


def test_a_card_without_front_matter_is_read_without_warnings(tmp_path: Path, caplog):
    save_folder(tmp_path, "plain", "# Plain\n\nNo front matter.\n")
    (tmp_path / "plain" / "config.json").write_text(json.dumps({"architectures": ["BertForMaskedLM"]}))
    assert read_model_folder(tmp_path / "plain").description == "No front matter."
    assert caplog.records == []


def test_descriptions_are_cut_to_the_budget():
    line = describe(CatalogEntry(id="m", task="summarization", description="x" * 500), budget=50)
    assert line.endswith("x" * 50 + "…") and '"id": "m"' in line


def test_task_comes_from_an_unambiguous_architecture_when_the_card_has_none(tmp_path: Path):
    folder = tmp_path / "vit"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"architectures": ["ViTForImageClassification"]}))
    assert read_model_folder(folder).task == "image-classification"
    (folder / "config.json").write_text(
        json.dumps({"architectures": ["Wav2Vec2ForSequenceClassification"], "model_type": "wav2vec2"})
    )
    assert read_model_folder(folder).task == "audio-classification"
    (folder / "config.json").write_text(json.dumps({"architectures": ["BartForConditionalGeneration"]}))
    assert read_model_folder(folder) is None


def save_cached_model(cache: Path, repo_id: str, config: dict, card: str = "") -> None:
    """The Hugging Face cache layout: models--org--name/{refs/main, snapshots/<revision>/...}."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir()
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    (snapshot / "config.json").write_text(json.dumps(config))
    if card:
        (snapshot / "README.md").write_text(card)


def test_hf_cache_models_are_named_by_repo_id(tmp_path: Path):
    save_cached_model(tmp_path, "org/sentiment", {"architectures": ["BertForSequenceClassification"]})
    save_cached_model(
        tmp_path,
        "org/captioner",
        {"architectures": ["BlipForConditionalGeneration"]},
        card="---\npipeline_tag: image-to-text\n---\nCaptions.\n",
    )
    save_cached_model(tmp_path, "org/unknown", {"architectures": ["T5ForConditionalGeneration"]})
    catalog = HFCacheCatalog(tmp_path)
    assert [c.id for c in catalog.candidates("text-classification")] == ["org/sentiment"]
    captioner = catalog.get("org/captioner")
    assert captioner.task == "image-to-text" and captioner.source == "hf-cache"
    assert catalog.get("org/unknown") is None


def test_a_missing_hf_cache_is_an_empty_catalog(tmp_path: Path):
    assert HFCacheCatalog(tmp_path / "nowhere").candidates("text-classification") == []


class Unreachable:
    def candidates(self, task):
        raise CatalogUnavailable("offline")

    def get(self, model_id):
        raise CatalogUnavailable("offline")


def test_combined_catalog_prefers_earlier_catalogs_and_skips_unavailable_ones():
    local = InMemoryCatalog([CatalogEntry(id="small", task="summarization", downloads=1)])
    hub = InMemoryCatalog(
        [
            CatalogEntry(id="big", task="summarization", downloads=1000, source="hub"),
            CatalogEntry(id="small", task="summarization", downloads=50, source="hub"),
        ]
    )
    combined = CombinedCatalog([local, Unreachable(), hub])
    assert [(c.id, c.source) for c in combined.candidates("summarization")] == [("small", "local"), ("big", "hub")]
    assert combined.get("big").source == "hub" and combined.get("none") is None
