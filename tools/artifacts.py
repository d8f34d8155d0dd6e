"""Files in and out of a run: input files resolved against a workspace, outputs written to a run folder.

Every file an expert model produces is written here under a name that depends only on the task, so a resumed
run writes the same paths as an uninterrupted one, and the answer can be checked against the files that exist.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from PIL.Image import Image

ArtifactKind = Literal["image", "audio", "video"]


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


def resolve_input_file(value: str, workspace: Path) -> Path | None:
    """The existing file an argument names, relative to `workspace` unless absolute; None when it is missing."""
    candidate = Path(value).expanduser()
    if not candidate.is_absolute():
        candidate = workspace / candidate
    return candidate.resolve() if candidate.is_file() else None
