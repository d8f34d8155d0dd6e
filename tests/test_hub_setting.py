"""The Hub setting from the command line, the environment and the config file to the catalog and the runners:
auto (the Hub when the probe finds it), on, off, and the disk budget of Hub downloads."""

from __future__ import annotations

import pickle
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from configured import settings_from
from hub_fake import FakeHub, allow_loopback_requests

from hugginggraph.cli import parser
from hugginggraph.cli.flags import command_settings
from hugginggraph.context_assembly import build_context, default_catalog
from hugginggraph.settings import ConfigurationError, Settings
from hugginggraph.tools.catalog import CombinedCatalog
from hugginggraph.tools.hub_catalog import HubCatalog
from hugginggraph.tools.runners.hub_downloads import DEFAULT_BUDGET_GB
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

pytestmark = pytest.mark.usefixtures("fresh_hub_probes")


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """A fake Hub that catalogs find through `HF_ENDPOINT`, as they would find a mirror."""
    allow_loopback_requests(monkeypatch)
    with FakeHub() as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.url)
        yield fake


def has_hub(catalog: CombinedCatalog) -> bool:
    return any(isinstance(part, HubCatalog) for part in catalog.catalogs)


def test_by_default_the_hub_is_asked_when_it_answers_with_the_default_budget():
    assert Settings().hub == "auto" and Settings().hub_disk_budget_gb == DEFAULT_BUDGET_GB
    assert Settings(hub=True).hub is True and Settings(hub=False).hub is False  # the old boolean setting


@pytest.mark.parametrize(
    ("value", "hub"),
    [("auto", "auto"), ("1", True), ("on", True), ("true", True), ("0", False), ("off", False), ("false", False)],
)
def test_the_environment_sets_the_hub_mode(value: str, hub: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    assert settings_from(monkeypatch, {"HUGGINGGRAPH_HUB": value}, tmp_path / "no-config.toml").hub == hub


def test_the_config_file_sets_the_hub_mode_and_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    config = tmp_path / "config.toml"
    config.write_text('hub = "auto"\nhub_disk_budget_gb = 2.5\n')
    settings = settings_from(monkeypatch, {}, config)
    assert settings.hub == "auto" and settings.hub_disk_budget_gb == 2.5
    assert settings_from(monkeypatch, {"HUGGINGGRAPH_HUB_DISK_BUDGET_GB": "7"}, config).hub_disk_budget_gb == 7.0


@pytest.mark.parametrize(
    ("environ", "named"),
    [({"HUGGINGGRAPH_HUB": "sometimes"}, "hub"), ({"HUGGINGGRAPH_HUB_DISK_BUDGET_GB": "0"}, "hub_disk_budget_gb")],
)
def test_a_bad_hub_setting_is_a_clear_error(
    environ: dict[str, str], named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    with pytest.raises(ConfigurationError, match=f"invalid configuration \\({named}"):
        settings_from(monkeypatch, environ, tmp_path / "no-config.toml")


@pytest.mark.parametrize(
    ("flags", "environment", "hub"),
    [(["--hub"], "0", True), (["--no-hub"], "1", False), ([], "0", False), ([], None, "auto")],
)
def test_the_command_line_turns_the_hub_on_or_off_over_the_environment(
    flags: list[str], environment: str | None, hub: object, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.delenv("HUGGINGGRAPH_HUB", raising=False)
    if environment is not None:
        monkeypatch.setenv("HUGGINGGRAPH_HUB", environment)
    assert command_settings(parser().parse_args(["run", "a request", *flags])).hub == hub
    assert parser().parse_args(["models", "list", *flags]).hub == (hub if flags else None)  # None: unset


def test_auto_lists_the_hub_when_the_probe_finds_it(hub: FakeHub):
    assert has_hub(default_catalog(hub="auto"))
    assert len(hub.requests_to("/api/models")) == 1


def test_auto_leaves_out_a_hub_that_does_not_answer(monkeypatch: pytest.MonkeyPatch):
    allow_loopback_requests(monkeypatch)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed.getsockname()[1]}")
    assert not has_hub(default_catalog(hub="auto"))


def test_auto_leaves_out_the_hub_in_offline_mode_without_asking(hub: FakeHub, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert not has_hub(default_catalog())
    assert hub.requests == []


@pytest.mark.parametrize("on", [True, False])
def test_on_and_off_ask_no_probe(hub: FakeHub, on: bool):
    assert has_hub(default_catalog(hub=on)) == on
    assert hub.requests == []


def test_the_budget_setting_reaches_the_local_runner_even_in_a_child_process(tmp_path: Path):
    settings = Settings(model="openai:gpt-4o-mini", api_key="sk-test", hub=False, hub_disk_budget_gb=3.5)
    (runner,) = [r for r in build_context(settings, tmp_path).runners if isinstance(r, LocalTransformersRunner)]
    assert runner.hub_downloads.budget_gb == 3.5

    isolated_settings = settings.model_copy(update={"isolate_models": True})
    (isolated, *_) = build_context(isolated_settings, tmp_path).runners
    assert isinstance(isolated, SubprocessRunner)
    child = pickle.loads(pickle.dumps(isolated.inner_factory))()  # as the worker builds it
    assert isinstance(child, LocalTransformersRunner) and child.hub_downloads.budget_gb == 3.5
