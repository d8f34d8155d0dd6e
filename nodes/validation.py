"""Stage 1b, plan validation and repair: the planner's raw JSON becomes a list of `Task`s in topological order.

Whatever can be repaired is repaired and the repair recorded (a name in the wrong case, a missing `dep` entry,
a duplicate id, tasks listed out of order). A task that cannot run (unknown type, a reference to a task that is
not there, a missing input file, a dependency cycle) is kept and marked doomed with the reason: it fails, its
dependants are skipped, and every other task still runs. Nothing here raises on bad input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import GraphState, Task, TaskResult
from hugginggraph.tools.artifacts import is_remote, resolve_input_file
from hugginggraph.tools.tasks import MEDIA_MODALITIES, TASKS, TaskSpec, normalize_task_name

REFERENCE = re.compile(r"<GENERATED>-(\d+)")
# Other spellings planners use for the same thing (TaskBench writes `<node-k>`).
_REFERENCE_VARIANTS = re.compile(r"<(?:GENERATED|generated|node)[->_ ]*(\d+)>?")


@dataclass
class PlanCheck:
    """The outcome of validating one raw plan."""

    tasks: list[Task] = field(default_factory=list)
    """Every usable task, dependencies before dependants."""
    repairs: list[str] = field(default_factory=list)
    doomed: dict[int, str] = field(default_factory=dict)
    """Task id → why that task cannot run."""


def references(args: Mapping[str, str]) -> set[int]:
    """Ids of the tasks whose outputs these arguments name."""
    return {int(k) for value in args.values() for k in REFERENCE.findall(value)}


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float | bool):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def _canonical_references(value: str) -> str:
    return _REFERENCE_VARIANTS.sub(lambda match: f"<GENERATED>-{match.group(1)}", value)


class _Checker:
    """One validation pass; methods append to `self.check` as they go."""

    def __init__(self, workspace: Path | None, tasks: Mapping[str, TaskSpec]) -> None:
        self.workspace = workspace
        self.tasks = tasks
        self.check = PlanCheck()

    def repair(self, note: str) -> None:
        self.check.repairs.append(note)

    def doom(self, task_id: int, reason: str) -> None:
        self.check.doomed.setdefault(task_id, reason)

    # --- one item -----------------------------------------------------------------------------------------
    def coerce(self, position: int, item: Any, used_ids: set[int]) -> Task | None:
        where = f"plan item {position}"
        if not isinstance(item, dict):
            self.repair(f"dropped {where}: not a task object ({_as_text(item)!r:.60})")
            return None
        name = item.get("task")
        if not isinstance(name, str) or not name.strip():
            self.repair(f"dropped {where}: it names no task")
            return None
        task_name = normalize_task_name(name)
        if task_name != name:
            self.repair(f"{where}: read task name {name!r} as {task_name!r}")
        task_id = _as_int(item.get("id"))
        if task_id is None or task_id < 0 or task_id in used_ids:
            fresh = max(used_ids, default=-1) + 1
            problem = "has no valid id" if task_id is None or task_id < 0 else f"repeats id {task_id}"
            self.repair(f"{where} ({task_name}) {problem}; gave it id {fresh}")
            task_id = fresh
        used_ids.add(task_id)
        return Task(
            id=task_id,
            task=task_name,
            dep=self._deps(task_id, item.get("dep")),
            args=self._args(task_id, task_name, item.get("args", item.get("arguments"))),
        )

    def _deps(self, task_id: int, raw: Any) -> list[int]:
        values = raw if isinstance(raw, list) else [] if raw is None else [raw]
        deps = []
        for value in values:
            dep = _as_int(value)
            if dep is None:
                self.repair(f"task {task_id}: ignored dependency {value!r}, not a task id")
            elif dep >= 0 and dep not in deps:
                deps.append(dep)
        return deps

    def _args(self, task_id: int, task_name: str, raw: Any) -> dict[str, str]:
        if isinstance(raw, list):
            inputs = self.tasks[task_name].inputs if task_name in self.tasks else ("text",)
            raw = {
                (item.get("name") if isinstance(item, dict) else None) or inputs[min(i, len(inputs) - 1)]: (
                    item.get("value") if isinstance(item, dict) else item
                )
                for i, item in enumerate(raw)
            }
            self.repair(f"task {task_id}: arguments were a list; named them {sorted(raw)}")
        if not isinstance(raw, dict):
            if raw is not None:
                self.repair(f"task {task_id}: ignored arguments that were not an object")
            return {}
        args = {}
        for key, value in raw.items():
            text = _as_text(value)
            if text is None:
                continue
            canonical = _canonical_references(text)
            if canonical != text:
                self.repair(f"task {task_id}: read {text!r} as {canonical!r}")
            args[str(key)] = canonical
        return args

    # --- the task against the plan ------------------------------------------------------------------------
    def check_task(self, task: Task, ids: set[int]) -> Task:
        """Unknown type, missing inputs, bad references and files; derive `dep` from the references."""
        if task.task not in self.tasks:
            self.doom(task.id, f"unknown task type {task.task!r}; the known ones are: {', '.join(self.tasks)}")
        args = self._name_missing_input(task)
        refs = references(args)
        if task.id in refs:
            self.doom(task.id, f"task {task.id} refers to its own output")
        for missing in sorted(refs - ids):
            self.doom(task.id, f"task {task.id} uses the output of task {missing}, which the plan does not have")
        wanted = refs & ids - {task.id}
        for dropped in [d for d in task.dep if d not in ids or d == task.id]:
            self.repair(f"task {task.id}: removed dependency on {dropped}, which is not another task of the plan")
        declared = [d for d in task.dep if d in ids and d != task.id]
        for added in sorted(wanted - set(declared)):
            self.repair(f"task {task.id}: added dependency on task {added}, whose output it uses")
        dep = sorted(set(declared) | wanted)
        return task.model_copy(update={"dep": dep, "args": self._resolve_files(task.id, args)})

    def _name_missing_input(self, task: Task) -> dict[str, str]:
        """A single argument under an unexpected name is taken as the task's one input, e.g. `sentence` → text."""
        spec = self.tasks.get(task.task)
        if spec is None or any(name in task.args for name in spec.inputs):
            return dict(task.args)
        if len(task.args) == 1 and len(spec.inputs) == 1:
            ((old, value),) = task.args.items()
            self.repair(f"task {task.id}: took argument {old!r} as its {spec.inputs[0]!r} input")
            return {spec.inputs[0]: value}
        self.doom(task.id, f"task {task.id} ({task.task}) has no {' or '.join(spec.inputs)} argument")
        return dict(task.args)

    def _resolve_files(self, task_id: int, args: dict[str, str]) -> dict[str, str]:
        if self.workspace is None:
            return args
        resolved = dict(args)
        for key, value in args.items():
            if key not in MEDIA_MODALITIES or REFERENCE.search(value) or is_remote(value):
                continue
            path = resolve_input_file(value, self.workspace)
            if path is None:
                self.doom(task_id, f"input file {value!r} not found (looked in {self.workspace})")
            else:
                resolved[key] = str(path)
        return resolved

    # --- the whole plan -----------------------------------------------------------------------------------
    def order(self, tasks: list[Task]) -> list[Task]:
        """Dependencies first, otherwise plan order (a valid plan keeps its order); tasks on cycles are doomed
        and put after the rest, followed by the tasks downstream of a cycle, so no task waits on a later one."""
        remaining = {task.id: task for task in tasks}
        ordered: list[Task] = []
        while ready := next((t for t in remaining.values() if all(d not in remaining for d in t.dep)), None):
            ordered.append(remaining.pop(ready.id))
        if [t.id for t in ordered] != [t.id for t in tasks][: len(ordered)]:
            self.repair(f"reordered the plan so each task runs after the tasks it uses: {[t.id for t in ordered]}")
        downstream = self._peel_downstream(remaining)
        on_cycle = [t for t in remaining.values() if t.id not in {d.id for d in downstream}]
        if on_cycle:
            ids = ", ".join(str(t.id) for t in on_cycle)
            for task in on_cycle:
                self.doom(task.id, f"task {task.id} is part of a dependency cycle among tasks {ids}")
        return ordered + on_cycle + downstream

    @staticmethod
    def _peel_downstream(remaining: dict[int, Task]) -> list[Task]:
        """Tasks left after Kahn's algorithm that only hang below a cycle, in an order where each comes after
        the ones it depends on (peeled from the bottom, then reversed)."""
        left = dict(remaining)
        peeled: list[Task] = []
        while True:
            sinks = [t for t in left.values() if not any(t.id in other.dep for other in left.values())]
            if not sinks:
                return peeled[::-1]
            for task in sinks:
                peeled.append(left.pop(task.id))


def check_plan(raw_plan: Iterable[Any], workspace: Path | None, tasks: Mapping[str, TaskSpec] = TASKS) -> PlanCheck:
    """Validate and repair a raw plan against the task types in `tasks`. Never raises on bad input: problems
    become repairs or doomed tasks. Input files are resolved in `workspace`; None leaves them unchecked (plans
    measured against a benchmark name files that do not exist)."""
    checker = _Checker(workspace, tasks)
    used_ids: set[int] = set()
    coerced = [task for i, item in enumerate(raw_plan) if (task := checker.coerce(i, item, used_ids))]
    ids = {task.id for task in coerced}
    checked = [checker.check_task(task, ids) for task in coerced]
    checker.check.tasks = checker.order(checked)
    return checker.check


async def validate(state: GraphState, runtime: Runtime[HuggingGraphContext]) -> dict[str, Any]:
    raw_plan = state.get("raw_plan", [])
    check = check_plan(raw_plan, runtime.context.workspace, runtime.context.tasks)
    doomed = {
        task.id: TaskResult(task_id=task.id, task=task.task, status="failed", error=check.doomed[task.id])
        for task in check.tasks
        if task.id in check.doomed
    }
    if raw_plan and not check.tasks:
        return {"plan": [], "plan_repairs": check.repairs, "plan_error": "the plan held no usable task"}
    return {"plan": check.tasks, "plan_repairs": check.repairs, "results": doomed}
