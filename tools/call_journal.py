"""A durable record of finished model calls, so that a run resumed after a crash never calls a model again for a
result it already had.

LangGraph saves each finished task's result, but in the background, even with "sync" durability (which waits only
between steps): a process killed between a model's reply and that save loses the reply, and the resumed run calls
the model again. The execution stage closes the gap by writing each result here before it goes on, and reading it
back in place of the call when the same step runs again.

A record is one file. It is written whole to a temporary file and renamed into place, which takes a fraction of a
millisecond and needs no wait for the disk, so the moment between a call's end and its record, where a kill still
loses the result, is as short as it can be; `sync` then waits for the disk, so the record also survives a power cut.
Each record carries a digest of its bytes, and one that a power cut left incomplete reads as no record. Values go
through the serializer the checkpoints use, so a value read back equals what the checkpoint would have given back.
Which calls share a key, and so a record, is the caller's choice: everything that makes the call what it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol


class CallJournal:
    """Records in `folder`, one file per key; `serde` turns values into bytes and back. Every method but the
    constructor reads or writes the disk: async callers run them in a thread."""

    def __init__(self, folder: Path, serde: SerializerProtocol) -> None:
        self.folder = folder
        self.serde = serde

    def _path(self, key: Mapping[str, Any]) -> Path:
        """A file named by a digest of the key (a JSON object), so any key is a safe and short file name."""
        digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
        return self.folder / f"{digest[:32]}.call"

    def record(self, key: Mapping[str, Any], value: Any) -> Path:
        """Write `value` under `key` and return the record's file. Once this returns, another process reading `key`
        finds the whole value, even if this one is killed; a kill on the way leaves the earlier record or none,
        never part of one. `sync(path)` then makes it survive a power cut."""
        kind, payload = self.serde.dumps_typed(value)
        self.folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=self.folder, prefix=".", suffix=".tmp", delete=False) as out:
            out.write(f"{kind} {hashlib.sha256(payload).hexdigest()}\n".encode() + payload)
        path = self._path(key)
        os.replace(out.name, path)
        return path

    def sync(self, path: Path) -> None:
        """Wait until the record at `path`, and its name in the folder, are on disk."""
        with path.open("rb+") as record:
            os.fsync(record.fileno())
        if os.name == "posix":  # a rename is on disk once its folder is; elsewhere a folder cannot be opened to sync
            folder = os.open(self.folder, os.O_RDONLY)
            try:
                os.fsync(folder)
            finally:
                os.close(folder)

    def recorded(self, key: Mapping[str, Any]) -> Any | None:
        """The value recorded under `key`, or None when there is none."""
        try:
            return read_record(self._path(key), self.serde)
        except FileNotFoundError:
            return None


def read_record(path: Path, serde: SerializerProtocol) -> Any | None:
    """The value in one record file (a line `<serializer's type tag> <sha256 of the bytes>`, then the bytes); None
    when the bytes do not match their digest: a power cut came between the record's rename and its `sync`."""
    header, _, payload = path.read_bytes().partition(b"\n")
    kind, _, digest = header.decode(errors="replace").partition(" ")
    if hashlib.sha256(payload).hexdigest() != digest:
        return None
    return serde.loads_typed((kind, payload))
