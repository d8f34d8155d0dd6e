"""Stage 1, task planning: the controller LLM turns the request, the chat so far and the input files into a
plan in HuggingGPT's format. The plan is kept raw here; the validation stage checks and repairs it.

`Planner` is the whole of planning short of running the graph, so the TaskBench evaluator measures exactly what
the graph does. What helps a controller plan (demos, modalities, a constrained schema, a fix pass) is set by
`PlanningAids`; each aid's effect is measured in docs/planning.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal, cast, get_args

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.config import get_config, get_stream_writer
from langgraph.runtime import Runtime
from langgraph.types import Overwrite
from pydantic import BaseModel, Field, create_model

from hugginggraph.graph.budget import LLMBudgetSpent, LLMMeter, deadline_for, llm_budget_refusal
from hugginggraph.graph.context import HuggingGraphContext, PlanningAids, StepsAid, context_of
from hugginggraph.graph.state import GraphState, Mode
from hugginggraph.nodes.back_references import wire_back_references
from hugginggraph.nodes.direct_gate import gate_for
from hugginggraph.nodes.plan_stream import EarlyStarter, PlanStream
from hugginggraph.nodes.step_vote import retype_by_steps
from hugginggraph.nodes.task_options import with_task_options
from hugginggraph.nodes.validation import check_plan
from hugginggraph.prompts import render
from hugginggraph.tools.artifacts import InputFileError, inside_workspace, run_folder
from hugginggraph.tools.demo_bank import Demo, DemoBank
from hugginggraph.tools.llm_json import ControllerUnavailable, ask_json, extract_json, storable
from hugginggraph.tools.tasks import TASKS, TaskSpec


class PlannedArgs(BaseModel):
    """Task arguments as the structured-output schema offers them (explicit names keep strict schemas valid)."""

    text: str | None = None
    image: str | None = None
    audio: str | None = None
    video: str | None = None


class PlannedTask(BaseModel):
    task: str
    id: int
    dep: list[int] = Field(default_factory=lambda: [-1])
    args: PlannedArgs = Field(default_factory=PlannedArgs)


class PlanOutput(BaseModel):
    """The planner's reply; an empty `tasks` list means the request needs no model."""

    tasks: list[PlannedTask]


class StepFirst(BaseModel):
    """With the `steps` aid "inline": a task begins with the part of the request it does, in the request's words,
    so the model has said what is wanted before it names a task type."""

    step: str


MAX_PLANNED_TASKS = 10
"""The most tasks a constrained plan may hold: small models otherwise repeat one task until the context ends."""


class StepsFirst(BaseModel):
    """With the `steps` aid "first": the reply begins with every step the request asks for, in order."""

    steps: list[str] = Field(max_length=MAX_PLANNED_TASKS)


@cache
def plan_schema(task_names: tuple[str, ...] | None, steps: StepsAid = "none") -> type[PlanOutput]:
    """`PlanOutput` whose task names are an enum of `task_names` (None: any name) and whose length is bounded: a
    constrained decoder can neither invent a task nor loop. With the `steps` aid, the words come before the
    tasks they explain."""
    if task_names is None and steps == "none":
        return PlanOutput
    # Fields of later bases come first in the schema, so the steps precede what they explain.
    task_bases: tuple[type[BaseModel], ...] = (PlannedTask, StepFirst) if steps == "inline" else (PlannedTask,)
    task_fields: dict[str, Any] = {} if task_names is None else {"task": (Literal[task_names], ...)}
    named_task = create_model("PlannedTask", __base__=task_bases, **task_fields)
    output_bases: tuple[type[BaseModel], ...] = (PlanOutput, StepsFirst) if steps == "first" else (PlanOutput,)
    tasks = (list[named_task], Field(max_length=MAX_PLANNED_TASKS))  # type: ignore[valid-type]
    return cast("type[PlanOutput]", create_model("PlanOutput", __base__=output_bases, tasks=tasks))


def demo_reply(plan: Sequence[Mapping[str, Any]], steps: StepsAid = "none") -> str:
    """A demo's plan as the planner should answer it: with each task's step inline, the steps listed first, or
    without steps."""
    words = [str(task.get("step", "")) for task in plan]
    bare = [{key: value for key, value in task.items() if key != "step"} for task in plan]
    if steps == "inline":
        return json.dumps([{"step": step, **task} for step, task in zip(words, bare, strict=True)])
    if steps == "first":
        return json.dumps({"steps": words, "tasks": bare})
    return json.dumps(bare)


def task_list(tasks: Mapping[str, TaskSpec], modalities: bool = True) -> str:
    def kinds(spec: TaskSpec) -> str:
        return f" ({', '.join(spec.inputs)} -> {spec.output})" if modalities else ""

    return "\n".join(f"- {spec.id}{kinds(spec)}: {spec.description}" for spec in tasks.values())


STEPS_RULES: dict[StepsAid, str] = {
    "none": "",
    "inline": '- Each task starts with "step": the part of the request it does, in the request\'s words.\n',
    "first": '- First list "steps": each thing the request asks for, in order, a short phrase in the request\'s '
    'words; then give "tasks", one task per step.\n',
}


def _user_turn(request: str, files: Sequence[str]) -> HumanMessage:
    return HumanMessage(render("planning_request", request=request, files=", ".join(files) or "none"))


def planning_messages(
    request: str,
    files: Sequence[str],
    history: Sequence[BaseMessage],
    demos: Sequence[Demo] = (),
    tasks: Mapping[str, TaskSpec] = TASKS,
    modalities: bool = True,
    steps: StepsAid = "none",
) -> list[BaseMessage]:
    """System prompt, the few-shot demos as earlier turns, the chat so far, then the request."""
    system = render("planning_system", task_list=task_list(tasks, modalities), steps_rule=STEPS_RULES[steps])
    messages: list[BaseMessage] = [SystemMessage(system)]
    for demo in demos:
        messages.append(_user_turn(demo.request, demo.files))
        messages.append(AIMessage(demo_reply(demo.plan, steps)))
    messages.extend(history)
    messages.append(_user_turn(request, files))
    return messages


def plan_items(reply_text: str) -> list[Any]:
    """The list of task objects in a plain-text reply: a bare list, or an object holding one under `tasks`."""
    return reply_plan(extract_json(reply_text))


def reply_plan(value: Any) -> list[Any]:
    """The list of task objects in a parsed reply: a bare list, or an object holding one under `tasks`. Steps listed
    first (the `steps` aid "first") go into their tasks as each one's `"step"`, as inline steps are written, when
    there is one step per task: the step vote and the fix pass's guard read them there."""
    if isinstance(value, dict):
        steps = value.get("steps")
        value = value.get("tasks", value.get("plan", [value] if "task" in value else None))
        if isinstance(value, list) and isinstance(steps, list) and len(steps) == len(value):
            value = [
                {"step": step, **task} if isinstance(task, dict) and isinstance(step, str) else task
                for step, task in zip(steps, value, strict=True)
            ]
    if not isinstance(value, list):
        raise ValueError(f"the plan is not a list of tasks: {json.dumps(value)[:120]}")
    return value


@dataclass(frozen=True)
class PlanDraft:
    """The planner's raw plan, or why there is none."""

    items: list[Any]
    error: str | None = None
    fixed: bool = False
    """The controller was shown problems in its first plan and this is its second."""
    retyped: int = 0
    """Tasks whose type the step vote changed (`PlanningAids.step_vote`)."""
    rewired: int = 0
    """Tasks whose literal text now reads an earlier result (`PlanningAids.back_references`)."""
    prompt_key: str | None = None
    """`prompt_key` of the first call, and the controller's reply to it as it came, before any revision: an
    evaluation saves both, so that a later one can replay the reply (`Planner.saved_replies`)."""
    first_reply: list[Any] | None = None
    replayed: bool = False
    """The first reply came from `Planner.saved_replies`, not from the controller."""
    direct: bool = False
    """The direct-answer gate found that the request needs no model (`PlanningAids.direct_gate`): no plan was asked
    for, and the answer comes from the controller alone."""


@dataclass(frozen=True)
class Planner:
    """Planning with one controller over one set of task types, with the aids chosen."""

    llm: BaseChatModel
    tasks: Mapping[str, TaskSpec]
    aids: PlanningAids
    demo_bank: DemoBank
    workspace: Path | None = None
    """Where input files are looked for when checking a plan for the fix pass; None skips that check."""
    saved_replies: Mapping[str, list[Any]] = field(default_factory=dict)
    """First replies of an earlier evaluation with the same controller, by `prompt_key`. A first call whose prompt
    has a saved reply is answered with it: under greedy decoding the controller would give the same reply, so an
    evaluation of what comes after it (the vote, the wiring, validation, the fix pass) takes minutes, not hours."""

    @classmethod
    def from_context(cls, context: HuggingGraphContext) -> Planner:
        return cls(context.llm_for("plan"), context.tasks, context.planning, context.demo_bank, context.workspace)

    async def demos(self, request: str) -> list[Demo]:
        if self.aids.demos == "retrieved":
            # The first call loads MiniLM and embeds the bank: seconds, off the event loop.
            return await asyncio.to_thread(self.demo_bank.nearest, request, self.aids.demo_count, self.tasks)
        if self.aids.demos == "static":
            return self.demo_bank.static(self.aids.demo_count, self.tasks)
        return []

    async def draft(
        self,
        request: str,
        files: Sequence[str],
        history: Sequence[BaseMessage] = (),
        listeners: Sequence[BaseCallbackHandler] = (),
    ) -> PlanDraft:
        """A raw plan for the request; with `fix_pass`, a second one when the first has tasks that cannot run and
        the run's LLM budget, if any, allows the call. The second is taken only if it has fewer problems, keeps as
        many tasks (small controllers "fix" a long plan by answering two generic steps, "read image", "make text")
        and still speaks of the request.

        An empty draft marked `direct`, without a call, when the request needs no model (`PlanningAids.direct_gate`).
        `listeners` get the first reply's tokens as they are written (`ask_json`). Raises ControllerUnavailable when
        the controller cannot be reached.
        """
        # The gate compares with the retrieval's embedder, off the event loop: its first call loads MiniLM.
        gated = self.aids.direct_gate and self.aids.demos == "retrieved"
        if gated and await asyncio.to_thread(gate_for(self.demo_bank).answers_directly, request, files):
            return PlanDraft([], direct=True)
        demos = await self.demos(request)
        messages = planning_messages(request, files, history, demos, self.tasks, self.aids.modalities, self.aids.steps)
        key = prompt_key(messages, self._schema())
        saved = self.saved_replies.get(key)
        first = PlanDraft(saved) if saved is not None else await self.ask(messages, listeners)
        # The repairs without an LLM call come first: the fix pass is asked only about what they leave.
        draft = await self.revised(first, request)
        problems = self._problems(draft)
        if self.aids.fix_pass and problems and not llm_budget_refusal():
            listed = "\n".join(f"- {problem}" for problem in problems)
            fix = [AIMessage(json.dumps(draft.items)), HumanMessage(render("planning_fix", problems=listed))]
            second = await self.revised(await self.ask([*messages, *fix]), request)
            if (
                second.error is None
                and len(self._problems(second)) < len(problems)
                and len(second.items) >= len(draft.items)  # a fix mends tasks; it does not drop what was asked
                and not plan_left_request(second.items, request)
            ):
                draft = replace(second, fixed=True)
        reply = None if first.error else first.items
        return replace(draft, prompt_key=key, first_reply=reply, replayed=saved is not None)

    async def revised(self, draft: PlanDraft, request: str) -> PlanDraft:
        """The draft with its task types put to the step vote and its words standing for earlier results wired to
        them, as the aids say."""
        if self.aids.step_vote and self.aids.steps != "none" and self.aids.demos == "retrieved":
            # Embedding the steps takes milliseconds, but the first vote loads MiniLM: off the event loop.
            items, retyped = await asyncio.to_thread(retype_by_steps, draft.items, self.demo_bank, self.tasks)
            draft = replace(draft, items=items, retyped=retyped)
        if self.aids.back_references:
            items, rewired = wire_back_references(draft.items, request, self.tasks)
            draft = replace(draft, items=items, rewired=rewired)
        return draft

    def _schema(self) -> type[PlanOutput]:
        return plan_schema(tuple(self.tasks) if self.aids.constrained else None, self.aids.steps)

    async def ask(self, messages: Sequence[BaseMessage], listeners: Sequence[BaseCallbackHandler] = ()) -> PlanDraft:
        """One planning call: the reply's tasks, or why it holds none (the fix pass and the replan ask this too)."""
        reply = await ask_json(self.llm, messages, self._schema(), listeners)
        if reply.parsed is not None:
            # Parsed by the provider, not by extract_json: made storable here alike (see `storable`).
            return PlanDraft(reply_plan(storable(reply.parsed.model_dump(exclude_none=True))))
        try:
            return PlanDraft(plan_items(reply.text))
        except ValueError as error:
            return PlanDraft([], error=f"the planner did not return a usable plan ({error})")

    def _problems(self, draft: PlanDraft) -> list[str]:
        """Why tasks of this plan cannot run (e.g. an input file no one gave), one reason per task."""
        if draft.error is not None:
            return []
        doomed = check_plan(draft.items, self.workspace, self.tasks).doomed
        return [reason for _, reason in sorted(doomed.items())]


def prompt_key(messages: Sequence[BaseMessage], schema: type[BaseModel]) -> str:
    """A digest of everything a planning call shows the controller: each message's role and text, and the reply's
    schema. Equal keys mean the same question."""
    shown = [[message.type, message.text] for message in messages] + [schema.model_json_schema()]
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()


_GROUNDED_SHARE = 0.5
"""Steps are written "in the request's words": on TaskBench almost all first plans' steps share at least half
their words with the request, while fix-pass plans that do not were about something else (docs/planning.md)."""
# fmt: off
_FILLER = frozenset({
    "the", "and", "for", "with", "from", "into", "that", "this", "these", "those", "its", "then", "next", "also",
    "your", "you", "please", "can", "could", "would", "about",
})
# fmt: on


def plan_left_request(items: list[Any], request: str) -> bool:
    """Whether a plan's steps, on average, share under half their words with the request: the controller answered
    something else, e.g. a fix pass that copied a demo's plan or planned "correct the plan". A plan without step
    phrases cannot tell and is taken as it is."""
    asked = set(_words(request))
    shares = [
        sum(word in asked for word in words) / len(words)
        for item in items
        if isinstance(item, dict) and isinstance(item.get("step"), str) and (words := _words(item["step"]))
    ]
    return bool(shares) and sum(shares) / len(shares) < _GROUNDED_SHARE


def _words(text: str) -> list[str]:
    return [word for word in re.findall(r"[a-z]+", text.lower()) if len(word) > 2 and word not in _FILLER]


def _input_error(request: str, mode: str) -> str | None:
    if not request:
        return "the request is empty: say what you want done"
    if mode not in get_args(Mode):
        return f"unknown mode {mode!r}: use one of {', '.join(get_args(Mode))}"
    return None


def _files_error(files: Sequence[str], context: HuggingGraphContext) -> str | None:
    """Why an input file the user gave cannot be used: one outside the workspace is refused before any planning,
    since a plan could only mention it and fail (a missing one is left to the task that reads it)."""
    try:
        for name in files:
            inside_workspace(name, context.workspace)
    except InputFileError as error:
        return str(error)
    return None


async def plan(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    context = await context_of(runtime)
    # A new turn on a thread starts afresh: the reducers would otherwise merge the last turn's values in.
    turn: dict[str, Any] = {
        "plan_error": None,
        "choices": Overwrite({}),
        "results": Overwrite({}),
        "stopped": None,
        "deadline": deadline_for(context.limits),
        "direct_answer": False,
        "replanned": None,
    }
    run_dir = run_folder(context.artifacts_dir, str(get_config()["configurable"].get("thread_id", "default")))
    context.early_starts.cancel(str(run_dir))  # what an earlier turn started and nobody took
    starter = _early_starter(state, context, run_dir, turn["deadline"])
    meter = LLMMeter.for_run(context.limits, None)
    listeners = [PlanStream(starter.consider, reply_plan)] if starter else []
    drafted = await _draft(state, context, meter, listeners)
    if starter:
        await starter.settled()  # every early call is known before execution looks for it
    return {**turn, **drafted, "llm_usage": Overwrite(meter.usage)}


def _early_starter(
    state: GraphState, context: HuggingGraphContext, run_dir: Path, deadline: float | None
) -> EarlyStarter | None:
    """What starts tasks while the plan is written, when the run will execute them without asking the user, and
    without the limits whose bookkeeping is the execution stage's (its slots, its deadline's cut)."""
    limits = context.limits
    bounded = limits.max_concurrent_tasks is not None or limits.run_timeout_s is not None
    if not context.start_tasks_early or bounded or state.get("approval") or state.get("mode", "full") == "tasks":
        return None
    planner = Planner.from_context(context)
    request = state.get("request", "").strip()

    async def revise(items: list[Any]) -> list[Any]:
        return (await planner.revised(PlanDraft(items), request)).items

    return EarlyStarter(context, run_dir, request, deadline, revise, get_stream_writer())


async def _draft(
    state: GraphState, context: HuggingGraphContext, meter: LLMMeter, listeners: Sequence[BaseCallbackHandler] = ()
) -> dict[str, Any]:
    """The raw plan and the request as the chat's next message; or why there is no plan."""
    request = state.get("request", "").strip()
    if error := _input_error(request, state.get("mode", "full")) or _files_error(state.get("files", []), context):
        return {"raw_plan": [], "plan_error": error}
    asked = {"messages": [HumanMessage(request)]}
    with meter:
        try:
            meter.check()
            draft = await Planner.from_context(context).draft(
                request, state.get("files", []), state.get("messages", []), listeners
            )
        except ControllerUnavailable as error:
            # Nothing can run without a controller: the user is told why and what to fix, not shown a stack trace.
            return {**asked, "raw_plan": [], "plan_error": str(error)}
        except LLMBudgetSpent as spent:
            return {**asked, "raw_plan": [], "stopped": str(spent)}
    # Options the request states (a translation's language) are the runners' to read, not the planner's to
    # choose: filled in here, outside `Planner`, so the TaskBench evaluation still scores the plan as the model made it.
    raw_plan = with_task_options(draft.items, request)
    return {**asked, "raw_plan": raw_plan, "plan_error": draft.error, "direct_answer": draft.direct}
