"""A plan's media file that no one gave, replaced by the one file of that kind the request names.

A small controller copies file names from the demos it was shown: asked "What does the sign in sign.png say? Then
read it aloud.", the embedded 1.5B's fix pass planned the right tasks on `flyer.png`, a demo's image. Such a task
could only fail ("input file not found"), so that plan was refused. Where the request names exactly one file of the
kind the argument reads, and that file is in the workspace, the request's file is what was meant. With two or more
of that kind the meaning is open, and the task stays as planned, to fail with its reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugginggraph.planning.references import REFERENCE
from hugginggraph.tools.artifacts import InputFileError, is_remote, resolve_input_file
from hugginggraph.tools.tasks import FILE_NAME_OF, MEDIA_MODALITIES, Modality


def put_named_files(items: list[Any], request: str, workspace: Path) -> list[Any]:
    """The plan with each media argument that names a missing file, of a kind the request names one present file
    of, set to that file."""
    named = {kind: only for kind in MEDIA_MODALITIES if (only := _only_present_file(kind, request, workspace))}
    if not named:
        return items
    return [_with_named_files(item, named, workspace) for item in items]


def _with_named_files(item: Any, named: dict[Modality, str], workspace: Path) -> Any:
    args = item.get("args") if isinstance(item, dict) else None
    if not isinstance(args, dict):
        return item
    fitted = {
        key: named[key] if key in named and _names_missing_file(value, workspace) else value
        for key, value in args.items()
    }
    return {**item, "args": fitted}


def _only_present_file(kind: Modality, request: str, workspace: Path) -> str | None:
    names = set(FILE_NAME_OF[kind].findall(request))
    if len(names) != 1:
        return None
    (name,) = names
    return name if _present(name, workspace) else None


def _names_missing_file(value: Any, workspace: Path) -> bool:
    """A file name, not a reference or an address, of a file the workspace lacks."""
    if not isinstance(value, str) or not value.strip() or REFERENCE.search(value) or is_remote(value):
        return False
    return not _present(value, workspace)


def _present(name: str, workspace: Path) -> bool:
    try:
        resolve_input_file(name, workspace)
    except InputFileError:
        return False
    return True
