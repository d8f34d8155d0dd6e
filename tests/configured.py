"""Settings read as a fresh process would read them, from exactly the variables and config file a test gives."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from hugginggraph.settings import ENV_PREFIX, Settings, load_settings


def settings_from(
    monkeypatch: pytest.MonkeyPatch, environ: Mapping[str, str], config: Path, flags: Mapping[str, object] = {}
) -> Settings:
    """Clears the machine's own settings variables first, so a developer's setup cannot change a test."""
    for name in list(os.environ):
        if name.startswith(ENV_PREFIX) or name.startswith("OPENAI_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(config))
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return load_settings(flags)
