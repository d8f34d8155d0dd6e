"""A plan's reference to an earlier result that no task of the plan makes, read as the file the chat's last turn made.

Asked "Transcribe the recording you just made." after a turn that read a sentence aloud, the embedded 1.5B planned
speech recognition of `<GENERATED>-0`: the recording, but as the output of a task 0 that this plan does not have
before it, which validation dooms as a self-reference. A plan's references name its own tasks only; a media argument
that names no other task of the plan can only mean an earlier result of the chat. Where the thread's last turn
made exactly one file of the kind the argument reads, that file is what was meant, named as the planner is shown it
(`turn-1/task-0-text-to-speech.wav`, tools/artifacts.py). With none or several, the task stays as planned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggraph.planning.references import REFERENCE
from hugginggraph.tools.tasks import FILE_NAME_OF, MEDIA_MODALITIES


def put_earlier_outputs(items: list[Any], thread: Path, last_turn: int) -> list[Any]:
    """The plan with each media argument that references no other task of the plan (its own id, or an id no task
    has) set to the one file of its kind that turn `last_turn` of the thread made, where there is exactly one. A
    reference to a task written later stays: validation puts dependencies first."""
    made = _only_files(thread / f"turn-{last_turn}")
    if not made:
        return items
    ids = {item["id"] for item in items if isinstance(item, dict) and isinstance(item.get("id"), int)}
    fitted = []
    for item in items:
        args = item.get("args") if isinstance(item, dict) else None
        if isinstance(args, dict):
            others = ids - {item.get("id")}
            item = {**item, "args": {key: _fitted(key, value, others, made) for key, value in args.items()}}
        fitted.append(item)
    return fitted


def _fitted(key: str, value: Any, others: set[int], made: dict[str, str]) -> Any:
    match = REFERENCE.fullmatch(value.strip()) if isinstance(value, str) else None
    if key in made and match is not None and int(match.group(1)) not in others:
        return made[key]
    return value


def _only_files(turn: Path) -> dict[str, str]:
    """Per media kind, `turn-N/<name>` of the one file of that kind the turn's folder holds, for the kinds it holds
    exactly one of."""
    try:
        names = [path.name for path in turn.iterdir() if path.is_file()]
    except OSError:  # no such turn, or no folder: it made nothing
        return {}
    of_kind = {kind: [name for name in names if FILE_NAME_OF[kind].fullmatch(name)] for kind in MEDIA_MODALITIES}
    return {kind: f"{turn.name}/{found[0]}" for kind, found in of_kind.items() if len(found) == 1}
