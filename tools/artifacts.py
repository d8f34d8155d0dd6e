"""Files in and out of a run: input files resolved inside a workspace, outputs written to a run folder.

Every file an expert model produces is written here under a name that depends only on the task and the turn of the
thread, so a resumed run writes the same paths as an uninterrupted one, a later turn never overwrites a file an
earlier answer names, and the answer can be checked against the files that exist.

Plans are written by an LLM that reads untrusted text, so a plan is never trusted to name a file: an input file
must lie inside the workspace once `..` and symlinks are resolved, and outputs go only under the run's folder,
whose name no thread id can steer out of `artifacts_dir` (SECURITY.md).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from hugginggraph.tools.tasks import TEXT_EXTENSIONS

if TYPE_CHECKING:
    from PIL.Image import Image

ArtifactKind = Literal["image", "audio", "video"]

_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,10}")
_SAFE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}")


class Artifact(BaseModel):
    """A media file produced by a task."""

    model_config = ConfigDict(frozen=True)

    kind: ArtifactKind
    path: str
    """Absolute path of the file."""


class ArtifactStore:
    """The folder where one task writes its outputs (one folder per run, files named after the task)."""

    def __init__(self, run_dir: Path, task_id: int) -> None:
        self.run_dir = run_dir
        self.task_id = task_id

    def _path(self, label: str, suffix: str) -> Path:
        if not _SUFFIX.fullmatch(suffix):  # a suffix holding a separator would write outside the run folder
            raise ValueError(f"an artifact suffix is a dot and letters or digits, e.g. '.wav', not {suffix!r}")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        safe_label = re.sub(r"[^A-Za-z0-9_-]+", "-", label).strip("-") or "output"
        return self.run_dir / f"task-{self.task_id}-{safe_label}{suffix}"

    def save_image(self, image: Image, label: str = "image") -> Artifact:
        path = self._path(label, ".png")
        image.save(path, format="PNG")
        return Artifact(kind="image", path=str(path))

    def save_bytes(self, data: bytes, suffix: str, kind: ArtifactKind, label: str = "output") -> Artifact:
        """Write an already encoded file as is: the audio or video a remote model sent back, in its own format."""
        path = self._path(label, suffix)
        path.write_bytes(data)
        return Artifact(kind=kind, path=str(path))

    def save_wav(self, samples: object, sampling_rate: int, label: str = "audio") -> Artifact:
        """Write mono float samples in [-1, 1] as 16-bit PCM WAV, with the standard library only."""
        import wave

        import numpy as np

        pcm = (np.clip(np.asarray(samples, dtype=np.float32).reshape(-1), -1.0, 1.0) * 32767).astype("<i2")
        path = self._path(label, ".wav")
        with wave.open(str(path), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(int(sampling_rate))
            out.writeframes(pcm.tobytes())
        return Artifact(kind="audio", path=str(path))


def is_remote(value: str) -> bool:
    return value.startswith(("http://", "https://"))


class InputFileError(ValueError):
    """An input file a plan names cannot be used: it is missing, or it lies outside the workspace."""


TEXT_FILE_ARGUMENT = re.compile(
    rf"\s*(?P<name>[\w./~-]*[\w-]\.(?:{TEXT_EXTENSIONS}))(?P<question>\s+Question:.*?)?\s*", re.IGNORECASE | re.DOTALL
)
"""A text argument that is a text file's name, alone or followed by a question about it, the way a plan asks about
a passage (`<GENERATED>-0 Question: When does it open?`)."""
MAX_TEXT_FILE_BYTES = 1 << 20
"""The largest text file read into an argument: far beyond what any text model's context takes, yet small enough
that a mistaken name (a log file) cannot fill the run's state and checkpoints."""


def text_file_path(value: str, workspace: Path) -> Path | None:
    """The text file a text argument names, when it is one file name, alone or followed by a question (see
    `read_text_file`); None for any other text.

    Raises InputFileError when the file is missing, outside the workspace or over `MAX_TEXT_FILE_BYTES`.
    """
    named = _named_text_file(value, workspace)
    return named[0] if named else None


def read_text_file(value: str, workspace: Path) -> str | None:
    """A text argument that names a text file, with the file's contents in place of its name: a user who asks to
    "summarize notes.txt" means its words, not its name, and "notes.txt Question: when?" asks about those words.
    None for any other text.

    Raises InputFileError when the file is missing, outside the workspace, over `MAX_TEXT_FILE_BYTES` or not
    UTF-8 text.
    """
    if (named := _named_text_file(value, workspace)) is None:
        return None
    path, question = named
    try:
        contents = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"input file {path.name!r} is not UTF-8 text") from None
    return f"{contents.rstrip()}{question}" if question else contents


def _named_text_file(value: str, workspace: Path) -> tuple[Path, str] | None:
    """The text file `value` names and the question after the name ("" when none), or None."""
    if (match := TEXT_FILE_ARGUMENT.fullmatch(value)) is None:
        return None
    path = resolve_input_file(match["name"], workspace)
    if (size := path.stat().st_size) > MAX_TEXT_FILE_BYTES:
        raise InputFileError(
            f"input file {match['name']!r} is {size:,} bytes; text files are read up to {MAX_TEXT_FILE_BYTES:,}"
        )
    return path, match["question"] or ""


def inside_workspace(value: str, workspace: Path) -> Path:
    """The absolute path an argument names, `..` and symlinks resolved, whether or not the file exists.

    Raises InputFileError when it is not a usable path or lies outside the workspace.
    """
    root = workspace.resolve()
    try:
        path = (root / Path(value).expanduser()).resolve()  # an absolute `value` replaces the root
        inside = path.is_relative_to(root)
    except (OSError, ValueError, RuntimeError) as error:  # NUL bytes, names too long, symlink loops
        raise InputFileError(f"input file {value!r} is not a usable path ({error})") from None
    if not inside:
        raise InputFileError(
            f"input file {value!r} is outside the workspace {root}: copy it into the workspace, or run with the "
            "workspace set to a folder that holds it"
        )
    return path


def resolve_input_file(value: str, workspace: Path, thread: Path | None = None) -> Path:
    """The existing file an argument names, as an absolute path with `..` and symlinks resolved: relative to
    `workspace`, or absolute, and in both cases inside it; or else, given the `thread`'s folder (`run_folder`), a
    file an earlier turn of that thread made, named from that folder (`turn-1/task-0-text-to-speech.wav`, as the
    planner is shown the chat) or by its full path.

    Raises InputFileError when the file is missing or lies outside the workspace (an absolute path elsewhere, a
    `..` that climbs out, a symlink that points out) and is no output of the thread, so a plan cannot make a model
    read, or a remote endpoint receive, any other file on this machine, nor another thread's outputs.
    """
    try:
        return _workspace_file(value, workspace)
    except InputFileError:
        if thread is not None and (made := _thread_output(value, thread)) is not None:
            return made
        raise


_TURN = re.compile(r"turn-[0-9]+")
"""A turn's folder in its thread's (`turn_folder`)."""


def _thread_output(value: str, thread: Path) -> Path | None:
    """The file `value` names among the outputs of the thread's turns (`turn-N/<file>`), or None."""
    root = thread.resolve()
    try:
        path = (root / Path(value).expanduser()).resolve()
        made = path.parent.parent == root and _TURN.fullmatch(path.parent.name) is not None and path.is_file()
    except (OSError, ValueError, RuntimeError):
        return None
    return path if made else None


def _workspace_file(value: str, workspace: Path) -> Path:
    root = workspace.resolve()
    path = inside_workspace(value, workspace)
    try:
        exists = path.is_file()
    except OSError as error:
        raise InputFileError(f"input file {value!r} is not a usable path ({error})") from None
    if not exists:
        raise InputFileError(f"input file {value!r} not found (looked in {root})")
    return path


def run_folder(artifacts_dir: Path, thread_id: str) -> Path:
    """The folder a run on `thread_id` writes its outputs to: a sub-folder of `artifacts_dir` named after the thread.

    A thread id is chosen by the caller (the CLI's `--thread`, an API user), so one that is not a plain name
    (`../x`, `/tmp/x`, an empty or over-long id) is folded into one, with a digest of the id keeping distinct
    threads apart; the same id always gives the same folder, so a resumed run writes where it started.
    """
    if _SAFE_NAME.fullmatch(thread_id):
        return artifacts_dir / thread_id
    digest = hashlib.sha256(thread_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", thread_id).strip("-")[:40]
    return artifacts_dir / f"{readable}-{digest}".lstrip("-")


def turn_folder(artifacts_dir: Path, thread_id: str, turn: int) -> Path:
    """The folder one turn of a thread writes its outputs to, inside the thread's `run_folder`: files are named after
    their task (`task-0-...`), and a later turn's task 0 would otherwise overwrite the recording or image an earlier
    answer, still in the chat, names."""
    return run_folder(artifacts_dir, thread_id) / f"turn-{turn}"


def paths_from_thread(text: str, thread: Path) -> str:
    """`text` with the path of every file the thread's turns made written from the thread's folder on
    (`turn-1/task-2-text-to-speech.wav`, which `resolve_input_file` reads back): without the data directory and the
    thread's id, the same in every turn and unique to the thread."""
    return re.sub(rf"{re.escape(str(thread))}[/\\](turn-[0-9]+[/\\][\w.-]+)", r"\1", text)
