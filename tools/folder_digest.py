"""One sha256 for a model folder's files, checked against the digest the project pinned, and remembered so that a
process start does not re-read hundreds of MB.

The digest covers every file's relative path and content (`__pycache__` aside: Python writes it). What a check
remembers is the size and modification time of each file it read, in a stamp under the data directory: while they
are unchanged the folder counts as checked, and any reinstall, edit or added file changes them and brings a full
check. A tamperer who restores sizes and times on purpose defeats the stamp, not the wheel digests pip checked at
install (`model_packages`); SECURITY.md says so.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

CHUNK = 1 << 22


class FolderChanged(ValueError):
    """A folder's files are not the ones pinned."""


def folder_files(folder: Path) -> list[Path]:
    """The files a folder digest covers, in the order it reads them."""
    return sorted(
        (path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts),
        key=lambda path: path.relative_to(folder).as_posix(),
    )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as data:
        while block := data.read(CHUNK):
            digest.update(block)
    return digest.hexdigest()


def folder_sha256(folder: Path) -> str:
    """The digest of `relative path NUL file sha256 LF` for every file, sorted by path."""
    lines = (f"{path.relative_to(folder).as_posix()}\0{file_sha256(path)}\n" for path in folder_files(folder))
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _stat_signature(folder: Path) -> list[list[object]]:
    signature: list[list[object]] = []
    for path in folder_files(folder):
        stat = path.stat()
        signature.append([path.relative_to(folder).as_posix(), stat.st_size, stat.st_mtime_ns])
    return signature


def check_folder(folder: Path, expected: str, stamp: Path) -> None:
    """Return when `folder`'s files have the digest `expected`; raise FolderChanged when they do not.

    Reads the files only when `stamp` (a JSON file this function owns) does not record this digest for the files'
    current sizes and times; a passing check rewrites it.
    """
    signature = _stat_signature(folder)
    try:
        remembered = json.loads(stamp.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        remembered = None
    if remembered == {"sha256": expected, "files": signature}:
        return
    actual = folder_sha256(folder)
    if actual != expected:
        raise FolderChanged(f"the files in {folder} have sha256 {actual}, not the pinned {expected}")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    staging = stamp.with_name(f".{stamp.name}.{uuid.uuid4().hex}.partial")  # processes may check at once
    staging.write_text(json.dumps({"sha256": expected, "files": signature}), encoding="utf-8")
    staging.replace(stamp)
