"""RapidOCR's PP-OCRv4 models from PyPI reading real rendered text; the reading order, the spaces of small print
and the no-text failure.

RapidOCR and the `ocr` extra are installed by CI; elsewhere the real tests skip and say what to install.
"""

from __future__ import annotations

import asyncio
import re
import sys
from importlib.resources import as_file, files
from pathlib import Path

import pytest
from rendered_text import rendered

from hugginggraph.cli import parser
from hugginggraph.settings import environment_variables
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.ocr import (
    LIBRARY,
    MIN_SCORE,
    MODEL_FILES,
    NO_TEXT,
    OCR_EXTRA,
    REREAD_BELOW,
    TASK,
    NoTextFound,
    RapidOCRRunner,
    TextBox,
    line_picture,
    ocr_output,
    text_lines,
)
from hugginggraph.tools.runners.pool import ModelPool

LINES = ("Fresh bread baked daily", "Open from 7 am to 6 pm")
"""A shop notice: mixed case, words and numbers."""

INVOICE = ("ACME Office Supplies", "Invoice number: 1187", "Date: 3 March 2025", "Total: 42.50 EUR")
"""An invoice's lines, whose spaces RapidOCR loses in ordinary-size print unless the runner reads them again."""


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    pytest.importorskip("cv2", reason=f"OpenCV is not installed: pip install {OCR_EXTRA}")
    models = [model for model in OFFLINE_MODELS if model.library == LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"RapidOCR is not installed ({needed}): hugginggraph models install-offline")
    (card,) = offline_model_cards(tmp_path_factory.mktemp("data"), models)
    return card


@pytest.fixture(scope="module")
def runner() -> RapidOCRRunner:
    return RapidOCRRunner(threads=1)


@pytest.fixture(scope="module")
def notice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rendered(LINES, tmp_path_factory.mktemp("images") / "notice.jpg", size=(760, 220), letters=48, spacing=80)


@pytest.fixture(scope="module")
def invoice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`INVOICE` in ordinary-size print: letters half as high as the notice's, on a page of about its size."""
    path = tmp_path_factory.mktemp("images") / "invoice.jpg"
    return rendered(INVOICE, path, size=(720, 336), letters=24, spacing=60)


@pytest.mark.slow
async def test_the_bundled_sign_reads_back(card, runner, tmp_path: Path):
    with as_file(files("hugginggraph").joinpath("samples", "sign.png")) as sign:
        output = await runner.run(card, TASK, {"image": str(sign)}, ArtifactStore(tmp_path, 0))
    assert output.text == "Platform 4\nClosed for repairs"
    assert output.data["text"] == output.text and all(region["score"] > 0.9 for region in output.data["regions"])


@pytest.mark.slow
async def test_rendered_lines_are_read_in_order(card, runner, notice: Path, tmp_path: Path):
    output = await runner.run(card, TASK, {"image": str(notice)}, ArtifactStore(tmp_path, 0))
    assert output.text.splitlines() == list(LINES)


@pytest.mark.slow
async def test_ordinary_size_print_keeps_the_spaces_between_words(card, runner, invoice: Path, tmp_path: Path):
    output = await runner.run(card, TASK, {"image": str(invoice)}, ArtifactStore(tmp_path, 0))
    assert output.text.splitlines() == list(INVOICE)


@pytest.mark.slow
async def test_a_photo_without_text_fails_and_says_what_describes_photos(card, runner, tmp_path: Path):
    data = pytest.importorskip("skimage.data", reason="scikit-image is not installed (the test extra)")
    from PIL import Image

    photo = tmp_path / "cat.jpg"
    Image.fromarray(data.chelsea()).save(photo)
    with pytest.raises(NoTextFound, match=r"no text was found in cat\.jpg"):
        await runner.run(card, TASK, {"image": str(photo)}, ArtifactStore(tmp_path, 0))


@pytest.mark.slow
async def test_concurrent_calls_load_the_models_once(card, notice: Path, tmp_path: Path):
    runner = RapidOCRRunner(threads=1)
    outputs = await asyncio.gather(
        *(runner.run(card, TASK, {"image": str(notice)}, ArtifactStore(tmp_path, i)) for i in range(2))
    )
    assert runner.loads == 1
    assert len({output.text for output in outputs}) == 1


def box(text: str, left: float, top: float, right: float, bottom: float) -> TextBox:
    return TextBox(text, 0.99, [[left, top], [right, top], [right, bottom], [left, bottom]])


def test_boxes_are_put_back_into_lines_top_to_bottom_and_left_to_right():
    boxes = [
        box("repairs", 300, 190, 420, 232),
        box("4", 330, 62, 360, 130),  # a box a little lower than its neighbour is still on its line
        box("Closed for", 110, 188, 290, 230),
        box("Platform", 100, 60, 320, 128),
    ]
    assert text_lines(boxes) == ["Platform 4", "Closed for repairs"]


def test_a_tall_box_beside_two_lines_starts_a_line_of_its_own():
    boxes = [box("Exit", 10, 0, 50, 20), box("left", 10, 30, 50, 50), box("B", 60, 0, 100, 50)]
    assert text_lines(boxes) == ["Exit", "B", "left"]


def test_no_text_fails_the_call_so_the_next_candidate_is_tried():
    with pytest.raises(NoTextFound) as failure:
        ocr_output([box("", 0, 0, 10, 10)], "/photos/street.png")
    assert isinstance(failure.value, ModelLoadError)  # the executor moves on instead of reading it again
    message = str(failure.value)
    assert "no text was found in street.png" in message and "captioning model" in message


def test_the_no_text_message_names_real_settings():
    assert re.findall(r"--[a-z-]+|HUGGINGGRAPH_\w+", NO_TEXT) == ["--hub", "HUGGINGGRAPH_HUB", "--models-dir"]
    args = parser().parse_args(["run", "describe street.png", "--hub", "--models-dir", "saved"])
    assert args.hub and args.models_dir == [Path("saved")]
    assert environment_variables()["HUGGINGGRAPH_HUB"] == "hub"


class LowLineEngine:
    """A scripted RapidOCR engine: finds one line `height` px high, whose words it reads run together; read again on
    its own (`use_det=False`), the line reads with its spaces, as sure as `score`."""

    def __init__(self, height: float, score: float) -> None:
        self.corners = [[10, 10], [110, 10], [110, 10 + height], [10, 10 + height]]
        self.score = score
        self.lines_read: list[tuple[int, int]] = []
        """The size of each line's picture read again."""

    def __call__(self, picture, use_det: bool = True):
        if not use_det:
            self.lines_read.append(picture.size)
            return [["Total: 42.50 EUR", self.score]], [0.1]
        return [[self.corners, "Total:42.50EUR", 0.99]], [0.1, 0.1, 0.1]


@pytest.mark.parametrize(
    ("height", "score", "lines_read", "text"),
    [
        (20, 0.98, [(200, 56)], "Total: 42.50 EUR"),  # 100 x 20 px, 4 px more above and below, twice as large
        (20, MIN_SCORE - 0.01, [(200, 56)], "Total:42.50EUR"),  # the second reading is not sure enough
        (REREAD_BELOW, 0.98, [], "Total:42.50EUR"),  # the recogniser's own height: read once
    ],
)
async def test_a_low_line_is_read_again_with_a_margin_and_enlarged(height, score, lines_read, text, tmp_path: Path):
    engine = LowLineEngine(height, score)
    runner = RapidOCRRunner()
    runner.pool = ModelPool(lambda _card: engine)
    card = CatalogEntry(id="o", task=TASK, library=LIBRARY)
    page = _white_image(tmp_path, (720, 336))
    output = await runner.run(card, TASK, {"image": str(page)}, ArtifactStore(tmp_path, 0))
    assert engine.lines_read == lines_read and output.text == text
    assert [region["box"] for region in output.data["regions"]] == [engine.corners]  # the box as detected


def test_a_line_at_the_edge_is_widened_only_up_to_the_edge():
    from PIL import Image

    picture = Image.new("RGB", (200, 30), "white")
    assert line_picture(picture, box("edge", 0, 0, 100, 20)).size == (200, 2 * 24)  # 4 px more below, none above


def test_it_runs_only_its_library_for_image_to_text():
    runner = RapidOCRRunner()
    assert runner.can_run(CatalogEntry(id="o", task=TASK, library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="o", task=TASK, library="transformers"))
    assert not runner.can_run(CatalogEntry(id="o", task="image-classification", library=LIBRARY))


async def test_without_its_dependencies_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # makes its import fail
    for name in MODEL_FILES.values():
        (tmp_path / name).write_bytes(b"")
    card = CatalogEntry(id="o", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"pip install hugginggraph\[ocr\]"):
        await RapidOCRRunner().run(card, TASK, {"image": str(_white_image(tmp_path))}, ArtifactStore(tmp_path, 0))


async def test_a_folder_without_the_three_models_is_refused(tmp_path: Path):
    card = CatalogEntry(id="o", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"lacks ch_PP-OCRv4_det_infer\.onnx"):
        await RapidOCRRunner().run(card, TASK, {"image": str(_white_image(tmp_path))}, ArtifactStore(tmp_path, 0))


def _white_image(folder: Path, size: tuple[int, int] = (32, 32)) -> Path:
    from PIL import Image

    path = folder / "white.png"
    Image.new("RGB", size, "white").save(path)
    return path
