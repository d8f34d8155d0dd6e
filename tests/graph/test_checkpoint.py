"""Runs saved in SQLite: the file is set up when it is opened, and one that cannot hold runs is a clear
configuration error before any run starts, left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.base import empty_checkpoint

from hugginggraph import sqlite_checkpointer
from hugginggraph.cli import main
from hugginggraph.cli.exit_codes import EXIT_CONFIG
from hugginggraph.settings import ConfigurationError


async def test_a_new_file_has_its_tables_once_opened(tmp_path: Path):
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        cursor = await saver.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = {row[0] for row in await cursor.fetchall()}
    assert {"checkpoints", "writes"} <= tables


async def test_a_file_saved_before_opens_again_with_its_runs(tmp_path: Path):
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        await saver.aput(config, empty_checkpoint(), {}, {})
    async with sqlite_checkpointer(tmp_path / "runs.sqlite") as saver:
        assert await saver.aget_tuple(config) is not None


@pytest.mark.parametrize("kind", ["not a database", "a folder"])
async def test_a_path_that_cannot_hold_runs_fails_on_opening_and_is_left_alone(tmp_path: Path, kind: str):
    target = tmp_path / "runs.sqlite"
    if kind == "a folder":
        target.mkdir()
    else:
        target.write_text("my notes, not runs\n")
    with pytest.raises(ConfigurationError, match=f"cannot save runs in {target}"):
        async with sqlite_checkpointer(target):
            pytest.fail("opened")
    assert target.is_dir() if kind == "a folder" else target.read_text() == "my notes, not runs\n"


def test_the_cli_says_which_file_cannot_hold_runs(tmp_path: Path, monkeypatch, capsys):
    target = tmp_path / "runs.sqlite"
    target.write_text("my notes, not runs\n")
    monkeypatch.setenv("HUGGINGGRAPH_CHECKPOINT_PATH", str(target))
    assert main(["runs"]) == EXIT_CONFIG
    assert f"cannot save runs in {target} (file is not a database)" in capsys.readouterr().err
