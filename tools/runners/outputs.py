"""Turn whatever a `transformers` pipeline returned into a `RunnerOutput`: text, JSON-safe data, files.

Pipelines return strings, label lists, PIL images, tensors and audio arrays in task-specific shapes; the rest
of HuggingGraph only ever sees text, JSON data and artifact paths.
"""

from __future__ import annotations

from typing import Any

from hugginggraph.tools.artifacts import Artifact, ArtifactStore
from hugginggraph.tools.runners.base import RunnerOutput


def _is_image(value: Any) -> bool:
    try:
        from PIL.Image import Image
    except ImportError:  # pragma: no cover - pillow is a dependency
        return False
    return isinstance(value, Image)


def _is_audio(value: Any) -> bool:
    return isinstance(value, dict) and "audio" in value and "sampling_rate" in value


MAX_INLINE_VALUES = 4096
"""Arrays up to this size (an embedding) stay in the result; larger ones (a depth map) would bloat checkpoints."""


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


def _save_media(raw: Any, store: ArtifactStore) -> list[Artifact]:
    """Save every image and audio clip found in the pipeline output, labelled by where it was found."""
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

    visit(raw, "output")
    return found


def _text_of(raw: Any, artifacts: list[Artifact]) -> str:
    """The one string that stands for the output: generated text, the top label, or the artifact path."""
    if isinstance(raw, str):
        return raw
    if isinstance(raw, list) and raw and isinstance(raw[0], list):
        raw = raw[0]
    if isinstance(raw, list) and raw and isinstance(raw[0], dict):
        first = raw[0]
        for key in ("generated_text", "summary_text", "translation_text", "text", "answer"):
            if isinstance(first.get(key), str):
                return first[key]
        if "label" in first:
            return ", ".join(
                f"{item['label']} ({float(item.get('score', 0.0)):.2f})" for item in raw if "label" in item
            )
        if "token_str" in first:
            return str(first.get("sequence", first["token_str"]))
        if "entity" in first or "entity_group" in first:
            return ", ".join(f"{item.get('word')}: {item.get('entity_group', item.get('entity'))}" for item in raw)
    if isinstance(raw, dict):
        for key in ("generated_text", "text", "answer", "label"):
            if isinstance(raw.get(key), str):
                return raw[key]
        if "labels" in raw and "scores" in raw:
            return ", ".join(
                f"{label} ({score:.2f})" for label, score in zip(raw["labels"], raw["scores"], strict=False)
            )
    if artifacts:
        return artifacts[0].path
    if isinstance(raw, list):
        return f"a list of {len(raw)} values"
    return str(raw)


def to_runner_output(raw: Any, store: ArtifactStore) -> RunnerOutput:
    artifacts = _save_media(raw, store)
    return RunnerOutput(text=_text_of(raw, artifacts), data=jsonable(raw), artifacts=artifacts)
