"""A model folder's digest: every file's path and content count, a check is remembered until a file changes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hugginggraph.tools import folder_digest
from hugginggraph.tools.folder_digest import FolderChanged, check_folder, folder_sha256


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "sub" / "weights.bin").write_bytes(b"\x00\x01weights")
    return folder


def test_the_digest_covers_paths_and_contents_but_not_pycache(folder: Path):
    pinned = folder_sha256(folder)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"written by Python")
    assert folder_sha256(folder) == pinned
    (folder / "sub" / "weights.bin").rename(folder / "weights.bin")
    assert folder_sha256(folder) != pinned


def test_a_passing_check_is_remembered_until_a_file_changes(folder: Path, tmp_path: Path, monkeypatch):
    pinned, stamp = folder_sha256(folder), tmp_path / "stamps" / "model.json"
    check_folder(folder, pinned, stamp)
    monkeypatch.setattr(folder_digest, "folder_sha256", lambda _: pytest.fail("an unchanged folder was read again"))
    check_folder(folder, pinned, stamp)
    monkeypatch.undo()
    (folder / "sub" / "weights.bin").write_bytes(b"\x00\x01WEIGHTS")  # same size, a new modification time
    with pytest.raises(FolderChanged, match=f"not the pinned {pinned}"):
        check_folder(folder, pinned, stamp)


def test_an_added_file_fails_the_check(folder: Path, tmp_path: Path):
    pinned, stamp = folder_sha256(folder), tmp_path / "model.json"
    check_folder(folder, pinned, stamp)
    (folder / "extra.pth").write_text("import os")
    with pytest.raises(FolderChanged):
        check_folder(folder, pinned, stamp)


def test_a_stamp_for_another_digest_does_not_count(folder: Path, tmp_path: Path):
    stamp = tmp_path / "model.json"
    check_folder(folder, folder_sha256(folder), stamp)
    with pytest.raises(FolderChanged):
        check_folder(folder, "0" * 64, stamp)


def test_restored_sizes_and_times_defeat_the_stamp_as_documented(folder: Path, tmp_path: Path):
    pinned, stamp, weights = folder_sha256(folder), tmp_path / "model.json", folder / "sub" / "weights.bin"
    check_folder(folder, pinned, stamp)
    before = weights.stat()
    weights.write_bytes(b"\x00\x01WEIGHTS")
    os.utime(weights, ns=(before.st_atime_ns, before.st_mtime_ns))
    check_folder(folder, pinned, stamp)  # the wheel digests pip checked at install are the guard here
