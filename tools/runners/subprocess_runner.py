"""Run another runner's model calls in a child process, so that a call past its time limit really stops.

Local runners compute in a thread (`asyncio.to_thread`), and Python cannot stop a thread: a timed-out call goes on
using the CPU, its memory and its model's lock until it ends. A child process can be killed, and the system takes
back everything it held, GPU memory included. `SubprocessRunner` wraps any runner: each call starts a child, which
builds the inner runner, runs the call and sends the `RunnerOutput` back through a pipe. When the call is
cancelled (the executor's `asyncio.wait_for` at `Limits.task_timeout_s`, or the run's deadline), the child gets
SIGTERM, then SIGKILL after a short grace. A child that dies before answering (killed, a segfault in a native
library, `os._exit`, out of memory) fails that call with `ModelProcessDied`, saying how it died; the graph goes on.

Only picklable values cross: the card, the task's text and file-path arguments and the `ArtifactStore` go in, a
`RunnerOutput` (text, JSON-safe data, paths of files the child wrote into the run's folder) comes out.

The cost: the child is a fresh interpreter (the `spawn` start method: nothing inherited from the parent's threads,
CUDA state or locks), so every call pays the interpreter's start and HuggingGraph's imports, then its library's
imports and its model's load, since nothing stays loaded between calls. Measured on 2 shared cores: 0.8 s for a
call that imports no model library; 7.8 s for a tiny transformers text classifier, most of it importing torch and
transformers, against 0.25 s for the same call in a thread once the model is loaded. That is why it is off by
default (`Settings.isolate_models`). A program that uses it must guard its entry point
with `if __name__ == "__main__":`, as every `spawn` user must.
"""

from __future__ import annotations

import asyncio
import ctypes
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess

from pydantic import BaseModel

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import ModelCard
from hugginggraph.tools.runners.base import ModelLoadError, ModelRunner, RunnerOutput, checked_output


class ModelProcessDied(RuntimeError):
    """The model's process ended without answering: killed, crashed (a segfault, out of memory) or exited."""


class ModelCallFailed(RuntimeError):
    """The model call raised in its process; the message is the original error's type and text."""


class _Reply(BaseModel):
    """What the child sends back: the output, or why there is none."""

    output: RunnerOutput | None = None
    error: str | None = None
    """`Type: message` of what the call raised."""
    load_error: bool = False
    """The error was a `ModelLoadError`: the executor moves to the next candidate instead of retrying."""


class SubprocessRunner:
    """Runs the models of the runner `inner_factory` builds, each call in a child process of its own.

    `inner_factory` must be picklable (a class, or a module-level function or `functools.partial` of one): it is
    called once here, to answer `can_run`, and once in every child. `grace_s` is how long a cancelled child has
    between SIGTERM and SIGKILL.
    """

    def __init__(self, inner_factory: Callable[[], ModelRunner], grace_s: float = 0.5) -> None:
        self.inner_factory = inner_factory
        self.grace_s = grace_s
        self._probe = inner_factory()
        self._processes = multiprocessing.get_context("spawn")

    def can_run(self, card: ModelCard) -> bool:
        return self._probe.can_run(card)

    async def run(self, card: ModelCard, task: str, inputs: dict[str, str], artifacts: ArtifactStore) -> RunnerOutput:
        receiver, sender = self._processes.Pipe(duplex=False)
        process = self._processes.Process(
            target=_call_in_child,
            args=(self.inner_factory, card, task, inputs, artifacts, sender, os.getpid()),
            name=f"hugginggraph model {card.id}",
            daemon=True,  # ended with the parent when it exits normally
        )
        process.start()
        try:
            sender.close()  # the child holds the only writing end now, so its death reads as EOF
            reply = await _receive(receiver)
            if reply is None:
                await _ends_within(process, self.grace_s)  # let its exit status settle before reading it
        finally:
            receiver.close()
            await _stop(process, self.grace_s)
        if reply is None:
            raise ModelProcessDied(f"the model's process died before answering ({_how_it_ended(process.exitcode)})")
        if reply.output is not None:
            return reply.output
        raise (ModelLoadError if reply.load_error else ModelCallFailed)(reply.error)


def _call_in_child(
    factory: Callable[[], ModelRunner],
    card: ModelCard,
    task: str,
    inputs: dict[str, str],
    artifacts: ArtifactStore,
    reply_to: Connection,
    parent_pid: int,
) -> None:
    """The child's whole life: build the runner, make the one call, send the reply."""
    _die_with_parent(parent_pid)
    try:
        reply = _Reply(output=checked_output(asyncio.run(factory().run(card, task, inputs, artifacts))))
    except Exception as error:
        reply = _Reply(error=f"{type(error).__name__}: {error}", load_error=isinstance(error, ModelLoadError))
    reply_to.send(reply)


PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal the kernel sends this process when the thread that started it ends."""


def _die_with_parent(parent_pid: int) -> None:
    """On Linux, have the kernel SIGKILL this child when its parent dies, however it dies: `daemon` children are
    ended only by a parent that exits normally, and a SIGKILLed parent (a crash, the OOM killer) would leave the
    model running on for a run that no longer exists. (The parent's starting thread is the one awaiting the reply,
    so it outlives the call.) Elsewhere, `daemon` alone."""
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
    except EOFError:
        return None
    if not isinstance(reply, _Reply):
        raise ModelCallFailed(f"the model's process sent {type(reply).__name__}, not a reply")
    return reply


async def _ends_within(process: BaseProcess, seconds: float) -> bool:
    """Whether the process ends within `seconds`; polls, since `join` would block the event loop."""
    deadline = time.monotonic() + seconds
    while process.is_alive():
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.01)
    return True


async def _stop(process: BaseProcess, grace_s: float) -> None:
    """SIGTERM, then SIGKILL if the process is still there after `grace_s`; reaps it whatever happens, so no
    zombie is left even when the wait itself is cancelled."""
    try:
        if process.is_alive():
            process.terminate()
            await _ends_within(process, grace_s)
    finally:
        if process.is_alive():
            process.kill()
        process.join()


def _how_it_ended(exitcode: int | None) -> str:
    if exitcode is None:
        return "it did not exit"
    if exitcode < 0:
        return f"killed by signal {-exitcode}, {signal.strsignal(-exitcode) or 'unknown'}"
    return f"exit code {exitcode}"
