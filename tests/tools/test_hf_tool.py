"""Models as LangChain tools: schema from the task, the runner behind, artifacts handed over."""

from pathlib import Path

import pytest
from conftest import echo
from langchain_core.messages import ToolMessage

from hugginggraph.testing import ScriptedRunner
from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog
from hugginggraph.tools.hf_tool import catalog_tools, model_tool, tool_name
from hugginggraph.tools.runners.base import RunnerOutput


async def draw(card, task, inputs, artifacts) -> RunnerOutput:
    from PIL import Image

    artifact = artifacts.save_image(Image.new("RGB", (2, 2)), "drawing")
    return RunnerOutput(text=f"drew {inputs['text']}", artifacts=[artifact])


def test_names_and_schemas_follow_the_model_and_its_task(tmp_path: Path):
    card = CatalogEntry(id="org/vilt-b32.vqa", task="visual-question-answering", description="Answers questions.")
    tool = model_tool(card, ScriptedRunner({}), tmp_path)
    assert tool.name == tool_name(card.id) == "org_vilt-b32_vqa"
    assert set(tool.args) == {"image", "text"}
    assert "visual-question-answering" in tool.description and "Answers questions." in tool.description


async def test_a_tool_call_returns_text_and_the_runner_output_as_artifact(tmp_path: Path):
    tool = model_tool(CatalogEntry(id="painter", task="text-to-image"), ScriptedRunner({"painter": draw}), tmp_path)
    message = await tool.ainvoke({"type": "tool_call", "id": "1", "name": tool.name, "args": {"text": "a cat"}})
    assert isinstance(message, ToolMessage)
    (artifact,) = message.artifact.artifacts
    assert Path(artifact.path).is_file() and artifact.path.startswith(str(tmp_path))
    assert message.content == f"drew a cat\nimage: {artifact.path}"
    second = await tool.ainvoke({"type": "tool_call", "id": "2", "name": tool.name, "args": {"text": "a dog"}})
    assert second.artifact.artifacts[0].path != artifact.path  # one file name per call


def test_sync_invoke_works_outside_an_event_loop(tmp_path: Path):
    runner = ScriptedRunner({"m": echo()})
    tool = model_tool(CatalogEntry(id="m", task="summarization"), runner, tmp_path)
    assert tool.invoke({"text": "long text"}) == "m(long text)"


def test_missing_arguments_are_refused_by_the_schema(tmp_path: Path):
    tool = model_tool(CatalogEntry(id="m", task="summarization"), ScriptedRunner({"m": echo()}), tmp_path)
    with pytest.raises(ValueError):
        tool.invoke({})


def test_catalog_tools_offer_the_top_runnable_models_per_task(tmp_path: Path):
    catalog = InMemoryCatalog(
        [
            CatalogEntry(id="best", task="summarization", downloads=9),
            CatalogEntry(id="unrunnable", task="summarization", downloads=99),
            CatalogEntry(id="next", task="summarization", downloads=5),
            CatalogEntry(id="cls", task="text-classification"),
        ]
    )
    runner = ScriptedRunner({"best": echo(), "next": echo(), "cls": echo()})
    tools = catalog_tools(catalog, [runner], ["summarization", "text-classification"], tmp_path, top_k=2)
    assert [tool.name for tool in tools] == ["best", "next", "cls"]
