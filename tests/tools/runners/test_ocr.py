"""RapidOCR's PP-OCRv4 models from PyPI reading real rendered text; the reading order and the no-text failure.

RapidOCR and the `ocr` extra are installed by CI; elsewhere the real tests skip and say what to install.
"""

from __future__ import annotations

import asyncio
import re
import sys
from importlib.resources import as_file, files
from pathlib import Path

import pytest

from hugginggraph.cli import parser
from hugginggraph.settings import ENVIRONMENT
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.ocr import (
    LIBRARY,
    MODEL_FILES,
    NO_TEXT,
    OCR_EXTRA,
    TASK,
    NoTextFound,
    RapidOCRRunner,
    TextBox,
    ocr_output,
    text_lines,
)

LINES = ("Fresh bread baked daily", "Open from 7 am to 6 pm")
"""A shop notice: mixed case, words and numbers."""


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> ModelCard:
    pytest.importorskip("cv2", reason=f"OpenCV is not installed: pip install {OCR_EXTRA}")
    models = [model for model in OFFLINE_MODELS if model.library == LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"RapidOCR is not installed: pip install --no-deps {needed}")
    (card,) = offline_model_cards(tmp_path_factory.mktemp("data"), models)
    return card


@pytest.fixture(scope="module")
def runner() -> RapidOCRRunner:
    return RapidOCRRunner(threads=1)


@pytest.fixture(scope="module")
def notice(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`LINES` rendered black on white in Pillow's own font, as a JPEG."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.load_default(size=48)
    image = Image.new("RGB", (760, 220), "white")
    draw = ImageDraw.Draw(image)
    for row, line in enumerate(LINES):
        draw.text((40, 40 + 80 * row), line, font=font, fill="black")
    path = tmp_path_factory.mktemp("images") / "notice.jpg"
    image.save(path, quality=90)
    return path


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
    assert ENVIRONMENT["HUGGINGGRAPH_HUB"] == "hub"


def test_it_runs_only_its_library_for_image_to_text():
    runner = RapidOCRRunner()
    assert runner.can_run(ModelCard(id="o", task=TASK, library=LIBRARY))
    assert not runner.can_run(ModelCard(id="o", task=TASK, library="transformers"))
    assert not runner.can_run(ModelCard(id="o", task="image-classification", library=LIBRARY))


async def test_without_its_dependencies_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "rapidocr_onnxruntime", None)  # makes its import fail
    for name in MODEL_FILES.values():
        (tmp_path / name).write_bytes(b"")
    card = ModelCard(id="o", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"pip install hugginggraph\[ocr\]"):
        await RapidOCRRunner().run(card, TASK, {"image": str(_white_image(tmp_path))}, ArtifactStore(tmp_path, 0))


async def test_a_folder_without_the_three_models_is_refused(tmp_path: Path):
    card = ModelCard(id="o", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r"lacks ch_PP-OCRv4_det_infer\.onnx"):
        await RapidOCRRunner().run(card, TASK, {"image": str(_white_image(tmp_path))}, ArtifactStore(tmp_path, 0))


def _white_image(folder: Path) -> Path:
    from PIL import Image

    path = folder / "white.png"
    Image.new("RGB", (32, 32), "white").save(path)
    return path
