"""Test doubles for the controller LLM and for expert models, for unit tests, benchmarks and notebooks.

`ScriptedChatModel` answers each HuggingGraph stage with a scripted reply, so the real graph can run without an
LLM. `ScriptedRunner` runs "models" that are plain async functions. `ScriptedAgentModel` plays the model of an agent
that calls HuggingGraph's tools. None is used by the graph itself.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.base import RunnerOutput

Stage = Literal["plan", "select", "respond", "chat"]
Reply = str | Callable[[Sequence[BaseMessage]], str]

_WORD_STARTS = re.compile(r"(?<=\s)(?=\S)")


def stage_of(messages: Sequence[BaseMessage]) -> Stage:
    """Which HuggingGraph stage sent these messages, read from the prompts' opening words."""
    first = messages[0].text if messages else ""
    if first.startswith("You are the planner of HuggingGraph"):
        return "plan"
    if "choose the most suitable model" in first:
        return "select"
    if first.startswith("You are HuggingGraph. You answered"):
        return "respond"
    return "chat"


class ScriptedChatModel(BaseChatModel):
    """Replies per stage: a fixed text or a function of the messages. Records the stages it was asked for."""

    plan: list[dict[str, Any]] | str = Field(default_factory=list)
    """The plan to return (a list is sent as JSON; a string is sent as is, to test parsing)."""
    select: Reply = '{"model_id": "", "reason": "scripted"}'
    respond: Reply = "Done."
    chat: Reply = "Hello! I can run expert models on text, images and audio."
    calls: list[Stage] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _reply(self, messages: Sequence[BaseMessage]) -> str:
        stage = stage_of(messages)
        self.calls.append(stage)
        if stage == "plan":
            return self.plan if isinstance(self.plan, str) else json.dumps(self.plan)
        reply = {"select": self.select, "respond": self.respond, "chat": self.chat}[stage]
        return reply(messages) if callable(reply) else reply

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self._reply(messages)))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The reply word by word (each word with the spaces after it), as a streaming model sends its tokens.
        LangChain streams only when asked to (`stream_mode="messages"`, `astream`); `invoke` stays one call."""
        for word in _WORD_STARTS.split(self._reply(messages)):
            yield ChatGenerationChunk(message=AIMessageChunk(content=word))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._stream(messages, stop):
            yield chunk


class ScriptedAgentModel(GenericFakeChatModel):
    """An agent's chat model replying with `messages` in turn, tool calls included (`AIMessage(tool_calls=...)`).
    It accepts `bind_tools`, which agents call first, and ignores the tools: the script already names them."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedAgentModel:
        return self


ScriptedModel = Callable[[ModelCard, str, dict[str, str], ArtifactStore], Awaitable[RunnerOutput]]


class ScriptedRunner:
    """Runs every model whose id it has a script for; records each call as (model id, task)."""

    def __init__(self, scripts: dict[str, ScriptedModel]) -> None:
        self.scripts = scripts
        self.calls: list[tuple[str, str]] = []

    def can_run(self, card: ModelCard) -> bool:
        return card.id in self.scripts

    async def run(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        self.calls.append((card.id, task))
        return await self.scripts[card.id](card, task, inputs, artifacts)
