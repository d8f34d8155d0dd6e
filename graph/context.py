"""The run-time context: everything a node needs that is not state — the LLM, the catalog, the runners, limits.

It reaches nodes as `Runtime[HuggingGraphContext]` (LangGraph's `context_schema`), never through globals, so one
compiled graph serves many configurations at once. It is not checkpointed: pass it again when resuming.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from langchain_core.language_models import BaseChatModel

from hugginggraph.graph.checkpoint import default_data_dir
from hugginggraph.tools.catalog import ModelCard, ModelCatalog
from hugginggraph.tools.demo_bank import DemoBank, default_demo_bank
from hugginggraph.tools.runners.base import ModelRunner
from hugginggraph.tools.tasks import TASKS, TaskSpec


@dataclass(frozen=True)
class Limits:
    """Bounds on one run."""

    top_k: int = 5
    """How many ranked candidates the LLM chooses among (and the executor may fall back to)."""
    task_timeout_s: float = 300.0
    """Wall-clock limit for one model call."""
    attempts_per_model: int = 2
    """Calls of one model before moving to the next candidate (a model that fails to load gets one)."""
    description_chars: int = 200
    """How much of each model description the selection prompt shows."""


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

    def llm_for(self, stage: Stage) -> BaseChatModel:
        return self.stage_llms.get(stage, self.llm)

    def runner_for(self, card: ModelCard) -> ModelRunner | None:
        return next((runner for runner in self.runners if runner.can_run(card)), None)
