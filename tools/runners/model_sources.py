"""What a runner may load a model from, checked before anything is loaded or sent: a card's own folder, or a Hub id
of the strict form `owner/name`.

`from_pretrained` and `pipeline()` read any local folder that a model id happens to name: `../../models/x`,
`/tmp/x`, or a folder in the working directory spelled like a Hub id. A card's id reaches them when the card has
no folder (the Hub catalog's cards, or a cached listing someone edited), and an inference endpoint puts the id in
its URL. So an id is used only when it is a well-formed Hub id that no local folder shadows. A card's folder, set
only by the catalogs that scan the model folders they were given (see `LocalFolderCatalog`), must be a folder.
"""

from __future__ import annotations

import re
from pathlib import Path

from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
HUB_ID = re.compile(rf"{_NAME}/{_NAME}")
"""`owner/name`, as the Hub spells repo ids (letters, digits, `.`, `_`, `-`; 96 characters at most each), without
the legacy ids that lack an owner."""


class UnsafeModel(ModelLoadError):
    """A model id or folder that must not be loaded; the executor moves on to the next candidate."""


def check_hub_id(model_id: str) -> str:
    """`model_id` when it is a Hub id of the form `owner/name` with no `..` or `--` in it; else UnsafeModel."""
    if not HUB_ID.fullmatch(model_id) or ".." in model_id or "--" in model_id:
        raise UnsafeModel(
            f"refusing to load {model_id!r}: a model without a local folder must have a Hub id of the form owner/name "
            "(letters, digits, '.', '_' and '-'), and no path"
        )
    return model_id


def model_source(card: CatalogEntry) -> str:
    """What to hand to `from_pretrained` for `card`: its folder when it has one, else its checked Hub id.

    Raises UnsafeModel when the folder is not a folder, when the id is not a Hub id, or when a folder in the
    working directory has the id's name (transformers would load that folder instead of the Hub's model).
    """
    if card.path is not None:
        folder = Path(card.path)
        if not folder.is_dir():
            raise UnsafeModel(f"refusing to load {card.id}: its folder {card.path!r} is not a folder")
        return str(folder)
    model_id = check_hub_id(card.id)
    if Path(model_id).exists():
        raise UnsafeModel(
            f"refusing to load {model_id}: {Path(model_id).resolve()} has its name, and would be loaded instead of the "
            "Hub's model; run from another folder, or register the folder with --models-dir"
        )
    return model_id
