"""A task's inputs as its model reads them: references to earlier outputs resolved, input files checked again."""

from __future__ import annotations

from pathlib import Path

from hugginggraph.graph.state import Task, TaskResult
from hugginggraph.planning.references import REFERENCE
from hugginggraph.tools.artifacts import is_remote, read_text_file, resolve_input_file
from hugginggraph.tools.tasks import MEDIA_MODALITIES


class MissingInput(Exception):
    """A dependency succeeded but did not produce what an argument needs (e.g. no image)."""


def resolve_inputs(
    task: Task, done: dict[int, TaskResult], workspace: Path, thread: Path | None = None
) -> dict[str, str]:
    """The task's arguments with each `<GENERATED>-k` replaced by task k's output: for a media argument, the
    path of k's first artifact of that kind; for text, k's text output (spliced into the surrounding text). Text
    that is only the name of a text file in the workspace is that file's contents (`read_text_file`).

    A media file is resolved in the workspace (or among the `thread`'s earlier outputs) again, as validation did
    (raising InputFileError): the plan may come from a checkpoint written under other rules, and the file may have
    been swapped for a symlink leading out."""
    inputs: dict[str, str] = {}
    for key, value in task.args.items():
        if key in MEDIA_MODALITIES and (match := REFERENCE.fullmatch(value.strip())):
            source = done[int(match.group(1))]
            artifact = next((a for a in source.artifacts if a.kind == key), None)
            if artifact is None:
                raise MissingInput(f"task {source.task_id} ({source.task}) produced no {key} for this task")
            inputs[key] = artifact.path
        elif key in MEDIA_MODALITIES and not is_remote(value):
            inputs[key] = str(resolve_input_file(value, workspace, thread))
        elif key not in MEDIA_MODALITIES and (contents := read_text_file(value, workspace)) is not None:
            inputs[key] = contents
        else:
            inputs[key] = REFERENCE.sub(lambda m: done[int(m.group(1))].text or "", value)
    return inputs
