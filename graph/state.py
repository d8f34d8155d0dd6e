"""The typed state of one HuggingGraph run, and the pydantic models that travel in it.

The data path reads as the story: `request` → `raw_plan` → `plan` → `choices` → `results` → `answer`.
Each key says which node writes it. Keys written by parallel selection branches merge through reducers.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from hugginggraph.tools.artifacts import Artifact

TaskStatus = Literal["ok", "failed", "skipped"]


class Task(BaseModel):
    """One step of a validated plan, in HuggingGPT's format."""

    model_config = ConfigDict(frozen=True)

    id: int
    task: str
    """A Hub task id from the task registry (or an unknown name, which the task then fails on)."""
    dep: list[int] = Field(default_factory=list)
    """Ids of tasks that must succeed first; empty when the task depends on nothing (HuggingGPT's `[-1]`)."""
    args: dict[str, str] = Field(default_factory=dict)
    """Argument name (text/image/audio/video/...) → value; `<GENERATED>-k` names task k's output."""


class ModelChoice(BaseModel):
    """Which models a task will try, in order, and why."""

    task_id: int
    model_ids: list[str]
    """The chosen model first, then the other candidates by rank: the fallbacks if it fails."""
    reason: str
    asked_llm: bool
    """False when there was a single candidate and no question was worth an LLM call."""


class TaskResult(BaseModel):
    """How one task ended. Failures are values: a failed task never cancels its siblings."""

    task_id: int
    task: str
    status: TaskStatus
    text: str | None = None
    """The output as text (for images and audio: the file path)."""
    data: Any = None
    artifacts: list[Artifact] = Field(default_factory=list)
    error: str | None = None
    """Why the task failed or was skipped."""
    model_id: str | None = None
    attempts: list[str] = Field(default_factory=list)
    """One line per failed attempt before the outcome, e.g. `model-a: timed out after 30 s`."""
    started_at: float | None = None
    finished_at: float | None = None

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


def merge_by_task_id(left: dict[int, Any] | None, right: dict[int, Any] | None) -> dict[int, Any]:
    """Reducer for per-task maps written by parallel branches: later writes win per task id."""
    return {**(left or {}), **(right or {})}


class InputState(TypedDict, total=False):
    """What a caller gives a run."""

    request: str
    """The user's request in natural language."""
    files: list[str]
    """Input files the request may refer to (paths relative to the workspace, or absolute)."""


class OutputState(TypedDict, total=False):
    """What a run returns."""

    plan: list[Task]
    plan_repairs: list[str]
    plan_error: str | None
    choices: dict[int, ModelChoice]
    results: dict[int, TaskResult]
    answer: str


class GraphState(InputState, OutputState, total=False):
    """The whole state. Written by: plan (`messages`, `raw_plan`, `plan_error`), validate (`plan`,
    `plan_repairs`, `results` for tasks doomed before they run), select (`choices`, `results` when no model
    exists), execute (`results`), respond (`answer`, `messages`)."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The chat on this thread: earlier requests and answers, the history the planner sees."""
    raw_plan: list[Any]
    """The planner's output as parsed JSON, before validation."""
    choices: Annotated[dict[int, ModelChoice], merge_by_task_id]
    results: Annotated[dict[int, TaskResult], merge_by_task_id]


class SelectionInput(TypedDict):
    """What one parallel selection branch receives."""

    request: str
    task: Task
