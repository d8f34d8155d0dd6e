"""Prompt texts and few-shot demos, kept as data files and loaded by name.

Texts are `string.Template`s (`$name` placeholders), so the JSON inside them needs no escaping.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from string import Template
from typing import Any


@cache
def _read(filename: str) -> str:
    return files(__package__).joinpath(filename).read_text(encoding="utf-8")


def render(name: str, **values: str) -> str:
    """The prompt `<name>.md` with its `$placeholders` filled; a missing value is an error, not a blank."""
    return Template(_read(f"{name}.md")).substitute(values)


def read_bytes(filename: str) -> bytes | None:
    """The binary data file `filename` (trained weights), or None when the package lacks it."""
    resource = files(__package__).joinpath(filename)
    return resource.read_bytes() if resource.is_file() else None


def load_json(name: str) -> Any:
    """The data file `<name>.json` (few-shot demos, per-task instructions)."""
    return json.loads(_read(f"{name}.json"))
