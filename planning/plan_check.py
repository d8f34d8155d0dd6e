"""Plan validation and repair (`check_plan`): the planner's raw JSON becomes a list of `Task`s in topological order.

Whatever can be repaired is repaired and the repair recorded (a name in the wrong case, a missing `dep` entry or one
on a task whose output is not read, a duplicate id, tasks listed out of order, a `<GENERATED>-k` of the wrong kind:
text where an image is read, or of the task itself where an earlier task makes what it reads). A task that cannot
run (unknown type, a reference to a task that is not there or that makes the wrong kind, a missing input file or one
outside the workspace, a dependency cycle) is kept and marked doomed with the reason: it fails, its dependants are
skipped, and every other task still runs. Nothing here raises on bad input, however malformed or hostile
(tests/planning/test_plan_check_properties.py), and the time it takes grows about linearly with the plan, so a looping
planner's plan of thousands of tasks is checked in milliseconds.
"""

from __future__ import annotations

import heapq
import json
import re
import reprlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggraph.graph.context import Limits
from hugginggraph.graph.state import Task
from hugginggraph.planning.references import MAX_ID_DIGITS, REFERENCE, canonical_references, references
from hugginggraph.tools.artifacts import InputFileError, is_remote, resolve_input_file, text_file_path
from hugginggraph.tools.llm_json import storable
from hugginggraph.tools.tasks import MEDIA_MODALITIES, TASKS, Modality, TaskSpec, normalize_task_name


@dataclass
class PlanCheck:
    """The outcome of validating one raw plan."""

    tasks: list[Task] = field(default_factory=list)
    """Every usable task, dependencies before dependants."""
    repairs: list[str] = field(default_factory=list)
    doomed: dict[int, str] = field(default_factory=dict)
    """Task id → why that task cannot run."""


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and re.fullmatch(rf"\s*-?[0-9]{{1,{MAX_ID_DIGITS}}}\s*", value):
        value = int(value)
    return value if isinstance(value, int) and abs(value) < 10**MAX_ID_DIGITS else None


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float | bool):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # not JSON at all, or nested deeper than the stack
        return None


_PREVIEW = reprlib.Repr()
_PREVIEW.maxstring = _PREVIEW.maxother = 80
_preview = _PREVIEW.repr
"""A value as repairs quote it: short and flat, whatever its size or depth (a repair note is read by a person)."""


def _listed_name(item: Any) -> str | None:
    """The name of an argument given as `{"name": ..., "value": ...}` in a list, when it has a usable one."""
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else None


class _Checker:
    """One validation pass; methods append to `self.check` as they go."""

    def __init__(self, workspace: Path | None, tasks: Mapping[str, TaskSpec], thread: Path | None) -> None:
        self.workspace = workspace
        self.thread = thread
        self.tasks = tasks
        self.check = PlanCheck()
        self.used_ids: set[int] = set()
        self.next_id = 0
        """One more than the largest id given so far: a fresh id for an item without a usable one."""

    def repair(self, note: str) -> None:
        self.check.repairs.append(note)

    def doom(self, task_id: int, reason: str) -> None:
        self.check.doomed.setdefault(task_id, reason)

    # --- one item -----------------------------------------------------------------------------------------
    def coerce(self, position: int, item: Any) -> Task | None:
        where = f"plan item {position}"
        if not isinstance(item, dict):
            self.repair(f"dropped {where}: not a task object ({_preview(item)})")
            return None
        name = item.get("task")
        if not isinstance(name, str) or not name.strip():
            self.repair(f"dropped {where}: it names no task")
            return None
        task_name = normalize_task_name(name)
        if task_name != name:
            self.repair(f"{where}: read task name {_preview(name)} as {_preview(task_name)}")
        task_id = _as_int(item.get("id"))
        if task_id is None or task_id < 0 or task_id in self.used_ids:
            problem = "has no valid id" if task_id is None or task_id < 0 else f"repeats id {task_id}"
            self.repair(f"{where} ({task_name}) {problem}; gave it id {self.next_id}")
            task_id = self.next_id
        self.used_ids.add(task_id)
        self.next_id = max(self.next_id, task_id + 1)
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
                self.repair(f"task {task_id}: ignored dependency {_preview(value)}, not a task id")
            elif dep >= 0 and dep not in deps:
                deps.append(dep)
        return deps

    def _args(self, task_id: int, task_name: str, raw: Any) -> dict[str, str]:
        if isinstance(raw, list):
            inputs = self.tasks[task_name].inputs if task_name in self.tasks else ("text",)
            raw = {
                _listed_name(item) or inputs[min(i, len(inputs) - 1)]: (
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
            canonical = canonical_references(text)
            if canonical != text:
                self.repair(f"task {task_id}: read {_preview(text)} as {_preview(canonical)}")
            args[storable(str(key))] = canonical  # the checkpointer refuses lone surrogates in keys
        return args

    # --- the task against the plan ------------------------------------------------------------------------
    def check_task(
        self, task: Task, ids: set[int], makes: Mapping[int, Modality], latest: Mapping[Modality, int]
    ) -> Task:
        """Unknown type, missing inputs, bad references and files; derive `dep` from the references. `makes` gives
        what each task of the plan produces, `latest` the last task before this one that produces each kind."""
        if task.task not in self.tasks:
            self.doom(task.id, f"unknown task type {task.task!r}; the known ones are: {', '.join(self.tasks)}")
        args = self._fit_inputs(task, self._name_missing_input(task), makes, latest)
        refs = references(args)
        if task.id in refs:
            self.doom(task.id, f"task {task.id} refers to its own output")
        for missing in sorted(refs - ids):
            self.doom(task.id, f"task {task.id} uses the output of task {missing}, which the plan does not have")
        wanted = (refs & ids) - {task.id}  # not refs & (ids - ...), which would copy the plan's ids per task
        for dropped in [d for d in task.dep if d not in ids or d == task.id]:
            self.repair(f"task {task.id}: removed dependency on {dropped}, which is not another task of the plan")
        declared = {d for d in task.dep if d in ids and d != task.id}
        for added in sorted(wanted - declared):
            self.repair(f"task {task.id}: added dependency on task {added}, whose output it uses")
        # A task waits only for the outputs it reads: a dependency on anything else would only delay it, and skip it
        # when that task fails, although it never needed its output.
        for unused in sorted(declared - wanted):
            self.repair(f"task {task.id}: removed dependency on task {unused}, whose output it does not use")
        return task.model_copy(update={"dep": sorted(wanted), "args": self._resolve_files(task.id, args)})

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

    def _fit_inputs(
        self, task: Task, args: dict[str, str], makes: Mapping[int, Modality], latest: Mapping[Modality, int]
    ) -> dict[str, str]:
        """The arguments fitted to the kinds the task reads. A media argument of a kind it does not read (audio for
        image-editing) is dropped: the task would never read it, yet a reference there made it wait for that task, and
        be skipped if it failed, and a file there doomed it when missing. Where the task reads one kind and a
        `<GENERATED>-k` names a task that makes another (text where an image is read, an image where text is read), the
        reference moves to the last earlier task that makes the right kind, as a chain of steps means; with none, it is
        dropped and the task doomed, so it fails with the reason at once rather than at run time after task k ran. A
        task that reads its own output means the step before it in the same way (small planners number from the wrong
        end, or copy their own id): the reference moves to the last earlier task making the kind it reads; with none, it
        is doomed as a self-reference. Other arguments (a question's context, a second sentence) are the runner's to
        read and stay."""
        spec = self.tasks.get(task.task)
        if spec is None:
            return args
        fitted = dict(args)
        for key, value in args.items():
            if key in MEDIA_MODALITIES and key not in spec.inputs:
                del fitted[key]
                self.repair(f"task {task.id}: dropped its {key} {_preview(value)}: {task.task} does not read {key}")
                continue
            match = REFERENCE.fullmatch(value.strip())
            source = int(match.group(1)) if match else None
            if source is None or key not in spec.inputs:
                continue
            own, made = source == task.id, makes.get(source)
            if not own and made in (None, key):
                continue
            if key in latest:
                fitted[key] = f"<GENERATED>-{latest[key]}"
                was = "its own output" if own else f"task {source}'s output, {made}"
                self.repair(f"task {task.id}: its {key} was {was}; took task {latest[key]}'s")
            elif not own:  # a self-reference with no earlier task to read is doomed below, as one
                del fitted[key]
                self.doom(
                    task.id,
                    f"task {task.id} reads {key}, but task {source} makes {made} and no earlier task makes {key}",
                )
        return fitted

    def _resolve_files(self, task_id: int, args: dict[str, str]) -> dict[str, str]:
        """Media arguments become absolute paths inside the workspace. One that mixes a reference with other text
        is doomed: the executor would splice the earlier task's text into it and read whatever file that names.
        A text argument that is only a text file's name stays a name (the executor reads it), but the file must
        be there, so a missing one fails the task before any model runs and the fix pass hears of it."""
        resolved = dict(args)
        for key, value in args.items():
            is_media = key in MEDIA_MODALITIES
            if is_media and is_remote(value):
                continue
            if is_media and REFERENCE.search(value):
                if not REFERENCE.fullmatch(value.strip()):
                    self.doom(
                        task_id, f"task {task_id}'s {key} must be one file or one <GENERATED>-k, not {_preview(value)}"
                    )
                continue
            if self.workspace is None:
                continue
            try:
                if is_media:
                    resolved[key] = str(resolve_input_file(value, self.workspace, self.thread))
                else:
                    text_file_path(value, self.workspace)  # only checked: the executor reads it
            except InputFileError as error:
                self.doom(task_id, str(error))
        return resolved

    # --- the whole plan -----------------------------------------------------------------------------------
    def order(self, tasks: list[Task]) -> list[Task]:
        """Dependencies first, otherwise plan order (a valid plan keeps its order); tasks on cycles are doomed
        and put after the rest, followed by the tasks downstream of a cycle, so no task waits on a later one."""
        # Kahn's algorithm, always taking the earliest ready task of the plan (a heap of plan positions).
        position = {task.id: i for i, task in enumerate(tasks)}
        waiting = {task.id: {d for d in task.dep if d in position} for task in tasks}
        users: dict[int, list[int]] = {task.id: [] for task in tasks}
        for task in tasks:
            for dep in waiting[task.id]:
                users[dep].append(task.id)
        ready = [position[task.id] for task in tasks if not waiting[task.id]]
        heapq.heapify(ready)
        ordered: list[Task] = []
        while ready:
            ordered.append(task := tasks[heapq.heappop(ready)])
            for user in users[task.id]:
                waiting[user].discard(task.id)
                if not waiting[user]:
                    heapq.heappush(ready, position[user])
        if [t.id for t in ordered] != [t.id for t in tasks][: len(ordered)]:
            self.repair(f"reordered the plan so each task runs after the tasks it uses: {[t.id for t in ordered]}")
        done = {task.id for task in ordered}
        remaining = [task for task in tasks if task.id not in done]
        downstream = self._peel_downstream(remaining)
        below = {task.id for task in downstream}
        on_cycle = [t for t in remaining if t.id not in below]
        if on_cycle:
            # Named in every member's reason, so only the first few: a looping planner's cycle may be thousands long.
            ids = ", ".join(str(t.id) for t in on_cycle[:8]) + (", …" if len(on_cycle) > 8 else "")
            for task in on_cycle:
                self.doom(task.id, f"task {task.id} is part of a dependency cycle among tasks {ids}")
        return ordered + on_cycle + downstream

    @staticmethod
    def _peel_downstream(remaining: list[Task]) -> list[Task]:
        """Tasks left after Kahn's algorithm that only hang below a cycle, in an order where each comes after
        the ones it depends on: peeled from the bottom a layer at a time (the tasks no other left task uses),
        then the layers from the top down, each in plan order."""
        by_id = {task.id: task for task in remaining}
        position = {task.id: i for i, task in enumerate(remaining)}
        used_by = Counter(dep for task in remaining for dep in set(task.dep) if dep in by_id)
        layer = [task for task in remaining if not used_by[task.id]]
        layers: list[list[Task]] = []
        while layer:
            layers.append(layer)
            freed = []
            for task in layer:
                for dep in set(task.dep) & by_id.keys():
                    used_by[dep] -= 1
                    if not used_by[dep]:
                        freed.append(dep)
            layer = [by_id[dep] for dep in sorted(freed, key=position.__getitem__)]
        return [task for layer in reversed(layers) for task in layer]


def check_plan(
    raw_plan: Iterable[Any], workspace: Path | None, tasks: Mapping[str, TaskSpec] = TASKS, thread: Path | None = None
) -> PlanCheck:
    """Validate and repair a raw plan against the task types in `tasks`. Never raises on bad input: problems
    become repairs or doomed tasks. Input files are resolved in `workspace`, or among the outputs of the `thread`'s
    earlier turns (`resolve_input_file`); a workspace of None leaves them unchecked (plans measured against a
    benchmark name files that do not exist)."""
    checker = _Checker(workspace, tasks, thread)
    coerced = [task for i, item in enumerate(raw_plan) if (task := checker.coerce(i, item))]
    ids = {task.id for task in coerced}
    makes = {task.id: tasks[task.task].output for task in coerced if task.task in tasks}
    latest: dict[Modality, int] = {}
    checked = []
    for task in coerced:
        checked.append(checker.check_task(task, ids, makes, latest))
        if task.id in makes:
            latest[makes[task.id]] = task.id
    checker.check.tasks = checker.order(checked)
    return checker.check


def too_many_tasks(tasks: list[Task], limits: Limits) -> str | None:
    """Why the plan is refused under `Limits.max_tasks`; None when it is within it."""
    if limits.max_tasks is None or len(tasks) <= limits.max_tasks:
        return None
    return f"the plan has {len(tasks)} tasks, more than the {limits.max_tasks} Limits.max_tasks allows"
