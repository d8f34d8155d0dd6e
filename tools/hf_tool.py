"""Catalog models as LangChain tools, usable on their own in any LangChain agent.

A tool is named after its model id, described by its task and model card, takes its task's inputs (text, or
paths of image/audio files) as arguments, and runs through the same runner the graph uses. It answers with the
output text (artifact paths included) and hands the full `RunnerOutput` over as the tool message's artifact.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.tools import BaseTool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, create_model

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry, ModelCatalog
from hugginggraph.tools.runners.base import ModelRunner, RunnerOutput
from hugginggraph.tools.tasks import TASKS

_INPUT_HELP = {
    "text": "the text to work on",
    "image": "path of an image file",
    "audio": "path of an audio (WAV) file",
    "video": "path of a video file",
}


def tool_name(model_id: str) -> str:
    """Tool names allow letters, digits, `_` and `-` only (OpenAI's rule), at most 64 characters."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", model_id).strip("_")[:64] or "model"


def input_schema(task: str) -> type[BaseModel]:
    """Arguments named after the task's input modalities, each a string."""
    fields: dict[str, Any] = {name: (str, Field(description=_INPUT_HELP[name])) for name in TASKS[task].inputs}
    schema: type[BaseModel] = create_model(f"{tool_name(task).title().replace('-', '')}Input", **fields)
    return schema


class ModelTool(BaseTool):
    """One model of the catalog, run by its runner. Outputs go to `artifacts_dir`, one name per call."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    card: CatalogEntry
    runner: Any = Field(exclude=True)
    """The `ModelRunner` behind the tool."""
    artifacts_dir: Path
    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    _calls: itertools.count[int] = PrivateAttr(default_factory=itertools.count)

    async def _arun(self, *args: Any, **inputs: Any) -> tuple[str, RunnerOutput]:
        inputs.pop("run_manager", None)
        store = ArtifactStore(self.artifacts_dir, next(self._calls))
        output: RunnerOutput = await self.runner.run(self.card, self.card.task, dict(inputs), store)
        files = "".join(f"\n{artifact.kind}: {artifact.path}" for artifact in output.artifacts)
        return output.text + files, output

    def _run(self, *args: Any, **inputs: Any) -> tuple[str, RunnerOutput]:
        return asyncio.run(self._arun(*args, **inputs))


def model_tool(card: CatalogEntry, runner: ModelRunner, artifacts_dir: Path) -> ModelTool:
    spec = TASKS[card.task]
    about = f" {card.description}" if card.description else ""
    return ModelTool(
        name=tool_name(card.id),
        description=f"{card.task} with the model {card.id}: {spec.description}.{about}"[:1024],
        args_schema=input_schema(card.task),
        card=card,
        runner=runner,
        artifacts_dir=artifacts_dir,
    )


def catalog_tools(
    catalog: ModelCatalog, runners: Sequence[ModelRunner], tasks: Sequence[str], artifacts_dir: Path, top_k: int = 1
) -> list[ModelTool]:
    """Tools for the top `top_k` runnable models of each task, e.g. to hand a LangChain agent."""
    tools: list[ModelTool] = []
    for task in tasks:
        runnable = [
            (card, runner)
            for card in catalog.candidates(task)
            if (runner := next((r for r in runners if r.can_run(card)), None)) is not None
        ]
        tools.extend(model_tool(card, runner, artifacts_dir) for card, runner in runnable[:top_k])
    return tools
