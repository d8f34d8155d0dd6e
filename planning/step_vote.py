"""Task types put to the vote of labelled step phrases (`PlanningAids.step_vote`).

A small controller says what each step of a plan does, in the request's words, far better than it names the task
type for it: "translate the result into Spanish" comes with text-generation, "find the capital in the document"
with text-to-speech. Each task's step phrase is compared with the demo bank's labelled steps
(`DemoBank.tasks_for_steps`), or put to a chooser trained on many more of them (`tools/step_chooser.py`), and the
vote corrects the type in two cases:

- **a clear vote**: the type the nearest labelled steps clearly agree on replaces the controller's;
- **a doubted type**: a task that makes audio, an image or a video out of text, whose step never speaks of such
  media ("answer the question", "categorize the words" as text-to-speech), was not asked for as that task. It
  takes the type the nearest labelled steps of the other types vote for, even without a clear majority: any
  reading of its step beats one the step rules out.

Either way the task must have the new type's media inputs: its own, or one found for it (a file of that kind its
step names, else the nearest earlier task's output of that kind). A missing text input becomes the step's own
words, e.g. the question for visual-question-answering. A clear vote must also keep the plan's data flow: where
later tasks read the task's output, the new type must make the kind they read (text-to-image whose picture a later
task edits stays an image maker). A doubted type's readers were planned on the same mistake, so they do not bind it.
A new type must not leave a file unread either: where the task is the only one reading a media file and the new type
does not read that kind ("read the text on sign.png aloud", planned as image-to-text of the picture, voted
text-to-speech of the step's words), the planned task stays and a task of the voted type follows it, reading its
output, as the step asks both (or the task stays as planned, when the voted type cannot read what it makes).
No LLM call: embedding the steps takes milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from hugginggraph.planning.references import REFERENCE, references
from hugginggraph.tools.step_chooser import StepTyper
from hugginggraph.tools.tasks import FILE_NAME_OF, TaskSpec

_MEDIA_WORDS = {
    "audio": re.compile(
        r"aloud|audio|speech|speak|spoken|voice|\bsay|\bread\b|narrat|listen|sound|record|podcast|pronounc|vocal|hear"
    ),
    "image": re.compile(
        r"image|picture|draw|illustrat|visual|paint|\bart|photo|sketch|render|poster|depict|graphic|portrait|logo"
    ),
    "video": re.compile(r"video|clip|animat|film|movie|footage"),
}
"""Words a step uses when it asks for media of a kind: a step that makes such media without one of them is doubted."""


def retype_by_steps(
    items: list[Any], judge: StepTyper, tasks: Mapping[str, TaskSpec], request: str = ""
) -> tuple[list[Any], int]:
    """The plan with task types corrected by the step vote (see the module docstring), and how many changed.
    Tasks without a step phrase keep their type. The files `request` names are the ones a retype may not leave
    unread (a file the controller made up may go)."""
    stepped = [
        index
        for index, item in enumerate(items)
        if isinstance(item, dict) and isinstance(item.get("step"), str) and item["step"].strip()
    ]
    if not stepped:
        return items, 0
    read_as = _kinds_read(items)
    revised, retyped = list(items), 0
    split: set[int] = set()
    for index, voted in zip(stepped, judge.tasks_for_steps([items[i]["step"] for i in stepped], tasks), strict=True):
        item, task_id = items[index], items[index].get("id")
        kinds_read = read_as.get(task_id, set()) if isinstance(task_id, int) else set()
        spec = tasks.get(voted) if voted is not None else None
        found = _found_media(item, spec, items[:index], tasks) if spec is not None else None
        if spec is not None and found and (not kinds_read or spec.output in kinds_read):
            item = {**item, "args": {**_args(item), **found}}
        task = voted if voted in _fitting_types(item, tasks, kinds_read) else _doubt_vote(item, judge, tasks)
        if task is None or task == item.get("task"):
            continue
        args = _args(item)
        if _strands_a_file(item, tasks[task], [*items[:index], *items[index + 1 :]], request):
            planned = tasks.get(item["task"]) if isinstance(item.get("task"), str) else None
            if planned is None or planned.output not in tasks[task].inputs or not isinstance(task_id, int):
                continue  # the voted type cannot read what the task makes: the task stays as planned
            args = {**args, planned.output: f"<GENERATED>-{task_id}"}
            split.add(index)
        revised[index] = {
            **item,
            "task": task,
            "args": {name: args.get(name, item["step"]) for name in tasks[task].inputs},
        }
        retyped += 1
    return _followed(revised, split, items, tasks), retyped


def _strands_a_file(item: dict[str, Any], new_type: TaskSpec, others: list[Any], request: str) -> bool:
    """Whether retyping the task would drop a media file the request names, which it reads and no other task of the
    plan reads: that file would then go unread."""
    read_elsewhere = {str(value) for other in others for value in _args(other).values()}
    return any(
        kind not in new_type.inputs
        and kind in FILE_NAME_OF
        and (named := FILE_NAME_OF[kind].search(str(value))) is not None
        and named.group(0) in request
        and str(value) not in read_elsewhere
        for kind, value in _args(item).items()
    )


def _followed(revised: list[Any], split: set[int], planned: list[Any], tasks: Mapping[str, TaskSpec]) -> list[Any]:
    """The plan with each task of `split` put back as planned and followed by its retyped self, a task of the voted
    type reading its output (new ids after the plan's); later tasks that read it as the kind the follower makes
    read the follower instead."""
    result = list(revised)
    next_id = max(
        (item["id"] for item in planned if isinstance(item, dict) and isinstance(item.get("id"), int)), default=-1
    )
    for index in sorted(split, reverse=True):  # from the last back, so that the earlier indices still hold
        next_id += 1
        old, follower = planned[index]["id"], revised[index]
        made = tasks[follower["task"]].output
        result = [item if at == index else _read_from(item, old, next_id, made) for at, item in enumerate(result)]
        result[index : index + 1] = [planned[index], {**follower, "id": next_id, "dep": [old]}]
    return result


def _read_from(item: Any, old: int, new: int, kind: str) -> Any:
    """`item` reading task `new`'s output where it read task `old`'s as `kind`."""
    args = _args(item) if isinstance(item, dict) else {}
    if kind not in args or old not in references({kind: str(args[kind])}):
        return item
    moved_reference = REFERENCE.sub(
        lambda m: f"<GENERATED>-{new}" if int(m.group(1)) == old else m.group(0), str(args[kind])
    )
    moved = {**args, kind: moved_reference}
    still_reads_old = old in references({key: str(value) for key, value in moved.items()})
    dep = item.get("dep")
    if isinstance(dep, list) and not still_reads_old:
        dep = [new if d == old else d for d in dep]
    return {**item, "args": moved, "dep": dep}


def _doubt_vote(item: dict[str, Any], judge: StepTyper, tasks: Mapping[str, TaskSpec]) -> str | None:
    """For a task whose type makes media its step never speaks of, the type of another output kind, with the task's
    media inputs, that its step's nearest labelled steps vote for most; None for any other task. The later tasks
    reading its output do not bind it: they were planned on the same mistake."""
    planned = item.get("task")
    spec = tasks.get(planned) if isinstance(planned, str) else None
    if spec is None or set(spec.inputs) != {"text"} or spec.output not in _MEDIA_WORDS:
        return None
    if _MEDIA_WORDS[spec.output].search(item["step"].lower()):
        return None
    fits = _fitting_types(item, tasks, kinds_read=set())
    others = {name: tasks[name] for name in fits if tasks[name].output != spec.output}
    return judge.tasks_for_steps([item["step"]], others, majority=0.0)[0] if others else None


def _found_media(
    item: dict[str, Any], spec: TaskSpec, earlier: list[Any], tasks: Mapping[str, TaskSpec]
) -> dict[str, str] | None:
    """The media inputs of `spec` the task lacks, each found: a file of that kind its step names ("apply the changes
    to photo.png"), else the output of the nearest earlier task that makes that kind, as a chain of steps means.
    None when one of them is found nowhere."""
    found: dict[str, str] = {}
    for kind in set(spec.inputs) - {"text"} - set(_args(item)):
        named = FILE_NAME_OF[kind].search(item["step"])
        makers = [earlier_item["id"] for earlier_item in earlier if _makes(earlier_item, kind, tasks)]
        if not (named or makers):
            return None
        found[kind] = named.group(0) if named else f"<GENERATED>-{makers[-1]}"
    return found


def _makes(item: Any, kind: str, tasks: Mapping[str, TaskSpec]) -> bool:
    """Whether a planned task, with an id to refer to, makes `kind`."""
    if not isinstance(item, dict) or not isinstance(item.get("id"), int) or not isinstance(item.get("task"), str):
        return False
    spec = tasks.get(item["task"])
    return spec is not None and spec.output == kind


def _args(item: dict[str, Any]) -> dict[str, Any]:
    return item["args"] if isinstance(item.get("args"), dict) else {}


def _fitting_types(item: dict[str, Any], tasks: Mapping[str, TaskSpec], kinds_read: set[str]) -> set[str]:
    """The types this task could take without breaking the plan: it has their media inputs, and they make a kind
    that the later tasks reading its output read (`kinds_read`; any kind when empty)."""
    args = _args(item)
    return {
        name
        for name, spec in tasks.items()
        if set(spec.inputs) - {"text"} <= set(args) and (not kinds_read or spec.output in kinds_read)
    }


def _kinds_read(items: list[Any]) -> dict[int, set[str]]:
    """Task id → the kinds ("image", "text", ...) later tasks read its output as, from their `<GENERATED>-k`
    arguments."""
    read_as: dict[int, set[str]] = {}
    for item in items:
        args = item.get("args") if isinstance(item, dict) else None
        for kind, value in args.items() if isinstance(args, dict) else ():
            for match in REFERENCE.finditer(str(value)):
                read_as.setdefault(int(match.group(1)), set()).add(kind)
    return read_as
