"""HuggingGraph on the LangGraph server (`langgraph dev`, LangGraph Studio, a self-hosted LangGraph API).

The server can only hand a run JSON, so its graph takes `ServerOptions` as its context: what a caller may choose per
run (the controllers, the limits and budgets). Everything else, keys included, comes from the server's environment
and config file, read as the CLI reads them. Nodes turn the options into a full `HuggingGraphContext` through
`context_of`; the first run with given controllers builds them, later ones reuse them. docs/server.md shows the
HTTP calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import lru_cache

from langgraph.checkpoint.base import BaseCheckpointSaver
from pydantic import BaseModel, ConfigDict, Field

from hugginggraph.defaults import build_context
from hugginggraph.graph.builder import HuggingGraph, build_graph
from hugginggraph.graph.checkpoint import open_checkpointer
from hugginggraph.graph.context import HuggingGraphContext, Limits
from hugginggraph.settings import Settings, load_settings

_SETTINGS_FIELDS = {"model", "plan_model", "select_model", "respond_model", "base_url"}


class ServerOptions(BaseModel):
    """A run's `context` on the server: plain JSON, no secrets. Unset fields keep the server's own settings."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    model: str | None = None
    """The controller for every stage, provider:model."""
    plan_model: str | None = None
    """The planner, when it differs from `model`."""
    select_model: str | None = None
    """The model chooser, when it differs from `model`."""
    respond_model: str | None = None
    """The answer writer, when it differs from `model`."""
    base_url: str | None = None
    """An OpenAI-compatible server for openai: models. The server's own API key is not sent to a URL chosen here."""
    limits: Limits = Field(default_factory=Limits)
    """Bounds on the run: candidates per task, timeouts, budgets."""

    def settings(self, environment: Settings) -> Settings:
        """The server's settings with these options' choices over them."""
        chosen = self.model_dump(include=_SETTINGS_FIELDS, exclude_none=True)
        if chosen.get("base_url", environment.base_url) != environment.base_url:
            chosen["api_key"] = None  # the key belongs to the endpoint it was configured for
        return environment.model_copy(update=chosen)

    def build(self) -> HuggingGraphContext:
        """The context these options describe (`ContextOptions`). Controllers and catalogs are built once per
        distinct choice of controllers (`served_context`); the limits, free to change, are set per run."""
        return replace(served_context(self.model_copy(update={"limits": Limits()})), limits=self.limits)


@lru_cache(maxsize=8)
def served_context(options: ServerOptions) -> HuggingGraphContext:
    """Bounded, since each context may hold a controller loaded in memory; the environment is read on a miss."""
    return build_context(options.settings(load_settings()))


def make_graph() -> HuggingGraph:
    """The graph `langgraph.json` serves. No checkpointer: the server brings its own (or `checkpointer` below)."""
    return build_graph(context_schema=ServerOptions)


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver]:
    """For a self-hosted server (langgraph.json `"checkpointer": {"backend": "custom", "path": ...}`): runs saved
    where the CLI saves them (SQLite at `HUGGINGGRAPH_CHECKPOINTS`, or PostgreSQL at `HUGGINGGRAPH_CHECKPOINT_URL`),
    so `hugginggraph runs`, `history` and `resume` see the server's runs and the server sees theirs."""
    settings = load_settings()
    async with open_checkpointer(settings.checkpoint_url, settings.checkpoint_path) as saver:
        yield saver
