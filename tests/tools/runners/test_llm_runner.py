"""The controller LLM as the expert of last resort for text tasks."""

from pathlib import Path

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import Field

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.runners.llm_runner import LLMRunner


class Recording(GenericFakeChatModel):
    seen: list = Field(default_factory=list)

    async def ainvoke(self, messages, *args, **kwargs):
        self.seen.append(messages)
        return await super().ainvoke(messages, *args, **kwargs)


async def test_llm_cards_cover_its_text_tasks_and_run_with_the_instruction(tmp_path: Path):
    llm = Recording(messages=iter([AIMessage(" Bonjour le monde. ")]))
    runner = LLMRunner(llm)
    cards = {card.task: card for card in runner.cards()}
    assert set(cards) == {"summarization", "translation", "text-generation", "conversational"}
    assert all(runner.can_run(card) and card.source == "llm" and card.downloads == 0 for card in cards.values())
    out = await runner.run(
        cards["translation"], "translation", {"text": "Hello world.", "language": "French"}, ArtifactStore(tmp_path, 0)
    )
    assert out.text == "Bonjour le monde."
    system, human = llm.seen[0]
    assert "into French" in system.text and human.text == "Hello world."


def test_another_runners_cards_are_not_its_own():
    from hugginggraph.tools.catalog import ModelCard

    runner = LLMRunner(GenericFakeChatModel(messages=iter([])))
    assert not runner.can_run(ModelCard(id="org/bart", task="summarization"))
    assert not runner.can_run(ModelCard(id="other-llm/summarization", task="summarization", library="langchain"))
