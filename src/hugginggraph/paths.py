"""Where HuggingGraph keeps what it saves: one data folder, shared by every layer (runs, artifacts, model weights,
caches), so a leaf that all of them may import."""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_data_dir


def default_data_dir() -> Path:
    """`$HUGGINGGRAPH_HOME`, else the platform's user data directory (e.g. `~/.local/share/hugginggraph`)."""
    return Path(os.environ.get("HUGGINGGRAPH_HOME") or user_data_dir("hugginggraph"))
