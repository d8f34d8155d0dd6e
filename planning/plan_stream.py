"""The planner's first reply read token by token (`PlanStream`, a LangChain callback on that call): each time a task
of the plan is whole (the next one has begun), the whole tasks so far are handed on, for the early starts of
dispatch/early_starts.py, which the planning stage wires to it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.utils.json import parse_partial_json
from pydantic_core import from_json


def whole_tasks(text: str, reply_plan: Callable[[Any], list[Any]]) -> list[Any]:
    """The tasks of a partly written plan that are whole: every one but the last written so far, which may still
    be growing. `reply_plan` finds the task list in the parsed reply (a bare list, or under `tasks`)."""
    starts = [at for at in (text.find("["), text.find("{")) if at >= 0]
    if not starts:
        return []
    try:  # from the first bracket: a plain reply may say something first
        items = reply_plan(_partial_json(text[min(starts) :]))
    except ValueError:  # not JSON (yet), or no task list in it
        return []
    return items[:-1]


def _partial_json(text: str) -> Any:
    """The value a JSON prefix holds so far: pydantic-core's parser, which reads a prefix in one pass in Rust, and
    for what it refuses (a raw newline inside a string) LangChain's lenient one, which closes the prefix character
    by character in Python: the reply so far is parsed again at each task."""
    try:
        return from_json(text, allow_partial=True)
    except ValueError:
        return parse_partial_json(text)


EARLY_TASKS = 10
"""How many of a plan's first tasks are looked at while it is written, as many as a constrained plan may hold
(`planning.MAX_PLANNED_TASKS`): the reply so far is parsed again for each, so a longer plan's later tasks wait for
the execution stage rather than make every one of its tasks cost more."""


class PlanStream(BaseCallbackHandler):
    """Reads the planning call's tokens and hands each longer run of whole tasks to `on_tasks`."""

    run_inline = True
    """Called on the event loop, in token order."""

    def __init__(self, on_tasks: Callable[[list[Any]], None], reply_plan: Callable[[Any], list[Any]]) -> None:
        super().__init__()
        self.on_tasks = on_tasks
        self.reply_plan = reply_plan
        self.text = ""
        self.whole = 0

    def on_llm_new_token(self, token: str | list[str | dict[str, Any]], **kwargs: Any) -> None:
        if not isinstance(token, str):  # content blocks: not the text of a plan
            return
        self.text += token
        if "{" not in token or self.whole >= EARLY_TASKS:  # a task is whole only once the next one begins
            return
        items = whole_tasks(self.text, self.reply_plan)
        if len(items) > self.whole:
            self.whole = len(items)
            self.on_tasks(items)
