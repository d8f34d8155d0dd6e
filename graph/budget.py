"""The budgets of one run (`Limits`): controller LLM calls and tokens, and the wall-clock deadline.

LLM usage is counted in one place, `LLMMeter`: a LangChain callback handler that a node installs for the length
of its stage (`with LLMMeter(...)`). Every chat-model call made inside passes through it, structured or plain,
streamed or not, planning's fix pass and `ask_json`'s plain retry included, without the node handing callbacks
to each call (which would replace LangGraph's own, and with them the streaming of the answer). A call the budget
no longer allows is refused before it is sent: the meter raises `LLMBudgetSpent`, and the stage ends the run
cleanly. Each node adds what it counted to the state's `llm_usage`, so a run paused for approval and resumed in
another process still knows what it has spent.

Tokens are the `usage_metadata` the model reports. OpenAI-compatible servers report them, and so does the embedded
llama.cpp controller (tools/llama_cpp/local_llama.py), streamed replies included. A reply the answer stage ends
early (its lead, after two sentences) reports none: its call counts, its tokens do not.

The deadline is a `time.time()` value in the state, so it survives checkpoints; the nodes check it between
stages and execution enforces it (nodes/execution.py).
"""

from __future__ import annotations

import time
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook

from hugginggraph.graph.context import Limits
from hugginggraph.graph.state import NO_USAGE, LLMUsage

_active_meter: ContextVar[LLMMeter | None] = ContextVar("hugginggraph_llm_meter", default=None)
# LangChain adds the handler in this variable to every callback manager configured while it is set: the same
# mechanism as its own `get_usage_metadata_callback`, registered once here rather than once per use.
register_configure_hook(_active_meter, inheritable=True)


class LLMBudgetSpent(Exception):
    """The run's controller LLM budget allows no further call; the message says which limit."""


def _left(limit: int | None, spent: int) -> int | None:
    return None if limit is None else max(limit - spent, 0)


def calls_left(limits: Limits, spent: LLMUsage | None) -> int | None:
    """Controller calls the run may still make (None: no limit)."""
    return _left(limits.max_llm_calls, (spent or NO_USAGE)["calls"])


def tokens_left(limits: Limits, spent: LLMUsage | None) -> int | None:
    """Controller tokens the run may still use (None: no limit)."""
    return _left(limits.max_llm_tokens, (spent or NO_USAGE)["tokens"])


def split_calls(left: int | None, parts: int) -> list[int | None]:
    """`left` calls shared among `parts` parallel branches, as evenly as can be, earlier branches first."""
    if left is None:
        return [None] * parts
    share, extra = divmod(left, parts) if parts else (0, 0)
    return [share + (i < extra) for i in range(parts)]


class LLMMeter(BaseCallbackHandler):
    """Counts one node's controller calls and their tokens, and refuses the call its allowance does not cover.

    `calls_left` and `tokens_left` are what the run's budget has left when the node starts (None: no limit).
    Use it as a context manager around the node's LLM calls.
    """

    raise_error = True
    """A refused call must stop, not be logged and sent anyway (LangChain's default for handler errors)."""
    run_inline = True
    """Counted on the event loop, in call order."""

    def __init__(self, limits: Limits, calls_left: int | None, tokens_left: int | None) -> None:
        super().__init__()
        self.limits = limits
        self.calls_left = calls_left
        self.tokens_left = tokens_left
        self.calls = 0
        self.tokens = 0
        self._token: Token[LLMMeter | None] | None = None

    @classmethod
    def for_run(cls, limits: Limits, spent: LLMUsage | None) -> LLMMeter:
        """A meter for a node that has the run's whole remaining budget (every stage but parallel selection)."""
        return cls(limits, calls_left(limits, spent), tokens_left(limits, spent))

    @classmethod
    def for_branch(cls, limits: Limits, spent: LLMUsage | None, branch: int, branches: int) -> LLMMeter:
        """A meter for one of `branches` parallel branches: its share of the calls left, so that together they
        cannot pass the limit. Tokens are known only once a call ends, so each may use what is left."""
        share = split_calls(calls_left(limits, spent), branches)[branch]
        return cls(limits, share, tokens_left(limits, spent))

    @property
    def usage(self) -> LLMUsage:
        return {"calls": self.calls, "tokens": self.tokens}

    def refusal(self) -> str | None:
        """Why no further call is allowed; None while one is."""
        if self.calls_left is not None and self.calls >= self.calls_left:
            return f"the run has used the {self.limits.max_llm_calls} controller LLM calls Limits.max_llm_calls allows"
        if self.tokens_left is not None and self.tokens >= self.tokens_left:
            return f"the run has used the {self.limits.max_llm_tokens} controller tokens Limits.max_llm_tokens allows"
        return None

    def check(self) -> None:
        """Raise LLMBudgetSpent when no further call is allowed. A stage checks before it asks, so that the
        refusal does not go through LangChain's handler-error log."""
        if reason := self.refusal():
            raise LLMBudgetSpent(reason)

    def on_chat_model_start(self, serialized: dict[str, Any], messages: list[list[Any]], **kwargs: Any) -> None:
        self.check()
        self.calls += 1

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                message = generation.message if isinstance(generation, ChatGeneration) else None
                if isinstance(message, AIMessage) and message.usage_metadata:
                    self.tokens += message.usage_metadata.get("total_tokens", 0)

    def __enter__(self) -> LLMMeter:
        self._token = _active_meter.set(self)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._token is not None:
            _active_meter.reset(self._token)
            self._token = None


def llm_budget_refusal() -> str | None:
    """Why the budget of the node running now allows no further controller call; None when it does, and outside
    the graph (the evaluator plans with no budget)."""
    meter = _active_meter.get()
    return meter.refusal() if meter is not None else None


def deadline_for(limits: Limits) -> float | None:
    """When a run starting now must end (a `time.time()` value), or None without a time limit."""
    return None if limits.run_timeout_s is None else time.time() + limits.run_timeout_s


def time_left(deadline: float | None) -> float | None:
    return None if deadline is None else deadline - time.time()


def time_limit_reason(limits: Limits) -> str:
    seconds = f" of {limits.run_timeout_s:g} s" if limits.run_timeout_s is not None else ""
    return f"the run reached its time limit{seconds}, Limits.run_timeout_s"


def out_of_time(deadline: float | None, limits: Limits) -> str | None:
    """Why the run must stop now (its deadline has passed); None while there is time, or without a deadline."""
    left = time_left(deadline)
    return time_limit_reason(limits) if left is not None and left <= 0 else None
