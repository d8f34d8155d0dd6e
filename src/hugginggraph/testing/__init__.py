"""Test doubles for the controller LLM and for expert models, for unit tests, benchmarks and notebooks.

`ScriptedChatModel` answers each HuggingGraph stage with a scripted reply, so the real graph can run without an
LLM. `ScriptedRunner` runs "models" that are plain async functions. `ScriptedAgentModel` plays the model of an agent
that calls HuggingGraph's tools. `FaultyRunner` fails chosen tasks in chosen ways, for fault-injection tests. None is
used by the graph itself.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import re
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import Field

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput

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

    plan: list[dict[str, Any]] | Reply = Field(default_factory=list)
    """The plan to return (a list is sent as JSON; a string is sent as is, to test parsing; a function of the
    messages writes a plan for each request, for runs that must be told apart)."""
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
        reply = (
            self.plan if stage == "plan" else {"select": self.select, "respond": self.respond, "chat": self.chat}[stage]
        )
        if isinstance(reply, list):
            return json.dumps(reply)
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


ScriptedModel = Callable[[CatalogEntry, str, dict[str, str], ArtifactStore], Awaitable[RunnerOutput]]


class ScriptedRunner:
    """Runs every model whose id it has a script for; records each call as (model id, task)."""

    def __init__(self, scripts: dict[str, ScriptedModel]) -> None:
        self.scripts = scripts
        self.calls: list[tuple[str, str]] = []

    def can_run(self, card: CatalogEntry) -> bool:
        return card.id in self.scripts

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        self.calls.append((card.id, task))
        return await self.scripts[card.id](card, task, inputs, artifacts)


Fault = Literal["raise", "unloadable", "hang", "wrong_type", "exit", "sigkill"]
"""How a `FaultyRunner` fails a task: raise, fail to load its model (`ModelLoadError`), never return, return
something other than a `RunnerOutput`, or end its process (`os._exit`, SIGKILL to itself) in the middle of the
call."""

PROCESS_FAULTS: tuple[Fault, ...] = ("exit", "sigkill")
"""The faults that end the process: only inside a `SubprocessRunner`'s child."""


class FaultyRunner:
    """Runs the models in `models` (None: every model); the tasks named in `faults` (task id → fault) fail that way
    on every call, the others echo their text input as `<model id>#<task id>(<text>)`.

    It is picklable, so a `SubprocessRunner` can build one in its child: `partial(FaultyRunner, faults)`. A process
    fault outside such a child would end the caller's own process, so it raises instead."""

    def __init__(self, faults: Mapping[int, Fault], models: Collection[str] | None = None) -> None:
        self.faults = dict(faults)
        self.models = None if models is None else frozenset(models)

    def can_run(self, card: CatalogEntry) -> bool:
        return self.models is None or card.id in self.models

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        fault = self.faults.get(artifacts.task_id)
        if fault in PROCESS_FAULTS and multiprocessing.parent_process() is None:
            raise RuntimeError(f"the fault {fault!r} would end this process: inject it only behind a SubprocessRunner")
        if fault == "raise":
            raise RuntimeError(f"injected failure in task {artifacts.task_id}")
        if fault == "unloadable":
            raise ModelLoadError(f"could not load {card.id}: injected")
        if fault == "hang":
            await asyncio.Event().wait()
        if fault == "wrong_type":
            return cast(RunnerOutput, f"{card.id} returned text, not a RunnerOutput")
        if fault == "exit":
            os._exit(3)
        if fault == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        return RunnerOutput(text=f"{card.id}#{artifacts.task_id}({inputs.get('text', '')})")
