"""Read the text written in an image (signs, labels, scanned pages) with RapidOCR's PP-OCRv4 ONNX models.

The Hub has no task of its own for OCR: its OCR models are `image-to-text` models, and this runner serves that
task for cards whose description says they read text. `rapidocr-onnxruntime` ships both the models (text
detection, orientation and recognition, see `offline_models`) and the code that runs them on onnxruntime; it is
installed `--no-deps` like the other model packages, because it asks for `opencv-python`, which needs a desktop's
OpenGL libraries, where the headless build does the same work (the `ocr` extra installs its dependencies).

The recogniser reads one detected line at a time, and the detector splits widely spaced words of a line into
separate boxes, so boxes are put back into lines by where they lie: a box joins the line whose middle it is level
with, lines go top to bottom and words left to right. A picture with no text in it, a photo of a street, is not an
empty answer but a failed call whose message says what describes photos instead: a captioning model.

The detector boxes a line tightly, and the recogniser stretches each line to the height it reads lines at
(`REREAD_BELOW`); from the tight box of a lower line, ordinary-size print, it reads the words run together
("Total:42.50EUR"). So each such line is read a second time, from its box widened above and below, straightened
and enlarged twice (`line_picture`), which keeps the spaces; the box is reported as detected.

onnxruntime and OpenCV are imported only when the first model loads: without them the load fails with a
`ModelLoadError` that says what to install, and the executor moves on to the next model.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, OneTaskRunner, RunnerOutput
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner
from hugginggraph.tools.runners.task_inputs import read_image

if TYPE_CHECKING:
    from PIL.Image import Image

LIBRARY = "rapidocr"
"""The library that runs the cards this runner runs."""

TASK = "image-to-text"

OCR_EXTRA = "hugginggraph[ocr]"
"""What installs RapidOCR's dependencies with headless OpenCV; the error for a missing install names it."""

MODEL_FILES = {
    "det_model_path": "ch_PP-OCRv4_det_infer.onnx",
    "cls_model_path": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
    "rec_model_path": "ch_PP-OCRv4_rec_infer.onnx",
}
"""RapidOCR's settings for its three models → their files in the card's folder."""

MIN_SCORE = 0.7
"""Pieces read with a lower confidence are dropped. RapidOCR's own threshold (0.5) lets a photo's texture through
as a stray letter or two (a cat's eye read as "O"), which would hide that the photo holds no text; printed text
is read with a confidence near 1."""

REREAD_BELOW = 48
"""Lines lower than this many pixels are read a second time (module docstring). It is the height the recogniser
reads every line at (RapidOCR's `rec_img_shape`): a higher line is shrunk to it, and reads well as it is."""

LINE_MARGIN = 0.2
"""The part of a line's height added above and below it when it is read a second time: a narrower margin leaves
some spaces lost, a wider one takes in strokes of the neighbouring lines."""

ENLARGE = 2
"""How many times larger than in the picture a line is when it is read a second time."""

NO_TEXT = (
    "no text was found in {image}: this model reads the text written in an image, it does not describe photos. "
    "Describing a photo needs a captioning model: let HuggingGraph use the Hugging Face Hub's with --hub "
    "(or HUGGINGGRAPH_HUB=1; set HF_TOKEN for gated models), or add a saved captioning model's folder with "
    "--models-dir"
)


class NoTextFound(ModelLoadError):
    """The image holds no text. A `ModelLoadError` so that the executor moves on to the next candidate (a
    captioning model, when the catalog has one) instead of reading the same image again."""


@dataclass(frozen=True)
class TextBox:
    """One piece of text the recogniser read, and where: the corners of its box in pixels."""

    text: str
    score: float
    corners: Sequence[Sequence[float]]

    @property
    def top(self) -> float:
        return min(y for _x, y in self.corners)

    @property
    def bottom(self) -> float:
        return max(y for _x, y in self.corners)

    @property
    def left(self) -> float:
        return min(x for x, _y in self.corners)

    @property
    def height(self) -> float:
        """The length of the box's left side: the line's height, tilted or not."""
        top_left, _top_right, _bottom_right, bottom_left = self.corners
        return math.dist(top_left, bottom_left)


@dataclass
class _Line:
    boxes: list[TextBox] = field(default_factory=list)

    @property
    def middle(self) -> float:
        return sum(box.top + box.bottom for box in self.boxes) / (2 * len(self.boxes))

    def holds_level(self, box: TextBox) -> bool:
        """Whether `box` lies level with this line: its span covers the line's middle, and its middle lies within
        the span of every box already on the line."""
        return box.top <= self.middle <= box.bottom and all(
            line_box.top <= (box.top + box.bottom) / 2 <= line_box.bottom for line_box in self.boxes
        )


def text_lines(boxes: Sequence[TextBox]) -> list[str]:
    """The boxes' texts put back into lines (module docstring): top to bottom, each line's words left to right."""
    lines: list[_Line] = []
    for box in sorted(boxes, key=lambda box: (box.top + box.bottom) / 2):
        line = next((line for line in lines if line.holds_level(box)), None)
        if line is None:
            lines.append(line := _Line())
        line.boxes.append(box)
    return [" ".join(box.text for box in sorted(line.boxes, key=lambda box: box.left)) for line in lines]


def reread(engine: Any, picture: Image, box: TextBox) -> TextBox:
    """`box` with its text read again from `line_picture`, or as it was when that reading is less sure than
    `MIN_SCORE`."""
    found, _timings = engine(line_picture(picture, box), use_det=False)  # one [text, score]: the picture is the line
    if not found or float(found[0][1]) < MIN_SCORE:
        return box
    text, score = found[0]
    return TextBox(str(text).strip(), float(score), box.corners)


def line_picture(picture: Image, box: TextBox) -> Image:
    """The line in `box` as it is read a second time: the box widened by `LINE_MARGIN` of its height above and below
    (within the picture), straightened into a rectangle and enlarged `ENLARGE` times."""
    from PIL.Image import Resampling, Transform

    top_left, top_right, bottom_right, bottom_left = box.corners  # as RapidOCR orders them
    corners = [  # in the order of PIL's QUAD: top left, bottom left, bottom right, top right
        _beyond(top_left, bottom_left, picture),
        _beyond(bottom_left, top_left, picture),
        _beyond(bottom_right, top_right, picture),
        _beyond(top_right, bottom_right, picture),
    ]
    width, height = math.dist(top_left, top_right), math.dist(corners[0], corners[1])
    size = (max(1, round(ENLARGE * width)), max(1, round(ENLARGE * height)))
    return picture.transform(size, Transform.QUAD, [xy for corner in corners for xy in corner], Resampling.BICUBIC)


def _beyond(corner: Sequence[float], opposite: Sequence[float], picture: Image) -> tuple[float, float]:
    """`corner` moved away from the `opposite` corner by `LINE_MARGIN` of the distance between them, as far as the
    edge of `picture`."""
    (x, y), (x_opposite, y_opposite) = corner, opposite
    x, y = x + LINE_MARGIN * (x - x_opposite), y + LINE_MARGIN * (y - y_opposite)
    return min(max(x, 0), picture.width), min(max(y, 0), picture.height)


def ocr_output(boxes: Sequence[TextBox], image: str) -> RunnerOutput:
    """The boxes' lines as text, one per line; `NoTextFound` when no box holds any text."""
    found = [box for box in boxes if box.text]
    if not found:
        raise NoTextFound(NO_TEXT.format(image=Path(image).name))
    text = "\n".join(text_lines(found))
    regions = [{"text": box.text, "score": box.score, "box": [list(point) for point in box.corners]} for box in found]
    return RunnerOutput(text=text, data={"text": text, "regions": regions})


class RapidOCRRunner(OneTaskRunner, PooledRunner[Any]):
    """Runs `rapidocr` cards for `image-to-text`: the text written in the picture at `inputs["image"]`.

    Engines stay loaded in a `ModelPool`, one load per model id and one call per engine at a time. By default
    nothing is evicted: the three models take tens of megabytes.
    """

    library = LIBRARY
    task = TASK
    reads = ("image", "the path of a picture")

    def __init__(self, threads: int | None = None, max_loaded: int | None = None) -> None:
        self.threads = threads
        """onnxruntime's threads per model; None lets onnxruntime choose (all cores)."""
        self.pool = ModelPool(self._load, max_loaded=max_loaded)
        """`max_loaded` bounds how many engines stay loaded; None, the default, keeps every one."""

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        return await asyncio.to_thread(self._read, card, self.argument(card, task, inputs))

    def _read(self, card: CatalogEntry, image: str) -> RunnerOutput:
        picture = read_image(image)  # an unreadable file fails before any model loads
        with self.pool.use(card) as engine:
            found, _timings = engine(picture)
            boxes = [TextBox(str(text).strip(), float(score), corners) for corners, text, score in found or ()]
            boxes = [reread(engine, picture, box) if box.height < REREAD_BELOW else box for box in boxes]
        return ocr_output(boxes, image)

    def _load(self, card: CatalogEntry) -> Any:
        if card.path is None:
            raise ModelLoadError(f"could not load {card.id}: it has no local folder")
        paths = {setting: Path(card.path, name) for setting, name in MODEL_FILES.items()}
        if missing := [path.name for path in paths.values() if not path.is_file()]:
            raise ModelLoadError(f"could not load {card.id}: {card.path} lacks {', '.join(missing)}")
        try:
            from rapidocr_onnxruntime import RapidOCR
        except ImportError as error:
            raise ModelLoadError(
                f"could not load {card.id}: {type(error).__name__}: {error}; run `pip install {OCR_EXTRA}` "
                "(RapidOCR itself comes with `hugginggraph models install-offline`)"
            ) from error
        settings: dict[str, Any] = {setting: str(path) for setting, path in paths.items()}
        if self.threads:
            settings["intra_op_num_threads"] = self.threads
        try:
            return RapidOCR(text_score=MIN_SCORE, **settings)
        except Exception as error:
            raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
