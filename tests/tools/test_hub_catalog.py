"""The Hub catalog against a fake Hub on 127.0.0.1: pagination, the disk cache, offline mode, the environment,
lookups by id, and what callers see when the Hub cannot answer."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hub_fake import FakeHub, Reply, allow_loopback_requests

from hugginggraph.tools.catalog import CatalogEntry, CatalogUnavailable, CombinedCatalog, InMemoryCatalog
from hugginggraph.tools.hub_catalog import HubCatalog

TASK = "text-classification"
TOKEN = "hf_fake_token_for_tests"


def _model(model_id: str, downloads: int, likes: int, task: str = TASK, **extra: Any) -> dict[str, Any]:
    # `sha` and `siblings` stand for the heavy fields the Hub only sends when asked.
    return {
        "id": model_id,
        "pipeline_tag": task,
        "downloads": downloads,
        "likes": likes,
        "library_name": "transformers",
        "sha": "0" * 40,
        "siblings": [{"rfilename": "model.safetensors"}],
        **extra,
    }


MODELS = [
    _model("acme/sentiment-xl", 900, 40, cardData={"license": "mit", "language": ["en"], "datasets": ["sst2"]}),
    _model("acme/sentiment", 500, 30),
    _model("acme/tie-fewer-likes", 300, 2),
    _model("acme/tie-more-likes", 300, 9),
    _model("acme/sentiment-tiny", 100, 1),
    _model("acme/captioner", 700, 5, task="image-to-text", library_name="diffusers"),
]


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    allow_loopback_requests(monkeypatch)
    with FakeHub(MODELS, page_size=2) as fake:
        yield fake


@pytest.fixture
def catalog_for(hub: FakeHub, tmp_path: Path) -> Callable[..., HubCatalog]:
    """Catalogs on the fake Hub sharing one cache folder, as successive processes would."""

    def make(**options: Any) -> HubCatalog:
        return HubCatalog(**{"endpoint": hub.url, "cache_dir": tmp_path / "cache", **options})

    return make


def listings(hub: FakeHub) -> list[dict[str, list[str]]]:
    return [request.query for request in hub.requests_to("/api/models")]


@pytest.mark.parametrize(("limit", "pages"), [(1, 1), (4, 2), (10, 3)])
def test_listing_follows_the_next_links_up_to_the_limit(hub, catalog_for, limit, pages):
    cards = catalog_for(limit=limit).candidates(TASK)

    by_downloads_then_likes = [
        "acme/sentiment-xl",
        "acme/sentiment",
        "acme/tie-more-likes",
        "acme/tie-fewer-likes",
        "acme/sentiment-tiny",
    ]
    assert [card.id for card in cards] == by_downloads_then_likes[:limit]
    assert len(listings(hub)) == pages
    first, *following = listings(hub)
    assert first["pipeline_tag"] == [TASK] and first["sort"] == ["downloads"] and first["limit"] == [str(limit)]
    assert set(first["expand"]) == {"pipeline_tag", "downloads", "likes", "library_name", "cardData"}
    assert [query["cursor"] for query in following] == [[str(2 * page)] for page in range(1, pages)]


def test_a_card_carries_what_the_hub_says_about_the_model(catalog_for):
    best = catalog_for(limit=1).candidates(TASK)[0]

    assert best == CatalogEntry(
        id="acme/sentiment-xl",
        task=TASK,
        downloads=900,
        likes=40,
        description="datasets: sst2; language: en; license: mit",
        library="transformers",
        source="hub",
    )


def test_a_cached_listing_answers_later_catalogs_without_a_request(hub, catalog_for, tmp_path):
    first = catalog_for().candidates(TASK)
    again = catalog_for().candidates(TASK)

    assert again == first and len(first) == 5
    assert len(listings(hub)) == 3  # the three pages of the first listing, nothing more
    host = hub.url.removeprefix("http://").replace(":", "_")
    stored = json.loads((tmp_path / "cache" / host / f"{TASK}.json").read_text())
    assert [card["id"] for card in stored["cards"]] == [card.id for card in first]


def test_a_listing_older_than_the_ttl_is_fetched_again(hub, catalog_for):
    catalog = catalog_for(ttl_s=0, limit=2)
    catalog.candidates(TASK)
    catalog.candidates(TASK)

    assert len(listings(hub)) == 2


def test_a_listing_shorter_than_the_limit_is_fetched_again(hub, catalog_for):
    catalog_for(limit=2).candidates(TASK)
    assert len(catalog_for(limit=4).candidates(TASK)) == 4
    assert len(listings(hub)) == 1 + 2


def test_a_damaged_cache_file_is_a_miss(hub, catalog_for, tmp_path):
    catalog_for(limit=2).candidates(TASK)
    (cache_file,) = (tmp_path / "cache").glob("*/*.json")
    cache_file.write_text("{not json")

    assert len(catalog_for(limit=2).candidates(TASK)) == 2
    assert len(listings(hub)) == 2


def test_offline_serves_cached_listings_at_any_age_and_makes_no_request(hub, catalog_for, monkeypatch):
    online = catalog_for(ttl_s=0, limit=2).candidates(TASK)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = catalog_for(ttl_s=0, limit=2)
    before = len(hub.requests)

    assert offline.offline
    assert offline.candidates(TASK) == online
    assert offline.candidates("image-to-text") == []  # never listed: nothing to serve
    assert offline.get("acme/sentiment") is not None and offline.get("acme/captioner") is None
    assert len(hub.requests) == before


def test_the_environment_sets_endpoint_and_token_and_the_token_is_never_logged(hub, tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG)
    catalog = HubCatalog(cache_dir=tmp_path, limit=2)
    catalog.candidates(TASK)
    hub.reply("GET", "/api/models", Reply(401, {"error": "Invalid credentials in Authorization header"}))

    with pytest.raises(CatalogUnavailable) as refused:
        catalog.candidates("image-to-text")

    assert catalog.endpoint == hub.url
    assert {request.headers["authorization"] for request in hub.requests} == {f"Bearer {TOKEN}"}
    assert TOKEN not in str(refused.value) and TOKEN not in caplog.text and TOKEN not in repr(catalog.__dict__)


def test_an_explicit_token_wins_over_the_environment(hub, catalog_for, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_from_the_environment")
    catalog_for(token=TOKEN, limit=1).candidates(TASK)

    assert hub.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_get_knows_listed_models_and_asks_the_hub_for_others(hub, catalog_for):
    catalog = catalog_for(limit=2)
    catalog.candidates(TASK)
    listed = catalog.get("acme/sentiment")
    requests_after_listing = len(hub.requests)

    looked_up = catalog.get("acme/captioner")
    missing = catalog.get("acme/no-such-model")
    again = [catalog.get("acme/captioner"), catalog.get("acme/no-such-model")]

    assert listed is not None and listed.downloads == 500 and requests_after_listing == 1
    assert looked_up == CatalogEntry(id="acme/captioner", task="image-to-text", downloads=700, likes=5,
                                  library="diffusers", source="hub")  # fmt: skip
    assert missing is None and again == [looked_up, None]
    lookups = hub.requests[requests_after_listing:]
    assert [r.path for r in lookups] == ["/api/models/acme/captioner", "/api/models/acme/no-such-model"]
    assert "pipeline_tag" in lookups[0].query["expand"]


def test_get_finds_models_in_listings_cached_by_an_earlier_process(hub, catalog_for):
    catalog_for(limit=2).candidates(TASK)

    card = catalog_for(limit=2).get("acme/sentiment-xl")

    assert card is not None and card.likes == 40 and len(hub.requests) == 1


def test_a_hub_that_refuses_raises_catalog_unavailable_saying_what_to_do(hub, catalog_for):
    hub.reply("GET", "/api/models", Reply(403, {"error": "Forbidden"}))

    with pytest.raises(CatalogUnavailable) as refused:
        catalog_for().candidates(TASK)

    message = str(refused.value)
    assert f"could not list {TASK} models on {hub.url}" in message and "403" in message
    assert "HF_ENDPOINT" in message and "HF_TOKEN" in message and "HF_HUB_OFFLINE=1" in message


def test_an_unreachable_hub_raises_catalog_unavailable(tmp_path, monkeypatch):
    allow_loopback_requests(monkeypatch)
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"

    with pytest.raises(CatalogUnavailable, match=r"could not look up acme/x .*ConnectError"):
        HubCatalog(endpoint=endpoint, cache_dir=tmp_path).get("acme/x")


def test_a_hub_that_does_not_answer_in_time_raises_catalog_unavailable(hub, catalog_for):
    hub.reply("GET", "/api/models", Reply(json=[], delay_s=10))
    started = time.monotonic()

    with pytest.raises(CatalogUnavailable, match=r"no answer within 0\.2 s"):
        catalog_for(timeout_s=0.2).candidates(TASK)
    assert time.monotonic() - started < 2


def test_a_failed_refresh_serves_the_stale_listing(hub, catalog_for, caplog):
    cached = catalog_for(limit=2).candidates(TASK)
    hub.reply("GET", "/api/models", Reply(403, {"error": "Forbidden"}))

    assert catalog_for(limit=2, ttl_s=0).candidates(TASK) == cached
    assert "using the listing cached" in caplog.text


def test_a_combined_catalog_answers_when_the_hub_cannot(hub, catalog_for, monkeypatch):
    local = CatalogEntry(id="local-sentiment", task=TASK, path="/models/local-sentiment")
    hub.reply("GET", "/api/models", Reply(403, {"error": "Forbidden"}))
    catalog = CombinedCatalog([catalog_for(), InMemoryCatalog([local])])

    assert catalog.candidates(TASK) == [local]
    assert catalog.get("local-sentiment") == local  # the Hub does not know it
    assert catalog.get("acme/captioner") is not None  # the Hub does

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    offline = CombinedCatalog([catalog_for(), InMemoryCatalog([local])])
    assert offline.candidates(TASK) == [local]  # offline with nothing cached: the Hub has no candidates
