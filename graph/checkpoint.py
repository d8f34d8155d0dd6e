"""Where runs are saved: SQLite in the user's data directory by default, PostgreSQL when a `postgresql://` URL is
set (the scale option: many processes and machines resuming each other's runs).

Both savers are the async ones: SQLite's sync saver refuses async graphs, and HuggingGraph's executor is async.
A checkpoint URL may carry a password, so every message about one goes through `redact` first.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.types import Durability
from pydantic import SecretStr

from hugginggraph.errors import ConfigurationError
from hugginggraph.paths import default_data_dir

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
"""The URL prefixes libpq accepts; any other checkpoint URL is a configuration error."""

DURABILITY: Durability = "sync"
"""How every saved run is run: each step's checkpoint is written before the next step starts, not alongside it
(LangGraph's default, "async"). LangGraph's own `__start__` is the first step, so the request is saved before
planning begins and a run killed at any later point can be resumed; under "async" a kill during planning could come
before anything was saved. The cost is one checkpoint write waited for per step, a few milliseconds on SQLite
(benchmarks/durability.py)."""


def default_checkpoint_path() -> Path:
    return default_data_dir() / "checkpoints.sqlite"


@asynccontextmanager
async def open_checkpointer(
    url: str | SecretStr | None = None, path: Path | str | None = None
) -> AsyncIterator[BaseCheckpointSaver]:
    """The checkpointer the settings choose, open for the block: PostgreSQL when `url` is set (its tables are
    created or migrated on opening), else SQLite on `path` (default: `default_checkpoint_path()`)."""
    secret = url.get_secret_value() if isinstance(url, SecretStr) else url
    if not secret:
        opened = sqlite_checkpointer(path)
    elif secret.startswith(POSTGRES_SCHEMES):
        opened = postgres_checkpointer(secret)
    else:
        raise ConfigurationError(
            f"checkpoint URL {redact(secret, secret)} is not a PostgreSQL one (postgresql://user:password@host/db); "
            "unset it to save runs in SQLite, whose file is `checkpoint_path`"
        )
    async with opened as saver:
        yield saver


@asynccontextmanager
async def sqlite_checkpointer(path: Path | str | None = None) -> AsyncIterator[BaseCheckpointSaver]:
    """An `AsyncSqliteSaver` on `path` (default: `default_checkpoint_path()`), open and set up for the block.

    Its tables are made (or found) on opening, not by the first run: a file that cannot hold checkpoints is a
    `ConfigurationError` naming it before any run starts, and a run does not wait for the setup. Errors inside the
    block pass unchanged.
    """
    import sqlite3

    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    target = Path(path) if path is not None else default_checkpoint_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_dir():  # told apart first: aiosqlite's thread, failing to open it, outlives the event loop noisily
        raise _unusable_sqlite(target, "a folder")
    async with AsyncExitStack() as stack:
        try:
            connection = await stack.enter_async_context(aiosqlite.connect(str(target)))
            saver = AsyncSqliteSaver(connection, serde=checkpoint_serializer())
            await saver.setup()  # idempotent: the saver calls it again before each use, then it returns at once
        except sqlite3.DatabaseError as error:
            raise _unusable_sqlite(target, str(error)) from error
        yield saver


def _unusable_sqlite(target: Path, why: str) -> ConfigurationError:
    return ConfigurationError(
        f"cannot save runs in {target} ({why}): set checkpoint_path (HUGGINGGRAPH_CHECKPOINT_PATH) to a new file "
        "or to a SQLite database of HuggingGraph's runs"
    )


@asynccontextmanager
async def postgres_checkpointer(url: str) -> AsyncIterator[BaseCheckpointSaver]:
    """An `AsyncPostgresSaver` on the database at `url`, set up and open for the block.

    Failing to connect or to set up is a `ConfigurationError` whose message is redacted and whose cause is dropped:
    libpq quotes the bad part of a URL, which can be the password itself. Errors inside the block pass unchanged.
    """
    try:
        import psycopg
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    except ImportError:
        raise ConfigurationError(
            "a PostgreSQL checkpoint URL needs the postgres extra: pip install 'hugginggraph[postgres]'"
        ) from None

    async with AsyncExitStack() as stack:
        try:
            saver = await stack.enter_async_context(
                AsyncPostgresSaver.from_conn_string(url, serde=checkpoint_serializer())
            )
            await saver.setup()  # idempotent: creates the tables once, then only reads the migration version
        except psycopg.Error as error:
            raise ConfigurationError(
                f"cannot open the checkpoint database {redact(url, url)}: {redact(str(error).strip(), url)}; "
                "check the URL and that the server is running"
            ) from None
        yield saver


def redact(text: str, url: str) -> str:
    """`text` with every form of `url`'s password (in the user part or a `password=` parameter, raw or decoded)
    replaced by `***`; a URL too malformed to find its password in is hidden whole."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return text.replace(url, "***")
    raw = [password or "", *re.findall(r"[?&]password=([^&#]*)", url)]
    for secret in sorted({form for value in raw for form in (value, unquote(value))} - {""}, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def checkpoint_serializer() -> JsonPlusSerializer:
    """LangGraph's serializer, allowed to rebuild only its own safe types and our state models: a checkpoint file
    that someone else wrote cannot make us instantiate arbitrary classes."""
    from hugginggraph.graph.state import ModelChoice, Task, TaskResult
    from hugginggraph.tools.artifacts import Artifact

    return JsonPlusSerializer(allowed_msgpack_modules=[Task, ModelChoice, TaskResult, Artifact])


class NothingSaved(LookupError):
    """A run to resume has no checkpoint: the thread id is wrong, or the run was killed before its request was saved."""


async def check_saved(saver: BaseCheckpointSaver, thread_id: str) -> None:
    """Raise NothingSaved unless `thread_id` has a checkpoint to resume from. LangGraph's own error for this
    (EmptyInputError: "Received no input") names neither the thread nor what to do about it."""
    if await saver.aget_tuple({"configurable": {"thread_id": thread_id}}) is None:
        raise NothingSaved(f"nothing was saved on thread {thread_id!r}: run the request again")


async def fork_thread(saver: BaseCheckpointSaver, thread_id: str) -> BaseCheckpointSaver:
    """A memory saver holding a copy of the thread's latest checkpoint, under the same thread id: a run there sees
    the conversation so far (its messages, its files) and leaves the saved thread as it was."""
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
    latest = await saver.aget_tuple(config)
    if latest is None:
        raise NothingSaved(f"nothing was saved on thread {thread_id!r}: `hugginggraph runs` lists the saved ones")
    copy = InMemorySaver()
    into: RunnableConfig = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    await copy.aput(into, latest.checkpoint, latest.metadata, latest.checkpoint["channel_versions"])
    return copy


async def list_threads(saver: BaseCheckpointSaver) -> list[str]:
    """Thread ids of every saved run, most recently checkpointed first (any saver: checkpoint ids grow with time)."""
    seen: dict[str, None] = {}
    async for checkpoint in saver.alist(None):
        seen.setdefault(checkpoint.config["configurable"]["thread_id"], None)
    return list(seen)
