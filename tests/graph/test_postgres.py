"""Runs saved in PostgreSQL: the URL setting chooses the checkpointer, a password never shows in a message, and a
run SIGKILLed mid-execution resumes from a real, throwaway PostgreSQL server (the crash-recovery scenario of
test_crash_recovery.py, on the other backend)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_server import throwaway_server
from pytest_postgresql.executors import PostgreSQLExecutor
from pytest_postgresql.janitor import DatabaseJanitor
from test_crash_recovery import check_sigkill_and_resume

from hugginggraph import athreads, open_checkpointer
from hugginggraph.cli import main
from hugginggraph.cli.exit_codes import EXIT_CONFIG
from hugginggraph.graph.checkpoint import redact
from hugginggraph.settings import ConfigurationError, load_settings

NO_EXTRA = "the postgres extra is not installed: pip install -e '.[postgres]'"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgreSQLExecutor]:
    """A throwaway PostgreSQL server for the session."""
    pytest.importorskip("langgraph.checkpoint.postgres", reason=NO_EXTRA)
    with throwaway_server() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server: PostgreSQLExecutor, request: pytest.FixtureRequest) -> Iterator[str]:
    """A fresh database on the session's server, named after the test and dropped after it, so no test sees another's
    runs."""
    name = re.sub(r"\W", "_", request.node.name)[:63]
    server = postgres_server
    with DatabaseJanitor(user=server.user, host=server.host, port=server.port, dbname=name):
        yield f"postgresql://{server.user}@{server.host}:{server.port}/{name}"


@pytest.mark.slow
def test_a_run_killed_mid_execution_resumes_from_postgres(tmp_path: Path, postgres_url: str):
    """Also shows the state models round-trip through PostgreSQL: the resumed run's results, partly read back
    from the database, equal the uninterrupted run's."""
    check_sigkill_and_resume(tmp_path, postgres_url)
    assert asyncio.run(athreads(checkpoint_url=postgres_url)) == ["reference", "interrupted"]


@pytest.mark.slow
async def test_a_url_chooses_postgres_and_no_url_sqlite(tmp_path: Path, postgres_url: str):
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    async with open_checkpointer(postgres_url, tmp_path / "unused.sqlite") as saver:
        assert isinstance(saver, AsyncPostgresSaver)
    assert not (tmp_path / "unused.sqlite").exists()
    async with open_checkpointer(None, tmp_path / "runs.sqlite") as saver:
        assert isinstance(saver, AsyncSqliteSaver)


@pytest.mark.parametrize(
    ("url", "masked"),
    [
        ("postgresql://hg:s3cret@db.example:5432/runs", "postgresql://hg:***@db.example:5432/runs"),
        ("postgresql://hg:s%40cret@db/runs", "postgresql://hg:***@db/runs"),
        (
            "postgresql://db/runs?user=hg&password=s3cret&sslmode=require",
            "postgresql://db/runs?user=hg&password=***&sslmode=require",
        ),
        ("postgresql://hg@db/runs", "postgresql://hg@db/runs"),
        ("postgresql://hg:s3cret@[::1/runs", "***"),
    ],
)
def test_a_password_in_a_checkpoint_url_is_masked(url: str, masked: str):
    assert redact(url, url) == masked


def test_a_password_is_masked_in_any_message_raw_or_decoded():
    assert redact('bad token "s%40cret" or "s@cret"', "postgresql://hg:s%40cret@db/runs") == 'bad token "***" or "***"'


def test_a_checkpoint_url_is_read_from_the_environment_and_kept_secret(tmp_path: Path, monkeypatch):
    url = "postgresql://hg:s3cret@db/runs"
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("HUGGINGGRAPH_CHECKPOINT_URL", url)
    settings = load_settings()
    assert settings.checkpoint_url is not None and settings.checkpoint_url.get_secret_value() == url
    assert "s3cret" not in repr(settings) and "s3cret" not in settings.model_dump_json()


async def test_a_url_that_is_not_postgres_is_a_configuration_error():
    with pytest.raises(ConfigurationError, match=re.escape("mysql://hg:***@db/runs is not a PostgreSQL one")):
        async with open_checkpointer("mysql://hg:s3cret@db/runs"):
            pass


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://hg:s3cret@127.0.0.1:1/runs",  # nothing listens on port 1
        "postgresql://hg:s3cret%zz@127.0.0.1:1/runs",  # a bad escape, which libpq quotes in its message
    ],
)
def test_an_unusable_database_fails_as_configuration_without_showing_the_password(url: str, capsys):
    pytest.importorskip("langgraph.checkpoint.postgres", reason=NO_EXTRA)
    assert main(["runs", "--checkpoint-url", url]) == EXIT_CONFIG
    printed = capsys.readouterr()
    assert "cannot open the checkpoint database postgresql://hg:***@127.0.0.1:1/runs" in printed.err
    assert "s3cret" not in printed.out + printed.err
