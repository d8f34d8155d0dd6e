"""Run another runner's model calls in child processes, so that a call past its time limit really stops.

Local runners compute in a thread (`asyncio.to_thread`), and Python cannot stop a thread: a timed-out call goes on
using the CPU, its memory and its model's lock until it ends. A child process can be killed, and the system takes
back everything it held, GPU memory included. `SubprocessRunner` wraps any runner and runs its calls in long-lived
child processes (`WorkerProcess`), each of which builds the inner runner once, so a model loaded by one call stays
loaded for the next. When a call is cancelled (the executor's `asyncio.wait_for` at `Limits.task_timeout_s`, or the
run's deadline), its worker gets SIGTERM, then SIGKILL after a short grace. A worker that dies before answering
(killed, a segfault in a native library, `os._exit`, out of memory) fails that call with `ModelProcessDied`, saying
how it died; the graph goes on, and the next call starts a fresh worker.

A call takes an idle worker, preferring one that has run its model before, and starts a new worker when every one
is busy. Calls of one model beyond `calls_per_model` at once wait for one of them to end, as calls in threads wait
for the model's lock: otherwise every concurrent call of a model would start a worker and load the model again, many
times the cost of waiting for a warm worker when runs come at once. A call that hangs holds up the calls of its own
model only, until its timeout kills its worker. Up to `max_idle` workers are kept between calls, holding their
models; `close`, the runner's garbage collection or the interpreter's exit stops them.

The cost: a worker's first call pays a fresh interpreter (the `spawn` start method: nothing inherited from the
parent's threads, CUDA state or locks), HuggingGraph's and its library's imports and its model's load; a later call
pays the pipe both ways (`benchmarks/isolation.py` prints both against calls in a thread). A program that uses it must
guard its entry point with `if __name__ == "__main__":`, as every `spawn` user must.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
import time
import weakref
from collections.abc import Callable

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.runners.base import ModelRunner, RunnerOutput
from hugginggraph.tools.runners.worker_process import WorkerProcess

_TURN_POLL_S = 0.005
"""How often a call waiting for its model's turn looks again: small beside any model call."""


class SubprocessRunner:
    """Runs the models of the runner `inner_factory` builds in child processes that outlive a call.

    `inner_factory` must be picklable (a class, or a module-level function or `functools.partial` of one): it is
    called once here, to answer `can_run`, and once in every worker. `grace_s` is how long a killed worker has
    between SIGTERM and SIGKILL; `max_idle` how many workers stay between calls (0: a process per call);
    `calls_per_model` how many calls of one model run at once, each in its own worker.
    """

    def __init__(
        self,
        inner_factory: Callable[[], ModelRunner],
        grace_s: float = 0.5,
        max_idle: int = 4,
        calls_per_model: int = 1,
    ) -> None:
        if max_idle < 0:
            raise ValueError(f"max_idle must be 0 or more, not {max_idle}")
        if calls_per_model < 1:
            raise ValueError(f"calls_per_model must be 1 or more, not {calls_per_model}")
        self.inner_factory = inner_factory
        self.grace_s = grace_s
        self.max_idle = max_idle
        self.calls_per_model = calls_per_model
        self._probe = inner_factory()
        self._idle: list[WorkerProcess] = []
        """Workers waiting for a call, least recently used first."""
        self._running: dict[str, int] = {}
        """Calls running now, by model id."""
        self._guard = threading.Lock()  # guards `_idle` and `_running`: calls may come from several threads and loops
        self._closer = weakref.finalize(self, _close_workers, self._idle, self._guard, grace_s)
        # At exit, this handler runs before `multiprocessing`'s, registered earlier, which would SIGTERM the workers
        # (daemons) and so leave behind what their own exit handlers clean up.
        self._closer.atexit = False
        atexit.register(self._closer)

    def can_run(self, card: CatalogEntry) -> bool:
        return self._probe.can_run(card)

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        if not self._closer.alive:
            raise RuntimeError("this SubprocessRunner is closed; build a new one to run models")
        await self._turn(card.id)
        try:
            worker = self._idle_worker(card.id) or WorkerProcess(self.inner_factory, self.grace_s)
            try:
                return await worker.call(card, task, inputs, artifacts)
            finally:
                self._put_back(worker)
        finally:
            with self._guard:
                self._running[card.id] -= 1

    async def _turn(self, model_id: str) -> None:
        """Wait until fewer than `calls_per_model` calls of the model run, and count this one. Polled, not awaited
        on a lock, since calls may come from several event loops; a cancelled wait holds no turn."""
        while True:
            with self._guard:
                if self._running.get(model_id, 0) < self.calls_per_model:
                    self._running[model_id] = self._running.get(model_id, 0) + 1
                    return
            await asyncio.sleep(_TURN_POLL_S)

    def close(self) -> None:
        """Stop the idle workers (each gets the grace to exit cleanly) and start no more. A call still running keeps
        its worker until it ends, and the worker stops then."""
        self._closer()

    def _idle_worker(self, model_id: str) -> WorkerProcess | None:
        """The idle worker that ran `model_id` most recently, else the most recently used one; None when none is
        idle. Workers that died while idle (the out-of-memory killer) are reaped on the way."""
        while True:
            with self._guard:
                if not self._idle:
                    return None
                worker = next((w for w in reversed(self._idle) if model_id in w.models), self._idle[-1])
                self._idle.remove(worker)
            if worker.alive:
                return worker
            worker.close()

    def _put_back(self, worker: WorkerProcess) -> None:
        """Keep a live worker for the next call, unless the runner is closed, and close the least recently used
        idle workers past `max_idle` (they end on their own, and `multiprocessing` reaps them)."""
        surplus = [worker]
        if worker.alive:
            with self._guard:
                if self._closer.alive:
                    self._idle.append(worker)
                    surplus = self._idle[: max(0, len(self._idle) - self.max_idle)]
                    del self._idle[: len(surplus)]
        for extra in surplus:
            extra.close()


def _close_workers(idle: list[WorkerProcess], guard: threading.Lock, grace_s: float) -> None:
    """What `SubprocessRunner.close` does; a function of the runner's parts, so that its finalizer holds no
    reference to the runner itself. The workers exit together, within one grace."""
    with guard:
        workers = list(idle)
        idle.clear()
    for worker in workers:
        worker.close()
    deadline = time.monotonic() + grace_s
    for worker in workers:
        worker.wait_or_kill(deadline)
