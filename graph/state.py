"""The typed state of one HuggingGraph run, and the pydantic models that travel in it.

The data path reads as the story: `request` → `raw_plan` → `plan` → `choices` → `results` → `answer`.
Each key says which node writes it. Keys written by parallel selection branches merge through reducers.

Input keys stay on a thread until a later input sets them again, like every state key: callers that mix modes or
approval on one thread pass `mode` and `approval` with every request (`runs.arun` and the CLI always do).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final, Literal

from langchain_core.messages import AnyMessage, BaseMessage
from langgraph.graph.message import add_messages
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from hugginggraph.tools.artifacts import Artifact

TaskStatus = Literal["ok", "failed", "skipped"]
Mode = Literal["full", "tasks", "results"]


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
    random_weights: bool = False
    """The model that made the output has random weights (asked for with `random_models`): the output is noise,
    and every display and the answer say so."""
    attempts: list[str] = Field(default_factory=list)
    """One line per failed attempt before the outcome, e.g. `model-a: timed out after 30 s`."""
    started_at: float | None = None
    finished_at: float | None = None

    @property
    def duration_s(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at


def turn_number(messages: Sequence[BaseMessage]) -> int:
    """Which turn of its thread a run is, from 1: the requests in `messages`, the run's own included (the planning
    stage adds it). A resumed or re-run turn counts the same, so it writes where it started."""
    return sum(message.type == "human" for message in messages)


def merge_by_task_id(left: dict[int, Any] | None, right: dict[int, Any] | None) -> dict[int, Any]:
    """Reducer for per-task maps written by parallel branches: later writes win per task id."""
    return {**(left or {}), **(right or {})}


class LLMUsage(TypedDict):
    """What the controller LLM was asked for in one run (see graph/budget.py for what is counted)."""

    calls: int
    tokens: int
    """Total tokens as the model reported them; a reply that reports none counts 0."""


NO_USAGE: Final[LLMUsage] = {"calls": 0, "tokens": 0}
"""Usage before the first call (never mutated: the reducer and the meter build new values)."""


def add_usage(left: LLMUsage | None, right: LLMUsage | None) -> LLMUsage:
    """Reducer for usage written by parallel branches: the sums."""
    left, right = left or NO_USAGE, right or NO_USAGE
    return {"calls": left["calls"] + right["calls"], "tokens": left["tokens"] + right["tokens"]}


def first_reason(left: str | None, right: str | None) -> str | None:
    """Reducer for `stopped`: None clears it (a new turn); otherwise the first reason stands, since parallel
    branches may each find one, and a later stage's reason is a consequence of the first."""
    return None if right is None else left if left is not None else right


class InputState(TypedDict, total=False):
    """What a caller gives a run."""

    request: str
    """The user's request in natural language."""
    files: list[str]
    """Input files the request may refer to (paths relative to the workspace, or absolute)."""
    mode: Mode
    """How far the run goes (absent: "full"). "tasks": plan and validate, then end (HuggingGPT's /tasks);
    "results": also choose and run the models, but write no answer (/results); "full": everything (/hugginggpt)."""
    approval: bool
    """Pause after model selection for the user to approve, reject or edit the plan (the `approve` node)."""


class OutputState(TypedDict, total=False):
    """What a run returns."""

    plan: list[Task]
    plan_repairs: list[str]
    plan_error: str | None
    direct_answer: bool
    """Written by plan: True when the request was found to need no model (planning/direct_gate.py), so no plan was
    asked for and the controller answers it itself; False when the planner was asked (an empty plan then is its
    own choice)."""
    choices: dict[int, ModelChoice]
    results: dict[int, TaskResult]
    answer: str
    stopped: str | None
    """Why the run stopped before the end (a budget in `Limits`, the user's rejection, a controller that cannot be
    reached); None when it did not."""
    llm_usage: LLMUsage
    """Calls to the controller LLM and their tokens in this run, the budgets' measure."""
    replanned: int | None
    """None until the replan stage has run this turn (nodes/replanning.py), then how many tasks it added. It runs
    at most once a turn, so a replacement that fails too ends the story."""


class GraphState(InputState, OutputState, total=False):
    """The whole state. Written by: plan (`messages`, `raw_plan`, `plan_error`, `deadline`), validate (`plan`,
    `plan_repairs`, `results` for tasks doomed before they run), select (`choices`, `results` when no model
    exists), approve (`plan`, `plan_repairs`, `choices` when the user edits; `deadline`), execute (`results`),
    replan (`replanned`, `raw_plan`), respond (`answer`, `messages`). Any of them may write `stopped`; those that ask
    the LLM add to `llm_usage`."""

    messages: Annotated[list[AnyMessage], add_messages]
    """The chat on this thread: earlier requests and answers, the history the planner sees."""
    raw_plan: list[Any]
    """The planner's output as parsed JSON, before validation."""
    choices: Annotated[dict[int, ModelChoice], merge_by_task_id]
    results: Annotated[dict[int, TaskResult], merge_by_task_id]
    stopped: Annotated[str | None, first_reason]
    llm_usage: Annotated[LLMUsage, add_usage]
    deadline: float | None
    """When the run must end (a `time.time()` value) under `Limits.run_timeout_s`; None without a limit."""


class SelectionInput(TypedDict):
    """What one parallel selection branch receives."""

    request: str
    task: Task
    llm_usage: LLMUsage | None
    """The run's controller usage when selection began. Parallel branches cannot see each other's calls, so what
    the call budget has left then is split among them (graph/budget.py)."""
    branch: int
    """This branch's place among the `branches` started together, which sets its share."""
    branches: int
