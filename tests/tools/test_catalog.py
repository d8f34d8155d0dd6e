"""Catalogs: ranking by downloads, and model folders read from their model cards."""

import json
from pathlib import Path

from hugginggraph.tools.catalog import InMemoryCatalog, LocalFolderCatalog, ModelCard, describe


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
            ModelCard(id="a", task="summarization", downloads=5, likes=1),
            ModelCard(id="b", task="summarization", downloads=9),
            ModelCard(id="c", task="summarization", downloads=5, likes=7),
            ModelCard(id="d", task="translation", downloads=99),
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


def test_descriptions_are_cut_to_the_budget():
    line = describe(ModelCard(id="m", task="summarization", description="x" * 500), budget=50)
    assert line.endswith("x" * 50 + "…") and '"id": "m"' in line
