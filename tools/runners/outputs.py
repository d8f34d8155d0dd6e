"""Turn whatever a local model returned into a `RunnerOutput`: text, JSON-safe data, files.

Pipelines (and the Auto-class tasks in `auto_tasks.py`, which mimic them) return strings, label lists, boxes,
PIL images, tensors and audio arrays in task-specific shapes; the rest of HuggingGraph only ever sees text, JSON
data and artifact paths. Detections and segments are also drawn on a copy of the input image, as HuggingGPT did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hugginggraph.tools.artifacts import Artifact, ArtifactStore
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.drawing import draw_boxes, tint_segments
from hugginggraph.tools.runners.task_inputs import read_image

if TYPE_CHECKING:
    from PIL.Image import Image

MAX_INLINE_VALUES = 4096
"""Arrays up to this size (an embedding) stay in the result; larger ones (a depth map) would bloat checkpoints."""

TEXT_KEYS = ("generated_text", "summary_text", "translation_text", "text", "answer")
"""Keys under which pipelines put their text output; the first one present is the output's text."""

ANNOTATIONS: dict[str, Callable[[Image, Any], Image]] = {
    "object-detection": draw_boxes,
    "image-segmentation": tint_segments,
}
"""Hub task id -> how its results are drawn on the input image (saved as the task's first image artifact)."""


def to_runner_output(raw: Any, store: ArtifactStore, *, task: str, inputs: Mapping[str, str]) -> RunnerOutput:
    """The `RunnerOutput` for `task`'s raw output on `inputs` (the input image is drawn on for some tasks)."""
    artifacts = [*_annotate(raw, store, task, inputs), *_save_media(raw, store, task)]
    return RunnerOutput(text=_text_of(raw, artifacts), data=jsonable(raw), artifacts=artifacts)


def _is_image(value: Any) -> bool:
    try:
        from PIL.Image import Image
    except ImportError:  # pragma: no cover - pillow is a dependency
        return False
    return isinstance(value, Image)


def _is_audio(value: Any) -> bool:
    return isinstance(value, dict) and "audio" in value and "sampling_rate" in value


def jsonable(value: Any) -> Any:
    """A JSON-safe copy: tensors and arrays become lists, images are left out (they become artifacts)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items() if not _is_image(v)}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value if not _is_image(v)]
    if hasattr(value, "tolist"):
        size = int(getattr(value, "size", 0) if not callable(getattr(value, "numel", None)) else value.numel())
        if size > MAX_INLINE_VALUES:  # a depth map or mask: the artifact carries it, state keeps the shape
            return {"shape": list(value.shape), "dtype": str(value.dtype)}
        return value.tolist()
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)


def _annotate(raw: Any, store: ArtifactStore, task: str, inputs: Mapping[str, str]) -> list[Artifact]:
    """The input image with `task`'s results drawn on it, for tasks that have a drawing."""
    annotate = ANNOTATIONS.get(task)
    if annotate is None or "image" not in inputs:
        return []
    return [store.save_image(annotate(read_image(inputs["image"]), raw), task)]


def _save_media(raw: Any, store: ArtifactStore, label: str) -> list[Artifact]:
    """Save every image and audio clip found in the output, labelled by where it was found (`label` at the top)."""
    found: list[Artifact] = []

    def visit(value: Any, label: str) -> None:
        if _is_image(value):
            found.append(store.save_image(value, label))
        elif _is_audio(value):
            found.append(store.save_wav(value["audio"], value["sampling_rate"], label))
        elif isinstance(value, dict):
            for key, item in value.items():
                visit(item, f"{value.get('label', label)}-{key}" if key == "mask" else str(key))
        elif isinstance(value, list):
            for index, item in enumerate(value):
                visit(item, f"{label}-{index}" if len(value) > 1 else label)

    visit(raw, label)
    return found


def _text_of(raw: Any, artifacts: list[Artifact]) -> str:
    """The one string that stands for the output: generated text, labels, an artifact's path, a shape."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and raw and isinstance(raw[0], list):
        raw = raw[0]  # a batch of one
    if isinstance(raw, list) and not raw:
        return "nothing found"
    records = [raw] if isinstance(raw, dict) else raw if isinstance(raw, list) else []
    if records and all(isinstance(record, dict) for record in records):
        text = _text_of_records(records)
        if text is not None:
            return text
    if artifacts:
        return artifacts[0].path
    if hasattr(raw, "shape"):
        return f"an array of shape {list(raw.shape)}"
    return str(raw)


def _text_of_records(records: Sequence[dict[str, Any]]) -> str | None:
    """Text for a list of result records (or one): None when they hold only media and arrays."""
    first = records[0]
    for key in TEXT_KEYS:
        if key in first:
            return _as_text(first[key])
    if "labels" in first and "scores" in first:  # zero-shot: one record, labels best first
        return ", ".join(_scored(label, score) for label, score in zip(first["labels"], first["scores"], strict=True))
    if "token_str" in first:  # fill-mask: the text with the likeliest filling
        return str(first.get("sequence", first["token_str"]))
    if "entity_group" in first or "entity" in first:  # words grouped into entities, or single tokens
        return ", ".join(f"{item.get('word')}: {item.get('entity_group', item.get('entity'))}" for item in records)
    if "label" in first:
        return ", ".join(_describe(record) for record in records)
    return None


def _as_text(value: Any) -> str:
    """A text field as a string; "no answer" (None, as document question answering may say) is empty."""
    return "" if value is None else str(value)


def _scored(label: Any, score: float | None) -> str:
    return str(label) if score is None else f"{label} ({float(score):.2f})"


def _describe(record: dict[str, Any]) -> str:
    """A label with its score, and where it is when it has a box: `cat (0.98) at (12, 30, 80, 95)`."""
    text = _scored(record["label"], record.get("score"))
    box = record.get("box")
    if isinstance(box, dict):
        text += f" at ({box['xmin']}, {box['ymin']}, {box['xmax']}, {box['ymax']})"
    return text
