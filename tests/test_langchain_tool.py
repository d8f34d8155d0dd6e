"""HuggingGraph inside a LangChain agent (`create_agent`): the whole graph as one tool, and one expert model as a
tool. The agent's model is scripted; so is the controller inside the graph (`make_context` in conftest)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage

from hugginggraph.langchain_tool import hugginggraph_tool
from hugginggraph.testing import ScriptedAgentModel
from hugginggraph.testing.tiny_models import build_tiny_model
from hugginggraph.tools.catalog import LocalFolderCatalog
from hugginggraph.tools.hf_tool import catalog_tools
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner

PLAN = [{"task": "text-to-image", "id": 0, "dep": [-1], "args": {"text": "a red fox"}}]
FINAL = "HuggingGraph drew the fox."


async def paint(card, task, inputs, artifacts) -> RunnerOutput:
    from PIL import Image

    return RunnerOutput(text="drawn", artifacts=[artifacts.save_image(Image.new("RGB", (2, 2)), "fox")])


def agent_calling(tool_name: str, args: dict[str, Any], tools: list[Any]) -> Any:
    """An agent whose model calls `tool_name` once with `args`, then writes `FINAL`."""
    call = AIMessage("", tool_calls=[{"name": tool_name, "args": args, "id": "call-1", "type": "tool_call"}])
    return create_agent(ScriptedAgentModel(messages=iter([call, AIMessage(FINAL)])), tools)


async def test_an_agent_hands_a_request_to_hugginggraph_and_gets_its_answer_and_files(make_context):
    context = make_context(PLAN, {"painter": ("text-to-image", paint)})
    tool = hugginggraph_tool(context)
    agent = agent_calling(tool.name, {"request": "draw a red fox"}, [tool])

    messages = (await agent.ainvoke({"messages": [("user", "draw me a red fox")]}))["messages"]

    reply = next(message for message in messages if isinstance(message, ToolMessage))
    image = Path(reply.artifact["results"][0].artifacts[0].path)
    # A drawing is answered by the report alone (nodes/response.py), then the files, one per line.
    assert reply.content == f"- I drew \u201ca red fox\u201d: {image}\nimage: {image}"
    assert image.is_file() and image.is_relative_to(context.artifacts_dir)
    assert messages[-1].content == FINAL


def test_the_tool_schema_is_what_the_agent_model_sees(make_context):
    tool = hugginggraph_tool(make_context([], {}))
    schema = tool.tool_call_schema.model_json_schema()
    assert set(schema["properties"]) == {"request", "files"} and schema["required"] == ["request"]
    assert "Hugging Face expert models" in tool.description


@pytest.mark.slow
async def test_an_agent_calls_one_expert_model_as_a_tool(tmp_path: Path):
    build_tiny_model("text-classification", tmp_path / "models" / "tiny-text-classification")
    catalog = LocalFolderCatalog([tmp_path / "models"])
    runners = [LocalTransformersRunner(torch_threads=1)]
    (tool,) = catalog_tools(catalog, runners, ["text-classification"], tmp_path / "artifacts")
    agent = agent_calling(tool.name, {"text": "what a fine day"}, [tool])

    messages = (await agent.ainvoke({"messages": [("user", "is 'what a fine day' positive?")]}))["messages"]

    reply = next(message for message in messages if isinstance(message, ToolMessage))
    assert reply.status == "success" and reply.name == "tiny-text-classification"
    assert reply.content == reply.artifact.text and reply.artifact.text  # the tiny model's label (noise) as text
    assert messages[-1].content == FINAL
