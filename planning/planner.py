"""`Planner`: the whole of planning short of running the graph, so the TaskBench evaluator measures exactly what
the graph does. What helps a controller plan (demos, modalities, a constrained schema, a fix pass, the step vote,
back references, the direct gate) is set by `PlanningAids`; each aid's effect is measured in docs/planning.md."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel

from hugginggraph.graph.budget import llm_budget_refusal
from hugginggraph.graph.context import HuggingGraphContext, PlanningAids
from hugginggraph.graph.state import turn_number
from hugginggraph.planning.back_references import wire_back_references
from hugginggraph.planning.direct_gate import gate_for
from hugginggraph.planning.earlier_outputs import put_earlier_outputs
from hugginggraph.planning.named_files import put_named_files
from hugginggraph.planning.plan_check import check_plan
from hugginggraph.planning.plan_prompt import planning_messages
from hugginggraph.planning.plan_schema import PlanOutput, plan_items, plan_schema, reply_plan
from hugginggraph.planning.step_vote import retype_by_steps
from hugginggraph.prompts import render
from hugginggraph.tools.artifacts import paths_from_thread, run_folder
from hugginggraph.tools.demo_bank import Demo, DemoBank, names_file
from hugginggraph.tools.llm_json import ask_json, storable
from hugginggraph.tools.step_chooser import ChooserWeights, StepTyper, trained_chooser
from hugginggraph.tools.tasks import TaskSpec

NO_TASK_FOR_FILE = (
    "the controller planned no task for it, though it names a file, so no model has read the file; saying what to "
    'do with the file ("read the text on sign.png", "describe photo.jpg") may help'
)


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
    chooser_weights: ChooserWeights | None = None
    """The step chooser's weights (`PlanningAids.step_chooser`); None: the shipped ones. An evaluation measures a
    chooser trained without the records it plans."""
    thread: Path | None = None
    """The thread's folder (`run_folder`): the files its earlier turns made, which the chat so far names, are
    shown from there, and a plan may read them (`resolve_input_file`)."""

    @classmethod
    def from_context(cls, context: HuggingGraphContext, thread_id: str | None = None) -> Planner:
        thread = None if thread_id is None else run_folder(context.artifacts_dir, thread_id)
        return cls(
            context.llm_for("plan"),
            context.tasks,
            context.planning,
            context.demo_bank,
            context.workspace,
            thread=thread,
        )

    def shown_history(self, history: Sequence[BaseMessage]) -> list[BaseMessage]:
        """The chat so far as the controller is shown it: the files earlier answers name by their path from the
        thread's folder (`turn-1/task-2-text-to-speech.wav`). The full path is long and new to each thread, so a
        local controller evaluated every later turn's prompt from the first such path on, even when the same
        conversation had been planned before."""
        if self.thread is None:
            return list(history)
        thread = self.thread
        return [
            AIMessage(paths_from_thread(message.text, thread)) if isinstance(message, AIMessage) else message
            for message in history
        ]

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
        shown = self.shown_history(history)
        messages = planning_messages(request, files, shown, demos, self.tasks, self.aids.modalities, self.aids.steps)
        key = prompt_key(messages, self._schema())
        saved = self.saved_replies.get(key)
        first = PlanDraft(saved) if saved is not None else await self.ask(messages, listeners)
        # The repairs without an LLM call come first: the fix pass is asked only about what they leave.
        draft = self._reading_earlier_outputs(await self.revised(first, request), history)
        problems = self._problems(draft, request, files)
        if self.aids.fix_pass and problems and not llm_budget_refusal():
            listed = "\n".join(f"- {problem}" for problem in problems)
            fix = [AIMessage(json.dumps(draft.items)), HumanMessage(render("planning_fix", problems=listed))]
            # A plan with no task for a named file is asked again with the empty plan ruled out: the 1.5B, asked
            # freely, answered the sign request's fix pass with no task again.
            asked = await self.ask([*messages, *fix], min_tasks=int(not draft.items))
            second = self._reading_earlier_outputs(await self.revised(asked, request), history)
            if (
                second.error is None
                and len(self._problems(second, request, files)) < len(problems)
                and len(second.items) >= len(draft.items)  # a fix mends tasks; it does not drop what was asked
                and not plan_left_request(second.items, request)
            ):
                draft = replace(second, fixed=True)
        if not draft.items and draft.error is None and names_file(request):
            # Then the run would answer as if no model were needed, and a chat answer once read the sign in
            # sign.png from imagination ("STOP"): an empty plan for a request that names a file is a failed plan.
            draft = replace(draft, error=NO_TASK_FOR_FILE)
        reply = None if first.error else first.items
        return replace(draft, prompt_key=key, first_reply=reply, replayed=saved is not None)

    async def revised(self, draft: PlanDraft, request: str) -> PlanDraft:
        """The draft with its task types put to the step vote and its words standing for earlier results wired to
        them, as the aids say; and, where files are looked for, a missing media file replaced by the one of its
        kind the request names."""
        if self.aids.step_vote and self.aids.steps != "none" and self.aids.demos == "retrieved":
            # Embedding the steps takes milliseconds, but the first vote loads MiniLM: off the event loop.
            judge = self._step_judge()
            items, retyped = await asyncio.to_thread(retype_by_steps, draft.items, judge, self.tasks, request)
            draft = replace(draft, items=items, retyped=retyped)
        if self.aids.back_references:
            items, rewired = wire_back_references(draft.items, request, self.tasks)
            draft = replace(draft, items=items, rewired=rewired)
        if self.workspace is not None:
            draft = replace(draft, items=put_named_files(draft.items, request, self.workspace))
        return draft

    def _reading_earlier_outputs(self, draft: PlanDraft, history: Sequence[BaseMessage]) -> PlanDraft:
        """The draft reading the files the chat's last turn made where it names them as results of its own
        (`put_earlier_outputs`)."""
        if self.thread is None or not history:
            return draft
        return replace(draft, items=put_earlier_outputs(draft.items, self.thread, turn_number(history)))

    def _step_judge(self) -> StepTyper:
        chooser = trained_chooser(self.demo_bank, self.chooser_weights) if self.aids.step_chooser == "trained" else None
        return chooser or self.demo_bank

    def _schema(self, min_tasks: int = 0) -> type[PlanOutput]:
        return plan_schema(tuple(self.tasks) if self.aids.constrained else None, self.aids.steps, min_tasks)

    async def ask(
        self, messages: Sequence[BaseMessage], listeners: Sequence[BaseCallbackHandler] = (), min_tasks: int = 0
    ) -> PlanDraft:
        """One planning call: the reply's tasks, or why it holds none (the fix pass and the replan ask this too);
        `min_tasks` as `plan_schema` takes it."""
        reply = await ask_json(self.llm, messages, self._schema(min_tasks), listeners)
        if reply.parsed is not None:
            # Parsed by the provider, not by extract_json: made storable here alike (see `storable`).
            return PlanDraft(reply_plan(storable(reply.parsed.model_dump(exclude_none=True))))
        try:
            return PlanDraft(plan_items(reply.text))
        except ValueError as error:
            return PlanDraft([], error=f"the planner did not return a usable plan ({error})")

    def _problems(self, draft: PlanDraft, request: str, files: Sequence[str]) -> list[str]:
        """Why tasks of this plan cannot run (e.g. an input file no one gave), one reason per task; that it has
        none for a request that names a file ("Read the text on sign.png"), which a small controller sometimes
        answers with an empty plan, then the run says it can do what it was asked and does nothing; and each file
        given with the request and named in it that no task reads: "What is said in memo.wav? Read it back to me."
        was planned as text-to-speech of its own output, and a fix pass told only that planned the same again."""
        if draft.error is not None:
            return []
        if not draft.items and names_file(request):
            return ["the request names a file, but the plan has no task: plan the tasks that do what it asks"]
        doomed = check_plan(draft.items, self.workspace, self.tasks, self.thread).doomed
        return [reason for _, reason in sorted(doomed.items())] + [
            f"no task reads {name}, which the request gives: plan the task that reads it, and use its output"
            for name in _unread_files(draft.items, files, request)
        ]


def _unread_files(items: list[Any], files: Sequence[str], request: str) -> list[str]:
    """The given files the request names and no task's arguments do (a plan names "sign.png" for the workspace's
    file). A file the request does not name may be given for other turns (`hugginggraph chat --file`)."""
    read = " ".join(
        str(value)
        for item in items
        if isinstance(item, dict) and isinstance(item.get("args"), dict)
        for value in item["args"].values()
    )
    return [name for name in files if Path(name).name in request and Path(name).name not in read]


def prompt_key(messages: Sequence[BaseMessage], schema: type[BaseModel]) -> str:
    """A digest of everything a planning call shows the controller: each message's role and text, and the reply's
    schema. Equal keys mean the same question."""
    shown = [[message.type, message.text] for message in messages] + [_schema_shown(schema)]
    return hashlib.sha256(json.dumps(shown, sort_keys=True).encode()).hexdigest()


@cache
def _schema_shown(schema: type[BaseModel]) -> dict[str, Any]:
    """A schema's JSON form, made once per class (`plan_schema` makes each class once): pydantic builds it anew on
    every call, the largest part of a key's cost."""
    return schema.model_json_schema()


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
