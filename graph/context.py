"""The run-time context: everything a node needs that is not state — the LLM, the catalog, the runners, limits.

It reaches nodes as `Runtime[HuggingGraphContext]` (LangGraph's `context_schema`), never through globals, so one
compiled graph serves many configurations at once. It is not checkpointed: pass it again when resuming.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar, cast, runtime_checkable

from langchain_core.language_models import BaseChatModel
from langgraph.config import get_config
from langgraph.runtime import Runtime

from hugginggraph.paths import default_data_dir
from hugginggraph.tools.artifacts import run_folder
from hugginggraph.tools.catalog import CatalogEntry, ModelCatalog
from hugginggraph.tools.demo_bank import DemoBank, default_demo_bank
from hugginggraph.tools.runners.base import ModelRunner
from hugginggraph.tools.started_calls import EarlyStarts
from hugginggraph.tools.tasks import TASKS, TaskSpec


@dataclass(frozen=True)
class Limits:
    """Bounds on one run. A budget that runs out ends the run cleanly: the state's `stopped` says which, the
    answer reports what was done (graph/budget.py). None means no limit, the default for every budget."""

    top_k: int = 5
    """How many ranked candidates the LLM chooses among (and the executor may fall back to)."""
    task_timeout_s: float = 300.0
    """Wall-clock limit for one model call."""
    attempts_per_model: int = 2
    """Calls of one model before moving to the next candidate (a model that fails to load gets one)."""
    description_chars: int = 200
    """How much of each model description the selection prompt shows."""
    max_tasks: int | None = None
    """The most tasks a plan may hold: a longer one is refused by validation, and no model runs."""
    max_llm_calls: int | None = None
    """Controller LLM calls per run (planning, selection, the answer; not the LLM as an expert model). A call
    past it is not made: the run stops, and the answer is the plain summary of what was done."""
    max_llm_tokens: int | None = None
    """Controller tokens per run, as the model reports them. Counted when a call ends, so no call starts once
    it is reached; calls already under way finish."""
    run_timeout_s: float | None = None
    """Wall-clock limit per run, checked between stages. In execution, tasks not started by then are skipped and
    running ones are cut off at it. Waiting for the user's approval does not count: their answer starts a new
    run (as a resume is on the LangGraph server), with the whole limit."""
    max_concurrent_tasks: int | None = None
    """Model executions at once; the others wait for a slot (e.g. one GPU, or an endpoint's rate limit)."""


StepsAid = Literal["none", "inline", "first"]
"""How the planner says the request's steps in words: not at all, as the first field of each task, or as a list
before the tasks."""


StepChooserAid = Literal["trained", "neighbours"]
"""What judges each step's task type for the step vote."""


@dataclass(frozen=True)
class PlanningAids:
    """What the planner is given besides the request; each aid was measured on TaskBench (docs/planning.md)."""

    demos: Literal["none", "static", "retrieved"] = "retrieved"
    """Few-shot demos: none, the bank's first ones, or the ones most similar to the request (MiniLM)."""
    demo_count: int = 4
    modalities: bool = True
    """Show each task type's input and output kinds in the task list, not only its name and what it does."""
    constrained: bool = True
    """Structured output names the task types as an enum, so a constrained decoder cannot invent one."""
    fix_pass: bool = True
    """When validation finds tasks that cannot run, show the planner the problems and ask once for a fixed plan."""
    steps: StepsAid = "inline"
    """Have the planner say each step of the request in words before it names task types (docs/planning.md)."""
    step_vote: bool = True
    """With steps (inline, or listed first with one per task) and retrieved demos (the vote uses the same embedder):
    the demo bank's labelled steps most like a task's step vote on its task type; a clear winner whose media inputs
    the task has replaces the controller's choice."""
    step_chooser: StepChooserAid = "trained"
    """What judges a step for the vote: a classifier trained on labelled step phrases (`tools/step_chooser.py`;
    the bank's neighbours when its weights are absent), or the bank's nearest labelled steps."""
    back_references: bool = True
    """A text-only task given words that stand for an earlier result ("the summary", or its own step repeated)
    reads the nearest earlier text output instead (planning/back_references.py)."""
    direct_gate: bool = True
    """With retrieved demos (the gate uses the same embedder): a request that brings no file and is more like the
    labelled requests needing no model (greetings, facts, advice) than the demos is answered without a plan and
    without the planner's call (planning/direct_gate.py)."""
    replan: bool = True
    """When tasks fail or are skipped, show the planner what failed and why, and run the one replacement it may
    propose for the failed part (nodes/replanning.py); finished results are reused, never run again. On since
    it answered more requests whose first task failed, and none fewer (benchmarks/replan.py)."""


Stage = Literal["plan", "select", "respond"]


@dataclass(frozen=True)
class HuggingGraphContext:
    """The controller LLM and the expert models of a run."""

    llm: BaseChatModel
    """The controller: plans, chooses models, writes the answer (unless a stage has its own below)."""
    catalog: ModelCatalog
    runners: Sequence[ModelRunner]
    """Tried in order; the first that can run a model runs it."""
    workspace: Path = field(default_factory=Path.cwd)
    """Relative input file paths are resolved here."""
    artifacts_dir: Path = field(default_factory=lambda: default_data_dir() / "artifacts")
    """Each run writes its outputs to a sub-folder named after its thread id."""
    limits: Limits = field(default_factory=Limits)
    stage_llms: Mapping[Stage, BaseChatModel] = field(default_factory=dict)
    """Per-stage controllers, e.g. a stronger model for planning than for the answer."""
    tasks: Mapping[str, TaskSpec] = field(default_factory=lambda: TASKS)
    """The task types the planner may use (Hub task ids by default)."""
    planning: PlanningAids = field(default_factory=PlanningAids)
    demo_bank: DemoBank = field(default_factory=default_demo_bank)
    start_tasks_early: bool = True
    """Start a task while the planner is still writing the rest of the plan, once the task is whole, valid, and its
    model needs no question to the controller (dispatch/early_starts.py). Never with approval, in mode "tasks", or
    with `Limits.max_concurrent_tasks` or `Limits.run_timeout_s`, which the execution stage keeps."""
    early_starts: EarlyStarts = field(default_factory=EarlyStarts)
    """The calls so started, until the execution stage takes them."""

    def llm_for(self, stage: Stage) -> BaseChatModel:
        return self.stage_llms.get(stage, self.llm)

    def runner_for(self, card: CatalogEntry) -> ModelRunner | None:
        return next((runner for runner in self.runners if runner.can_run(card)), None)


@runtime_checkable
class ContextOptions(Protocol):
    """JSON-friendly options that build a context, for callers that cannot hand over live objects: the LangGraph
    server passes each run's `context` as JSON, which the graph's options schema (`hugginggraph.server.
    ServerOptions`) turns into options. Declared here so the graph needs no import of whoever implements it."""

    def build(self) -> HuggingGraphContext: ...


Node = TypeVar("Node", bound=Callable[..., Awaitable[Any]])


def given_context(node: Node) -> Node:
    """`node` given the run's HuggingGraphContext whatever the caller passed: the one place where options
    (`ContextOptions`) become a context, so every node reads `runtime.context` as a HuggingGraphContext. Options are
    built in a thread, since the first build loads models and reads folders, which must not stall the server's
    loop; later builds come from the options' cache."""

    @functools.wraps(node)
    async def run(value: Any, runtime: Runtime[Any]) -> Any:
        context = runtime.context
        if isinstance(context, ContextOptions):
            context = await asyncio.to_thread(context.build)
        elif not isinstance(context, HuggingGraphContext):
            raise TypeError(
                f"the run's context is {type(context).__name__}: pass context=HuggingGraphContext(...), or options "
                "such as hugginggraph.server.ServerOptions() to build one from the environment as the CLI does"
            )
        return await node(value, runtime.override(context=context))

    return cast(Node, run)


def current_thread_id() -> str:
    """The thread of the graph step that is running: its config's `thread_id` ("default" without one)."""
    return str(get_config()["configurable"].get("thread_id", "default"))


def thread_folder(context: HuggingGraphContext) -> Path:
    """The running thread's folder under the context's `artifacts_dir` (`run_folder`): its turns write there, and a
    plan may read what its earlier turns made."""
    return run_folder(context.artifacts_dir, current_thread_id())
