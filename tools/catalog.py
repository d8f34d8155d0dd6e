"""Which models exist for a task: the `ModelCatalog` interface and the catalogs that need no network.

The selection node asks a catalog for candidates of one Hub task id and the executor asks it for a model's card
by id; neither cares where the models live. The Hub-backed catalog plugs in behind the same interface.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict


class ModelCard(BaseModel):
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


class ModelCatalog(Protocol):
    """Finds models by task and by id."""

    def candidates(self, task: str) -> list[ModelCard]:
        """Every model that serves `task`, best first."""
        ...

    def get(self, model_id: str) -> ModelCard | None:
        """The card of one model, or None when the catalog does not know it."""
        ...


def rank(cards: Iterable[ModelCard]) -> list[ModelCard]:
    """Most downloaded first, then most liked, then by id so that ties are stable."""
    return sorted(cards, key=lambda card: (-card.downloads, -card.likes, card.id))


class InMemoryCatalog:
    """A catalog of cards given up front: for tests, notebooks and hand-picked model sets."""

    def __init__(self, cards: Iterable[ModelCard]) -> None:
        self._cards = {card.id: card for card in cards}

    def candidates(self, task: str) -> list[ModelCard]:
        return rank(card for card in self._cards.values() if card.task == task)

    def get(self, model_id: str) -> ModelCard | None:
        return self._cards.get(model_id)


_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n(.*)\Z", re.DOTALL)


def read_model_folder(folder: Path) -> ModelCard | None:
    """A card for a saved model folder, from its `README.md` model card and `config.json`.

    The task comes from the card's `pipeline_tag` (as on the Hub); `downloads` and `likes` may be recorded
    there too. Folders without a `config.json` or a task are not models we can run, so they give None.
    """
    if not (folder / "config.json").is_file():
        return None
    metadata, body = _read_card(folder / "README.md")
    task = metadata.get("pipeline_tag")
    if not task:
        return None
    return ModelCard(
        id=metadata.get("model_id") or folder.name,
        task=task,
        downloads=int(metadata.get("downloads", 0)),
        likes=int(metadata.get("likes", 0)),
        description=_first_paragraph(body),
        path=str(folder.resolve()),
        library=metadata.get("library_name", "transformers"),
    )


def _read_card(readme: Path) -> tuple[dict[str, str], str]:
    """Flat `key: value` front matter and the body of a model card; nested YAML is not needed here."""
    if not readme.is_file():
        return {}, ""
    text = readme.read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    metadata: dict[str, str] = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.startswith((" ", "-")):
            metadata[key.strip()] = value.strip().strip("'\"")
    return metadata, match.group(2)


def _first_paragraph(body: str) -> str:
    for block in body.split("\n\n"):
        text = " ".join(line for line in block.splitlines() if not line.startswith("#")).strip()
        if text:
            return text
    return ""


class LocalFolderCatalog(InMemoryCatalog):
    """Models saved on disk: every direct sub-folder of the given roots that holds a model with a task."""

    def __init__(self, roots: Sequence[Path | str]) -> None:
        super().__init__(self._scan(Path(root) for root in roots))

    @staticmethod
    def _scan(roots: Iterable[Path]) -> list[ModelCard]:
        cards = []
        for root in roots:
            for folder in sorted(p for p in root.iterdir() if p.is_dir()):
                card = read_model_folder(folder)
                if card is not None:
                    cards.append(card)
        return cards


def describe(card: ModelCard, budget: int = 200) -> str:
    """One line about a model for the selection prompt, its description cut to `budget` characters."""
    facts = json.dumps({"id": card.id, "downloads": card.downloads, "likes": card.likes})
    description = card.description if len(card.description) <= budget else card.description[:budget] + "…"
    return f"{facts} {description}".strip()
