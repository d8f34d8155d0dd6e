"""The whole graph as one LangChain tool, so any LangChain agent (e.g. `langchain.agents.create_agent`) can hand
HuggingGraph a multimodal sub-request — plan, pick expert models, run them, answer — and go on with the answer.

The agent's model reads the tool's answer and the paths of the files the experts wrote; the tool message also
carries the run's full output state (plan, choices, results) as its artifact, for code, never for the model.
Single expert models are tools too: `hugginggraph.tools.hf_tool`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.context import HuggingGraphContext

DESCRIPTION = (
    "Carry out a request over images, audio or text with Hugging Face expert models (speech recognition, image "
    "captioning, object detection, classification, translation, ...): HuggingGraph plans the steps, picks and "
    "runs the models, and answers. Name input files by path in `files`; the reply lists the files it wrote."
)


class HuggingGraphRequest(BaseModel):
    """The tool's arguments, as the calling agent's model sees them."""

    request: str = Field(description="What to do, in natural language, naming the input files it refers to.")
    files: list[str] = Field(default_factory=list, description="Paths of the input files (images, audio, ...).")


def reply_text(state: Mapping[str, Any]) -> str:
    """The answer, then one `kind: path` line per file the experts wrote, so the agent can pass the files on."""
    artifacts = [artifact for result in state.get("results", {}).values() for artifact in result.artifacts]
    return str(state.get("answer", "")) + "".join(f"\n{artifact.kind}: {artifact.path}" for artifact in artifacts)


def hugginggraph_tool(
    context: HuggingGraphContext, *, name: str = "hugginggraph", description: str = DESCRIPTION
) -> StructuredTool:
    """A tool running each call as a fresh HuggingGraph run (its own thread, so its own artifacts folder).

    Runs are not checkpointed: a tool call has no thread to resume. The graph is run on its own configuration, not
    the agent's, so it never mistakes itself for a subgraph of the agent and writes into the agent's checkpoints;
    the agent's callbacks still reach it through LangChain's context, so traces nest.
    """
    graph = build_graph()

    async def call(request: str, files: list[str] | None = None) -> tuple[str, dict[str, Any]]:
        config: RunnableConfig = {"configurable": {"thread_id": uuid.uuid4().hex}}
        state: dict[str, Any] = await graph.ainvoke({"request": request, "files": files or []}, config, context=context)
        return reply_text(state), state

    def call_sync(request: str, files: list[str] | None = None) -> tuple[str, dict[str, Any]]:
        return asyncio.run(call(request, files))

    return StructuredTool.from_function(
        func=call_sync,
        coroutine=call,
        name=name,
        description=description,
        args_schema=HuggingGraphRequest,
        response_format="content_and_artifact",
    )
