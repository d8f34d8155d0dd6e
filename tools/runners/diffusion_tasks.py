"""Text-to-image and image-to-image with `diffusers`, an optional dependency.

`diffusers` is large and only these two tasks need it, so it is imported when such a model loads, and the runner
only offers to run diffusers models when the package is installed. The `AutoPipeline` classes pick the right
pipeline (Stable Diffusion, SDXL, Kandinsky, ...) from the model folder's `model_index.json`; the number of
denoising steps is the pipeline's own default.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar

from hugginggraph.tools.runners.task_inputs import Inputs, Predictor, read_image


@dataclass(frozen=True)
class DiffusionTask:
    """A task served by a `diffusers` AutoPipeline."""

    library: ClassVar[str] = "diffusers"

    pipeline_class: str
    """The `diffusers` AutoPipeline class that loads the model."""
    call: Callable[[Any, Inputs], Any]
    """Calls the loaded pipeline on the task's arguments and returns the image it made."""

    def load(self, model: str, device: str) -> Predictor:
        import diffusers

        pipeline = getattr(diffusers, self.pipeline_class).from_pretrained(model, trust_remote_code=False)
        return partial(self.call, pipeline.to(device))


def _draw(pipe: Any, inputs: Inputs) -> Any:
    return pipe(prompt=inputs["text"]).images[0]


def _redraw(pipe: Any, inputs: Inputs) -> Any:
    return pipe(prompt=inputs["text"], image=read_image(inputs["image"])).images[0]


DIFFUSION_TASKS: dict[str, DiffusionTask] = {
    "text-to-image": DiffusionTask("AutoPipelineForText2Image", _draw),
    "image-to-image": DiffusionTask("AutoPipelineForImage2Image", _redraw),
}
"""Hub task id -> the AutoPipeline that runs it."""
