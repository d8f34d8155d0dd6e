"""One long-lived child process that builds a runner once and answers its model calls, one at a time, over a pipe.

The child keeps what the runner loads (its library's imports, its models) from one call to the next, which is what
makes isolation affordable: only the first call pays the interpreter's start, the imports and the load. Killing the
child is the only way to stop a call that has run past its time, so `WorkerProcess.call` kills it when the call is
cancelled, and a worker that died is never used again: the caller (`SubprocessRunner`) starts a fresh one.

Only picklable values cross the pipe: the card, the task's text and file-path arguments and the `ArtifactStore` go in,
a `RunnerOutput` (text, JSON-safe data, paths of files the child wrote into the run's folder) comes out.
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cache
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from pydantic import BaseModel

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelLoadError, ModelRunner, RunnerOutput, checked_output


class ModelProcessDied(RuntimeError):
    """The model's process ended without answering: killed, crashed (a segfault, out of memory) or exited."""


class ModelCallFailed(RuntimeError):
    """The model call raised in its process; the message is the original error's type and text."""


@dataclass(frozen=True)
class _Call:
    """What the parent sends for one call: the arguments of `ModelRunner.run`."""

    card: CatalogEntry
    task: str
    inputs: dict[str, str]
    artifacts: ArtifactStore


class _Reply(BaseModel):
    """What the child sends back: the output, or why there is none."""

    output: RunnerOutput | None = None
    error: str | None = None
    """`Type: message` of what the call raised."""
    load_error: bool = False
    """The error was a `ModelLoadError`: the executor moves to the next candidate instead of retrying."""


class WorkerProcess:
    """A child process serving the runner `factory` builds. Calls must not overlap: the caller hands a worker to
    one call at a time.

    `grace_s` is how long a worker killed mid-call has between SIGTERM and SIGKILL.
    """

    def __init__(self, factory: Callable[[], ModelRunner], grace_s: float) -> None:
        processes = multiprocessing.get_context("spawn")  # nothing inherited from our threads, CUDA state or locks
        self._connection, child_end = processes.Pipe()
        self._process = processes.Process(
            target=_serve,
            args=(factory, child_end, os.getpid()),
            name="hugginggraph model worker",
            daemon=True,  # ended with the parent when it exits normally
        )
        self._grace_s = grace_s
        self.models: set[str] = set()
        """The ids of the models it has been asked to run, which its runner may still hold loaded."""
        try:
            _start(self._process)
        except BaseException:
            self._connection.close()
            raise
        finally:
            child_end.close()  # the child holds the only other end now, so its death reads as EOF

    @property
    def alive(self) -> bool:
        return self._process.is_alive()

    async def call(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        """The child's answer. A call that raised there raises `ModelCallFailed` (or `ModelLoadError`) here and leaves
        the worker ready for the next call; a child that died raises `ModelProcessDied`, and a cancelled call (a
        timeout, the run's deadline) kills the child: either way the worker is dead afterwards."""
        self.models.add(card.id)
        try:
            reply = await self._exchange(_Call(card, task, inputs, artifacts))
        except BaseException:  # cancelled mid-call: only killing the child stops its model
            await self.stop()
            raise
        if reply is None:
            await _wait_for_end(self._process, self._grace_s)  # let its exit status settle before reading it
            await self.stop()
            how = _how_it_ended(self._process.exitcode)
            raise ModelProcessDied(f"the model's process died before answering ({how})")
        if reply.output is not None:
            return reply.output
        raise (ModelLoadError if reply.load_error else ModelCallFailed)(reply.error)

    async def _exchange(self, call: _Call) -> _Reply | None:
        try:
            self._connection.send(call)
        except (BrokenPipeError, ConnectionResetError):  # it died while idle
            return None
        return await _receive(self._connection)

    async def stop(self) -> None:
        """SIGTERM, then SIGKILL if the child is still there after the grace; reaps it whatever happens, so no
        zombie is left even when the wait itself is cancelled."""
        try:
            if self._process.is_alive():
                self._process.terminate()
                await _wait_for_end(self._process, self._grace_s)
        finally:
            self._reap()

    def close(self) -> None:
        """Ask an idle worker to exit: it reads the end of the pipe and returns, its exit handlers run, and it ends
        on its own. Killed instead, it would leave behind what those handlers clean up (for one, the named
        semaphores of the libraries it imported, which the parent's resource tracker then warns of at exit)."""
        self._connection.close()

    def wait_or_kill(self, deadline: float) -> None:
        """After `close`: wait until `deadline` (`time.monotonic()`) for the worker to end, then kill it."""
        self._process.join(max(0.0, deadline - time.monotonic()))
        self._reap()

    def _reap(self) -> None:
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        self._connection.close()


def _start(process: BaseProcess) -> None:
    """Start `process` from this process's one starting thread, and wait until it has started. On Linux a child dies
    with the thread that started it (`_die_with_parent`), and a caller's thread may end long before its worker should
    (an `asyncio.run` in a thread pool, a server's request thread). The starting thread is a daemon, never joined, so
    it lives until this process ends, its exit handlers included, among them `SubprocessRunner`'s, which let the
    workers end cleanly first."""
    started: Future[None] = Future()
    _start_requests().put((process, started))
    started.result()


@cache
def _start_requests() -> queue.SimpleQueue[tuple[BaseProcess, Future[None]]]:
    """The starting thread's queue; the thread starts with it, at the first worker of this process."""
    requests: queue.SimpleQueue[tuple[BaseProcess, Future[None]]] = queue.SimpleQueue()
    threading.Thread(target=_start_each, args=(requests,), name="hugginggraph worker starter", daemon=True).start()
    return requests


def _start_each(requests: queue.SimpleQueue[tuple[BaseProcess, Future[None]]]) -> None:
    while True:
        process, started = requests.get()
        try:
            process.start()
        except BaseException as error:
            started.set_exception(error)
        else:
            started.set_result(None)


def _serve(factory: Callable[[], ModelRunner], connection: Connection, parent_pid: int) -> None:
    """The child's whole life: answer calls until the parent closes the pipe. The runner is built at the first
    call, so an error building it is that call's error, and kept, with whatever it loads, for the next ones."""
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the parent decides
    runner: ModelRunner | None = None
    with asyncio.Runner() as loop:  # one event loop for every call, as a runner in the parent would have
        for call in _calls(connection):
            try:
                if runner is None:
                    runner = factory()
                output = loop.run(runner.run(call.card, call.task, call.inputs, call.artifacts))
                reply = _Reply(output=checked_output(output))
            except Exception as error:
                reply = _Reply(error=f"{type(error).__name__}: {error}", load_error=isinstance(error, ModelLoadError))
            connection.send(reply)


def _calls(connection: Connection) -> Iterator[_Call]:
    while True:
        try:
            call = connection.recv()
        except EOFError:  # the parent closed its end: nothing more to do
            return
        yield call


PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends this process when the thread that started it ends."""


def _die_with_parent(parent_pid: int) -> None:
    """On Linux, have the kernel SIGKILL this child when its parent dies, however it dies: `daemon` children are
    ended only by a parent that exits normally, and a SIGKILLed parent (a crash, the OOM killer) would leave the
    model running, and holding its memory, for a run that no longer exists. The signal comes when the thread that
    started the child ends, which `_start` makes a thread that lasts as long as the parent. Elsewhere, `daemon`
    alone, and an idle worker's end of the pipe, which closes with the parent."""
    if sys.platform != "linux":
        return
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the kernel was told
        os._exit(1)


async def _receive(connection: Connection) -> _Reply | None:
    """The child's reply, or None when it closed the pipe without one (it died). Waits on the event loop, so a
    cancelled call stops waiting at once; the reply itself is read in one go once its first bytes arrive."""
    loop = asyncio.get_running_loop()
    readable: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not readable.done():
            readable.set_result(None)

    loop.add_reader(connection.fileno(), ready)
    try:
        await readable
    finally:
        loop.remove_reader(connection.fileno())
    try:
        reply = connection.recv()
    except (EOFError, ConnectionResetError):  # reset: it died with our call unread
        return None
    if not isinstance(reply, _Reply):
        raise ModelCallFailed(f"the model's process sent {type(reply).__name__}, not a reply")
    return reply


async def _wait_for_end(process: BaseProcess, seconds: float) -> None:
    """Wait up to `seconds` for the process to end; polls, since `join` would block the event loop."""
    deadline = time.monotonic() + seconds
    while process.is_alive() and time.monotonic() < deadline:
        await asyncio.sleep(0.01)


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is None:
        return "it did not exit"
    if exitcode < 0:
        return f"killed by signal {-exitcode}, {signal.strsignal(-exitcode) or 'unknown'}"
    return f"exit code {exitcode}"
