"""Text tasks done by the controller LLM itself, as HuggingGPT did when no better expert model was at hand.

Its cards (one per task it can do, source `llm`) go into the catalog after every real model, so the LLM is the
last candidate and the fallback of last resort for summarization, translation, generation and conversation.
"""

from __future__ import annotations

from string import Template

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from hugginggraph.prompts import load_json
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.base import RunnerOutput

LIBRARY = "langchain"


class LLMRunner:
    """Runs the `llm` cards with a chat model; `language` (for translation) defaults to English."""

    def __init__(self, llm: BaseChatModel, name: str = "controller-llm") -> None:
        self.llm = llm
        self.name = name
        self.instructions: dict[str, str] = load_json("llm_tasks")

    def cards(self) -> list[ModelCard]:
        """One card per task this runner can do, named `<name>/<task>`."""
        return [
            ModelCard(
                id=f"{self.name}/{task}",
                task=task,
                description=f"The controller LLM doing {task} itself; use it when no dedicated model fits.",
                library=LIBRARY,
                source="llm",
            )
            for task in self.instructions
        ]

    def can_run(self, card: ModelCard) -> bool:
        return card.library == LIBRARY and card.id == f"{self.name}/{card.task}" and card.task in self.instructions

    async def run(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        instruction = Template(self.instructions[task]).safe_substitute(language=inputs.get("language", "English"))
        reply = await self.llm.ainvoke([SystemMessage(instruction), HumanMessage(inputs["text"])])
        return RunnerOutput(text=reply.text.strip())
