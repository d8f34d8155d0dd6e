"""Text tasks done by the controller LLM itself, as HuggingGPT did when no better expert model was at hand.

Its cards (one per task it can do, source `llm`) go into the catalog after every real model, so the LLM is the
last candidate and the fallback of last resort for every text-in, text-out task: classification, entities,
extractive answers, summaries, translation, generation and conversation. How each is asked and read is in
`llm_tasks.py`; the prompts are data (prompts/llm_tasks.json).
"""

from __future__ import annotations

from string import Template

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from hugginggraph.prompts import load_json
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.llm_json import ask_json, ask_text
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.llm_tasks import TEXT_TASKS, parse_reply
from hugginggraph.tools.runners.outputs import to_runner_output

LIBRARY = "langchain"

CONTROLLER_NAME = "controller-llm"
"""The default name of the controller as an expert, the first part of its cards' ids."""


class TaskPrompt(BaseModel):
    """One task's prompt: `string.Template`s filled with what the task reads (`TextTask.values`)."""

    system: str
    user: str


def controller_tasks() -> list[str]:
    """The task types the controller LLM does itself, as `LLMRunner` offers them."""
    return list(load_json("llm_tasks"))


class LLMRunner:
    """Runs the `llm` cards with a chat model. Arguments as the other runners read them (`task_inputs`), plus
    `language` for translation (default English) and `length` for summarization."""

    def __init__(self, llm: BaseChatModel, name: str = CONTROLLER_NAME) -> None:
        self.llm = llm
        self.name = name
        self.prompts = {task: TaskPrompt.model_validate(prompt) for task, prompt in load_json("llm_tasks").items()}

    def cards(self) -> list[CatalogEntry]:
        """One card per task this runner can do, named `<name>/<task>`."""
        return [
            CatalogEntry(
                id=f"{self.name}/{task}",
                task=task,
                description=f"The controller LLM doing {task} itself; use it when no dedicated model fits.",
                library=LIBRARY,
                source="llm",
            )
            for task in self.prompts
        ]

    def can_run(self, card: CatalogEntry) -> bool:
        return card.library == LIBRARY and card.id == f"{self.name}/{card.task}" and card.task in self.prompts

    def messages(self, task: str, inputs: dict[str, str]) -> list[BaseMessage]:
        """The system instruction and the user's turn for `task` on `inputs`."""
        prompt, values = self.prompts[task], TEXT_TASKS[task].values(inputs)
        system, user = (Template(text).substitute(values) for text in (prompt.system, prompt.user))
        return [SystemMessage(system), HumanMessage(user)]

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        """The task done by the controller; raises `ReplyRejected` (the task fails) when the reply is unusable."""
        kind, messages = TEXT_TASKS[task], self.messages(task, inputs)
        schema = kind.schema(inputs)
        if schema is None:
            reply: object = await ask_text(self.llm, messages)
        else:
            answer = await ask_json(self.llm, messages, schema)
            reply = answer.parsed if answer.parsed is not None else parse_reply(answer.text, schema)
        return to_runner_output(kind.output(reply, inputs), artifacts, task=task, inputs=inputs)
