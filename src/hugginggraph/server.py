"""HuggingGraph on the LangGraph server (`langgraph dev`, LangGraph Studio, a self-hosted LangGraph API).

The server can only hand a run JSON, so its graph takes `ServerOptions` as its context: what a caller may choose per
run (the controllers, the limits and budgets, the planning aids), its fields made from those of `Settings`.
Everything else, keys included, comes from the server's environment and config file, read as the CLI reads them.
The graph turns the options into a full `HuggingGraphContext` before each node (`given_context`); the first run
with given controllers builds them, later ones reuse them. docs/server.md shows the HTTP calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import lru_cache
from typing import Any, Optional

from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import BaseModel, ConfigDict, Field, create_model

from hugginggraph.context_assembly import build_context
from hugginggraph.graph.builder import HuggingGraph, build_graph
from hugginggraph.graph.checkpoint import open_checkpointer
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.settings import Settings, load_settings

RUN_CHOICES = ("model", "plan_model", "select_model", "respond_model", "base_url", "limits", "planning")
"""The settings a run may choose on the server: no keys, no paths, nothing that reaches the server's disk."""


class _RunChoices(BaseModel):
    """What `ServerOptions` does with the choices it holds; its fields are made from `Settings` below."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def chosen(self) -> dict[str, Any]:
        """The choices this run made (unset ones are None and keep the server's own settings)."""
        return {name: value for name in RUN_CHOICES if (value := getattr(self, name)) is not None}

    def settings(self, environment: Settings) -> Settings:
        """The server's settings with these options' choices over them."""
        chosen = self.chosen()
        if chosen.get("base_url", environment.base_url) != environment.base_url:
            chosen["api_key"] = None  # the key belongs to the endpoint it was configured for
        return environment.model_copy(update=chosen)

    def build(self) -> HuggingGraphContext:
        """The context these options describe (`ContextOptions`). Controllers and catalogs are built once per
        distinct choice of controllers (`served_context`); the limits and planning aids, free to change, are set
        per run."""
        served = served_context(self.model_copy(update={"limits": None, "planning": None}))
        chosen = self.chosen()
        return replace(
            served, limits=chosen.get("limits", served.limits), planning=chosen.get("planning", served.planning)
        )


def _optional(name: str) -> Any:
    setting = Settings.model_fields[name]
    return Optional[setting.annotation], Field(default=None, description=setting.description)  # noqa: UP045


ServerOptions = create_model(
    "ServerOptions",
    __base__=_RunChoices,
    __doc__="A run's `context` on the server: plain JSON, no secrets, each field a setting of `Settings` (unset "
    "ones keep the server's own). The server's API key is not sent to a `base_url` chosen here; `limits` and "
    "`planning`, when given, replace the server's whole table.",
    **{name: _optional(name) for name in RUN_CHOICES},
)


@lru_cache(maxsize=8)
def served_context(options: _RunChoices) -> HuggingGraphContext:
    """Bounded, since each context may hold a controller loaded in memory; the environment is read on a miss."""
    return build_context(options.settings(load_settings()), resident=True)


def make_graph() -> HuggingGraph:
    """The graph `langgraph.json` serves. No checkpointer: the server brings its own (or `checkpointer` below)."""
    return build_graph(options_schema=ServerOptions)


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver]:
    """For a self-hosted server (langgraph.json `"checkpointer": {"backend": "custom", "path": ...}`): runs saved
    where the CLI saves them (SQLite at `HUGGINGGRAPH_CHECKPOINTS`, or PostgreSQL at `HUGGINGGRAPH_CHECKPOINT_URL`),
    so `hugginggraph runs`, `history` and `resume` see the server's runs and the server sees theirs."""
    settings = load_settings()
    async with open_checkpointer(settings.checkpoint_url, settings.checkpoint_path) as saver:
        yield saver
