"""Which models exist for a task: the `ModelCatalog` interface and the catalogs that need no network.

The selection node asks a catalog for candidates of one Hub task id and the executor asks it for a model's card
by id; neither cares where the models live. The Hub-backed catalog plugs in behind the same interface.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml
from huggingface_hub import RepoCard
from pydantic import BaseModel, ConfigDict


class CatalogEntry(BaseModel):
    """What the controller and the runners need to know about one model."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Hub model id (`owner/name`) or a local folder's name."""
    task: str
    """The Hub task id the model serves."""
    downloads: int = 0
    likes: int = 0
    description: str = ""
    path: str | None = None
    """A local folder with the weights, when the model is on disk."""
    library: str = "transformers"
    """The library that runs the model (the Hub's `library_name`): runners pick the cards they can run by it."""
    source: str = "local"
    """Where the card came from (`local`, `hub`, `pypi`, ...), shown to users listing the catalog."""
    random_weights: bool = False
    """The weights are random (a `models make-tiny` folder, a Hub `tiny-random` test model): it exercises the
    wiring and its output is noise, so catalogs offer it only when asked and every output of it is labelled."""


class CatalogUnavailable(RuntimeError):
    """A catalog cannot be reached (offline, server down). Combined catalogs skip it and use the others."""


class ModelCatalog(Protocol):
    """Finds models by task and by id."""

    def candidates(self, task: str) -> list[CatalogEntry]:
        """Every model that serves `task`, best first."""
        ...

    def get(self, model_id: str) -> CatalogEntry | None:
        """The card of one model, or None when the catalog does not know it."""
        ...


RANDOM_WEIGHTS_NAMES = ("tiny-random",)
"""Name parts of models published with random weights for tests (the Hub's `hf-internal-testing/tiny-random-*`,
among the most downloaded models of many tasks)."""


def has_random_weights(model_id: str, declared: bool = False) -> bool:
    """Whether a model's weights are random: declared in its card (`random_weights: true`) or named so."""
    return declared or any(part in model_id for part in RANDOM_WEIGHTS_NAMES)


def rank(cards: Iterable[CatalogEntry]) -> list[CatalogEntry]:
    """Most downloaded first, then most liked, then by id so that ties are stable."""
    return sorted(cards, key=lambda card: (-card.downloads, -card.likes, card.id))


class InMemoryCatalog:
    """A catalog of cards given up front: for tests, notebooks and hand-picked model sets."""

    def __init__(self, cards: Iterable[CatalogEntry]) -> None:
        self._cards = {card.id: card for card in cards}

    def candidates(self, task: str) -> list[CatalogEntry]:
        return rank(card for card in self._cards.values() if card.task == task)

    def get(self, model_id: str) -> CatalogEntry | None:
        return self._cards.get(model_id)


# Architecture name endings that say the task without doubt; ambiguous heads (ForConditionalGeneration serves
# summarization, translation, captioning and speech alike) are left to the model card's `pipeline_tag`.
_TASK_BY_HEAD = {
    "ForSequenceClassification": "text-classification",
    "ForTokenClassification": "token-classification",
    "ForQuestionAnswering": "question-answering",
    "ForMaskedLM": "fill-mask",
    "ForCausalLM": "text-generation",
    "LMHeadModel": "text-generation",
    "ForImageClassification": "image-classification",
    "ForObjectDetection": "object-detection",
    "ForSemanticSegmentation": "image-segmentation",
    "ForDepthEstimation": "depth-estimation",
    "ForCTC": "automatic-speech-recognition",
    "ForAudioClassification": "audio-classification",
}
_AUDIO_MODEL_TYPES = ("wav2vec2", "hubert", "wavlm", "whisper", "audio-spectrogram-transformer", "unispeech")


def _task_from_config(config_file: Path) -> str | None:
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    architectures = config.get("architectures") or []
    for head, task in _TASK_BY_HEAD.items():
        if any(str(name).endswith(head) for name in architectures):
            if task == "text-classification" and str(config.get("model_type", "")).startswith(_AUDIO_MODEL_TYPES):
                return "audio-classification"
            return task
    return None


def read_model_folder(folder: Path, model_id: str | None = None, source: str = "local") -> CatalogEntry | None:
    """A card for a saved model folder, from its `README.md` model card and `config.json`.

    The task comes from the card's `pipeline_tag` (as on the Hub), else from an unambiguous architecture in
    `config.json`; `downloads` and `likes` may be recorded in the card too. Folders without a `config.json` or a
    task are not models we can run, so they give None.
    """
    # transformers folders hold a config.json; diffusers pipelines a model_index.json naming their parts.
    is_diffusers = (folder / "model_index.json").is_file()
    if not (folder / "config.json").is_file() and not is_diffusers:
        return None
    metadata, body = _read_card(folder / "README.md")
    task = metadata.get("pipeline_tag") or _task_from_config(folder / "config.json")
    if not task:
        return None
    card_id = model_id or metadata.get("model_id") or folder.name
    return CatalogEntry(
        id=card_id,
        task=task,
        downloads=int(metadata.get("downloads", 0)),
        likes=int(metadata.get("likes", 0)),
        description=_first_paragraph(body),
        path=str(folder.resolve()),
        library=metadata.get("library_name", "diffusers" if is_diffusers else "transformers"),
        source=source,
        random_weights=has_random_weights(card_id, metadata.get("random_weights") is True),
    )


def _read_card(readme: Path) -> tuple[dict[str, Any], str]:
    """The YAML front matter and the body of a model card, split as the Hub splits them.

    A card without front matter, or with front matter that is not a YAML mapping, is all body: one bad card must not
    stop a scan of every folder. RepoCard is not asked about a card that cannot hold front matter, since it logs a
    warning for each one.
    """
    if not readme.is_file():
        return {}, ""
    text = readme.read_text(encoding="utf-8-sig")
    if not text.lstrip().startswith("---"):
        return {}, text
    try:
        card = RepoCard(text, ignore_metadata_errors=True)
    except (yaml.YAMLError, ValueError):
        return {}, text
    return card.data.to_dict(), card.text


def _first_paragraph(body: str) -> str:
    for block in body.split("\n\n"):
        text = " ".join(line for line in block.splitlines() if not line.startswith("#")).strip()
        if text:
            return text
    return ""


class LocalFolderCatalog(InMemoryCatalog):
    """Models saved on disk: every direct sub-folder of the given roots that holds a model with a task. A sub-folder
    that is a symlink leading out of its root is not listed: models load only from the folders configured."""

    def __init__(self, roots: Sequence[Path | str]) -> None:
        super().__init__(self._scan(Path(root) for root in roots))

    @staticmethod
    def _scan(roots: Iterable[Path]) -> list[CatalogEntry]:
        cards = []
        for root in roots:
            inside = root.resolve()
            for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.resolve().is_relative_to(inside)):
                card = read_model_folder(folder)
                if card is not None:
                    cards.append(card)
        return cards


class HFCacheCatalog(InMemoryCatalog):
    """Models already downloaded into the Hugging Face cache (`huggingface_hub.scan_cache_dir`), newest
    revision of each, named by their Hub repo id. An empty or missing cache is an empty catalog."""

    def __init__(self, cache_dir: Path | str | None = None) -> None:
        super().__init__(self._scan(cache_dir))

    @staticmethod
    def _scan(cache_dir: Path | str | None) -> list[CatalogEntry]:
        from huggingface_hub import scan_cache_dir
        from huggingface_hub.errors import CacheNotFound

        try:
            cache = scan_cache_dir(cache_dir)
        except CacheNotFound:
            return []
        cards = []
        for repo in sorted(cache.repos, key=lambda r: r.repo_id):
            if repo.repo_type != "model" or not repo.revisions:
                continue
            newest = max(repo.revisions, key=lambda revision: revision.last_modified)
            card = read_model_folder(newest.snapshot_path, model_id=repo.repo_id, source="hf-cache")
            if card is not None:
                cards.append(card)
        return cards


class CombinedCatalog:
    """Several catalogs as one, in order of preference: every candidate of the first catalog (ranked as that
    catalog ranks them) before any of the next, so models on this machine come before ones that must be fetched.
    A model id seen twice keeps its first card; a catalog that is unavailable is skipped. Without
    `random_weights`, models with random weights are neither offered nor found: their output is noise."""

    def __init__(self, catalogs: Sequence[ModelCatalog], *, random_weights: bool = True) -> None:
        self.catalogs = list(catalogs)
        self.random_weights = random_weights

    def candidates(self, task: str) -> list[CatalogEntry]:
        merged: dict[str, CatalogEntry] = {}
        for catalog in self.catalogs:
            try:
                found = catalog.candidates(task)
            except CatalogUnavailable:
                continue
            for card in found:
                if self._offers(card):
                    merged.setdefault(card.id, card)
        return list(merged.values())

    def get(self, model_id: str) -> CatalogEntry | None:
        for catalog in self.catalogs:
            try:
                card = catalog.get(model_id)
            except CatalogUnavailable:
                continue
            if card is not None:
                return card if self._offers(card) else None
        return None

    def _offers(self, card: CatalogEntry) -> bool:
        return self.random_weights or not card.random_weights


def describe(card: CatalogEntry, budget: int = 200) -> str:
    """One line about a model for the selection prompt, its description cut to `budget` characters."""
    facts = json.dumps({"id": card.id, "downloads": card.downloads, "likes": card.likes})
    description = card.description if len(card.description) <= budget else card.description[:budget] + "…"
    return f"{facts} {description}".strip()
