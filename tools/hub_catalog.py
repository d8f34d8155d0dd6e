"""Models on the Hugging Face Hub as a `ModelCatalog`: the most downloaded models of a task, cached on disk.

A plan names a handful of tasks and each needs a short, ranked list of models, so the catalog asks the Hub once
per task (`HfApi.list_models`, following the Hub's pagination up to `limit` models) and keeps the answer as one
JSON file per task for `ttl_s` seconds: repeated runs and resumed runs make no request.

Configuration: a constructor argument, else the environment when the catalog is built, else huggingface_hub's
defaults. Reading the environment at construction (huggingface_hub reads it once, at import) lets a CLI flag or a
test point a catalog elsewhere.
- endpoint: `endpoint=`, else `HF_ENDPOINT`, else huggingface_hub's `constants.ENDPOINT`.
- token: `token=`, else what huggingface_hub finds for each request (`HF_TOKEN`, then the `hf auth login`
  token). It goes out as `Authorization: Bearer ...` and never into logs or messages.
- offline: `offline=`, else `HF_HUB_OFFLINE` (true values as huggingface_hub reads them), else huggingface_hub's
  own offline mode. Offline, the catalog answers from cached listings at any age and never makes a request.

Failure: a Hub that cannot be reached, refuses the request or does not answer within `timeout_s` raises
`CatalogUnavailable`, whose message says what to check, unless a cached listing (even a stale one) can answer.
Callers fall back by catching it, or by putting the catalog in a `CombinedCatalog` with local catalogs, which skips it.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

import httpx2
import platformdirs
from huggingface_hub import HfApi, ModelCardData, ModelInfo, constants
from huggingface_hub.errors import HFValidationError, OfflineModeIsEnabled, RepositoryNotFoundError
from huggingface_hub.hf_api import ExpandModelProperty_T
from pydantic import BaseModel, ValidationError

from hugginggraph.tools.catalog import CatalogEntry, CatalogUnavailable, has_random_weights, rank

logger = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TTL_S = 24 * 3600.0
"""A day: download counts move slowly, and a stale ranking still names real models."""

LISTED_PROPERTIES: list[ExpandModelProperty_T] = ["pipeline_tag", "downloads", "likes", "library_name", "cardData"]
"""What a card is made of; asking for exactly this (`expand`) keeps the Hub from sending file lists and configs."""

DESCRIBED_METADATA = ("base_model", "datasets", "language", "license")
"""Model card metadata worth a place in the selection prompt; the Hub's API has no prose description."""


class CachedListing(BaseModel):
    """One task's listing as stored on disk."""

    fetched_at: float
    """When the Hub answered (seconds since the epoch)."""
    limit: int
    """How many models were asked for: a listing shorter than the catalog now wants is refetched."""
    cards: list[CatalogEntry]

    def is_fresh(self, ttl_s: float, limit: int) -> bool:
        return time.time() - self.fetched_at < ttl_s and self.limit >= limit


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir("hugginggraph")) / "hub-catalog"


class HubCatalog:
    """The Hub's most downloaded models per task, cached on disk; see the module docstring for configuration."""

    def __init__(
        self,
        *,
        cache_dir: Path | str | None = None,
        ttl_s: float = DEFAULT_TTL_S,
        limit: int = 20,
        endpoint: str | None = None,
        token: str | None = None,
        offline: bool | None = None,
        timeout_s: float = 15.0,
    ) -> None:
        self.endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")
        self.offline = offline if offline is not None else offline_by_environment()
        # One folder per endpoint: a mirror's or a test server's listings never answer for the real Hub.
        self.cache_dir = Path(cache_dir or default_cache_dir()) / _slug(urlsplit(self.endpoint).netloc)
        self.ttl_s = ttl_s
        self.limit = limit
        self.timeout_s = timeout_s
        self._api = HfApi(endpoint=self.endpoint, token=token, library_name="hugginggraph")
        self._known: dict[str, CatalogEntry | None] = {}

    def candidates(self, task: str) -> list[CatalogEntry]:
        """The task's most downloaded models: a fresh cached listing, else the Hub's, else a stale cached one."""
        cached = self._read_listing(task)
        if cached is not None and (self.offline or cached.is_fresh(self.ttl_s, self.limit)):
            return self._remember(cached.cards[: self.limit])
        if self.offline:
            return []
        try:
            cards = self._fetch_listing(task)
        except CatalogUnavailable as error:
            if cached is None:
                raise
            logger.warning("%s; using the listing cached %.0f s ago", error, time.time() - cached.fetched_at)
            return self._remember(cached.cards[: self.limit])
        self._write_listing(task, cards)
        return self._remember(cards)

    def get(self, model_id: str) -> CatalogEntry | None:
        """A card seen in a listing (this process's or a cached one), else the Hub's `model_info`; None when the
        Hub has no such model, or one without a task."""
        if model_id not in self._known:
            card = self._find_in_cached_listings(model_id)
            if card is None and not self.offline:
                card = self._fetch_card(model_id)
            self._known[model_id] = card
        return self._known[model_id]

    # --- the Hub ------------------------------------------------------------------------------------------
    def _fetch_listing(self, task: str) -> list[CatalogEntry]:
        infos = self._ask(
            f"list {task} models",
            lambda: list(
                self._api.list_models(pipeline_tag=task, sort="downloads", limit=self.limit, expand=LISTED_PROPERTIES)
            ),
        )
        return rank(_card(info, task) for info in infos)

    def _fetch_card(self, model_id: str) -> CatalogEntry | None:
        try:
            info = self._ask(f"look up {model_id}", lambda: self._api.model_info(model_id, expand=LISTED_PROPERTIES))
        except (RepositoryNotFoundError, HFValidationError):
            return None
        return _card(info, info.pipeline_tag) if info.pipeline_tag else None

    def _ask(self, what: str, call: Callable[[], T]) -> T:
        """`call()`, its network failures turned into `CatalogUnavailable`; the Hub saying "no such model" is an
        answer and passes through."""
        try:
            return within_seconds(self.timeout_s, call)
        except TimeoutError:
            reason = f"no answer within {self.timeout_s:g} s"
        except RepositoryNotFoundError:
            raise
        except (httpx2.HTTPError, OfflineModeIsEnabled) as error:
            reason = f"{type(error).__name__}: {error}"
        raise CatalogUnavailable(
            f"could not {what} on {self.endpoint} ({reason}). Check the network and HF_ENDPOINT; if the Hub "
            "refused the request, check HF_TOKEN; set HF_HUB_OFFLINE=1 to use cached listings only."
        )

    # --- the cache ----------------------------------------------------------------------------------------
    def _remember(self, cards: list[CatalogEntry]) -> list[CatalogEntry]:
        self._known.update((card.id, card) for card in cards)
        return cards

    def _listing_path(self, task: str) -> Path:
        return self.cache_dir / f"{_slug(task)}.json"

    def _read_listing(self, task: str) -> CachedListing | None:
        return _read_listing_file(self._listing_path(task))

    def _find_in_cached_listings(self, model_id: str) -> CatalogEntry | None:
        listings = (_read_listing_file(path) for path in sorted(self.cache_dir.glob("*.json")))
        cards = (card for listing in listings if listing is not None for card in listing.cards)
        return next((card for card in cards if card.id == model_id), None)

    def _write_listing(self, task: str, cards: list[CatalogEntry]) -> None:
        """Atomically (write, then rename), so a concurrent reader never sees half a file; a cache that cannot be
        written costs a request next time, not the run."""
        listing = CachedListing(fetched_at=time.time(), limit=self.limit, cards=cards)
        path = self._listing_path(task)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(listing.model_dump_json())
            os.replace(temporary, path)
        except OSError as error:
            logger.warning("could not cache the %s listing in %s: %s", task, path.parent, error)


def _card(info: ModelInfo, task: str) -> CatalogEntry:
    return CatalogEntry(
        id=info.id,
        task=info.pipeline_tag or task,
        downloads=info.downloads or 0,
        likes=info.likes or 0,
        description=_describe(info.card_data),
        library=info.library_name or "unknown",
        source="hub",
        random_weights=has_random_weights(info.id),
    )


def _describe(card_data: ModelCardData | None) -> str:
    """One line of model card metadata, e.g. `datasets: sst2; language: en; license: apache-2.0`."""
    if card_data is None:
        return ""
    facts = ((key, card_data.get(key)) for key in DESCRIBED_METADATA)
    return "; ".join(f"{key}: {_as_text(value)}" for key, value in facts if value)


def _as_text(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def _read_listing_file(path: Path) -> CachedListing | None:
    """The listing in `path`; a missing file is a miss, and so is a damaged one (it is rewritten on the next fetch)."""
    try:
        return CachedListing.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError) as error:
        logger.warning("ignoring the unreadable catalog cache %s: %s", path, error)
        return None


def within_seconds(seconds: float, call: Callable[[], T]) -> T:
    """`call()`, waited for at most `seconds` (then `TimeoutError`).

    huggingface_hub's `list_models` takes no timeout (its shared HTTP client has none) and retries failures for
    tens of seconds, so the call runs on a daemon thread that the catalog stops waiting for: that thread ends when
    huggingface_hub gives up, and never holds the process open.
    """
    future: Future[T] = Future()

    def work() -> None:
        try:
            future.set_result(call())
        except Exception as error:
            future.set_exception(error)

    threading.Thread(target=work, name="hub-catalog-request", daemon=True).start()
    return future.result(timeout=seconds)


def offline_by_environment() -> bool:
    """Whether `HF_HUB_OFFLINE` or `TRANSFORMERS_OFFLINE` asks for offline mode now, read as huggingface_hub reads
    them (it reads them once, at import: a flag set later, by a CLI option or a test, must still count)."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in constants.ENV_VARS_TRUE_VALUES or constants.is_offline_mode()


def _slug(name: str) -> str:
    """A file name for a task id or a host: anything but letters, digits, `.`, `_` and `-` becomes `_`."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) or "_"
