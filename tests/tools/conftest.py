"""Fixtures for the tools' tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest


@pytest.fixture
def pip_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[str], str]]:
    """In place of running pip: each command it would have run, with the requirements file it names (read while
    it exists)."""
    calls: list[tuple[list[str], str]] = []

    def record(command: list[str], check: bool) -> None:
        calls.append((command, Path(command[-1]).read_text(encoding="utf-8")))

    monkeypatch.setattr(subprocess, "run", record)
    return calls
