"""The first run as a user meets it, timed: the `hugginggraph demo` conversation (two turns on one thread: transcribe
memo.wav, summarize it and read the summary aloud; then read the text on sign.png), a single-task request and a
question that needs no model, on the embedded default (`load_settings` with no flags, as the README's commands run),
through the same graph, SQLite checkpointer and durability as the CLI, the controller loading from the start as the CLI
loads it (`start_loading`). Everything runs twice in this one process:
the first pass pays the imports and the models' loads ("cold"), the second is what a resident process gives
("warm").

For each request and pass it prints each stage's controller calls, prompt tokens evaluated (the rest was restored
from llama.cpp's prompt cache), tokens decoded and the forward passes that decoded them (fewer than the tokens
when drafts were verified in one pass: tools/llama_cpp/drafts.py), counted by the embedded model, and seconds
(from the stage's first start to its last end, parallel branches together), and when the first task started after
the request. The warm pass repeats the cold pass's requests, so its prompts are in the cache whole; a request new to
a warm process is what the cold pass's later requests show (the models were loaded by the demo). Then, last:
`demo_warm_s=.. demo_cold_s=.. first_task_start_s=.. llm_calls=.. prompt_tokens_evaluated=.. decoded_tokens=..
forward_passes=..`:
both demo turns together, cold from this script's first line (imports included), the rest from the warm pass.
Token and call counts are the machine-independent figures; seconds are this machine's.

Run: python benchmarks/first_run.py [--model local:<name>] (the weights must be installed: `hugginggraph models
install-offline`).
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # before the imports: a cold run counts them

import argparse  # noqa: E402
import asyncio  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import uuid  # noqa: E402
from collections import defaultdict  # noqa: E402
from dataclasses import dataclass, field, replace  # noqa: E402
from importlib.resources import as_file, files  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from langchain_core.callbacks import BaseCallbackHandler  # noqa: E402

from hugginggraph.cli.run_commands import DEMO_FILES, DEMO_REQUESTS  # noqa: E402
from hugginggraph.context_assembly import build_context, start_loading  # noqa: E402
from hugginggraph.graph.builder import build_graph  # noqa: E402
from hugginggraph.graph.checkpoint import DURABILITY, sqlite_checkpointer  # noqa: E402
from hugginggraph.settings import load_settings  # noqa: E402
from hugginggraph.tools.llama_cpp.fast_llama import DecodeCounts  # noqa: E402
from hugginggraph.tools.llama_cpp.local_llama import LocalLlamaChatModel  # noqa: E402

STAGES = ("plan", "validate", "select", "approve", "execute", "respond")
SINGLE_TASK = "Is this review positive or negative? The soup was cold and the waiter was rude."
NO_MODEL = "What is the capital of France?"


@dataclass
class StageFigures:
    calls: int = 0
    evaluated: int = 0
    decoded: int = 0
    passes: int = 0
    seconds: float = 0.0


@dataclass
class TurnFigures:
    seconds: float = 0.0
    first_task_s: float | None = None
    answer: str = ""
    stages: dict[str, StageFigures] = field(default_factory=lambda: defaultdict(StageFigures))

    def total(self, name: str) -> int:
        return sum(getattr(stage, name) for stage in self.stages.values())


class ControllerCalls(BaseCallbackHandler):
    """Counts the controller calls of each stage (the graph node that made them)."""

    def __init__(self) -> None:
        self.turn = TurnFigures()

    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, metadata: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        node = (metadata or {}).get("langgraph_node", "?")
        self.turn.stages[node if node in STAGES else "execute"].calls += 1  # a task's own name inside execute


def tokens_so_far(llm: LocalLlamaChatModel) -> tuple[int, int, int]:
    """The embedded model's counters: prompt tokens evaluated, tokens decoded and forward passes since it loaded (all
    0 while it loads: read without waiting, so the benchmark does not hold the run up where the CLI would not). A
    stage's are the difference between its first start and its last end: the stages run one after another, and a
    reply cut short (the answer's lead) reports no usage to LangChain but is counted here."""
    loaded = llm.loaded_model()
    counts = loaded.llama.counts if loaded is not None else DecodeCounts()
    return counts.prompt_tokens, counts.reply_tokens, counts.passes


async def run_turn(
    graph: Any, context: Any, calls: ControllerCalls, graph_input: dict[str, Any], thread_id: str
) -> TurnFigures:
    """One request through the graph as the CLI streams it, timed per stage."""
    turn = calls.turn = TurnFigures()
    config = {"configurable": {"thread_id": thread_id}, "callbacks": [calls]}
    began: dict[str, tuple[float, int, int, int]] = {}
    ended: dict[str, tuple[float, int, int, int]] = {}
    start = time.perf_counter()
    async for mode, chunk in graph.astream(
        graph_input, config, context=context, stream_mode=["tasks", "custom"], durability=DURABILITY
    ):
        now = (time.perf_counter() - start, *tokens_so_far(context.llm))
        if mode == "custom" and chunk.get("event") == "task_started" and turn.first_task_s is None:
            turn.first_task_s = now[0]
        elif mode == "tasks" and chunk["name"] in STAGES:
            began.setdefault(chunk["name"], now) if "input" in chunk else ended.__setitem__(chunk["name"], now)
    turn.seconds = time.perf_counter() - start
    for stage, first in began.items():
        last = ended.get(stage, (turn.seconds, *tokens_so_far(context.llm)))
        figures = turn.stages[stage]
        figures.seconds, figures.evaluated, figures.decoded, figures.passes = (last[i] - first[i] for i in range(4))
    turn.answer = str((await graph.aget_state(config)).values.get("answer", ""))
    return turn


def report(label: str, turn: TurnFigures) -> None:
    stages = " | ".join(
        f"{name} {s.seconds:.1f}s calls={s.calls} evaluated={s.evaluated} decoded={s.decoded} passes={s.passes}"
        for name in STAGES
        if (s := turn.stages.get(name)) is not None
    )
    first = "-" if turn.first_task_s is None else f"{turn.first_task_s:.1f}s"
    print(f"{label}: {turn.seconds:.1f}s first_task={first} || {stages}", flush=True)
    print(f"    answer: {turn.answer[:200]!r}", flush=True)


async def main(model: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "workspace"
        workspace.mkdir()
        for name in DEMO_FILES:
            with as_file(files("hugginggraph").joinpath("samples", name)) as sample:
                shutil.copyfile(sample, workspace / name)
        flags: dict[str, Any] = {"checkpoint_path": Path(folder) / "runs.sqlite"}
        if model:
            flags["model"] = model
        settings = load_settings(flags)
        context = replace(start_loading(build_context(settings, workspace)), artifacts_dir=Path(folder) / "artifacts")
        calls = ControllerCalls()
        demo: dict[str, list[TurnFigures]] = {"cold": [], "warm": []}
        async with sqlite_checkpointer(settings.checkpoint_path) as saver:
            graph = build_graph(saver)
            for run in ("cold", "warm"):
                thread = uuid.uuid4().hex
                for index, (request, name) in enumerate(zip(DEMO_REQUESTS, DEMO_FILES, strict=True)):
                    turn = await run_turn(graph, context, calls, request_input(request, [name]), thread)
                    if run == "cold" and index == 0:
                        turn.seconds = time.perf_counter() - STARTED  # the imports and the loads too
                    demo[run].append(turn)
                    report(f"[{run}] demo turn {index + 1}", turn)
                for label, request in (("single task", SINGLE_TASK), ("no-model question", NO_MODEL)):
                    turn = await run_turn(graph, context, calls, request_input(request, []), uuid.uuid4().hex)
                    report(f"[{run}] {label}", turn)
    warm = demo["warm"]
    print(
        f"demo_warm_s={sum(t.seconds for t in warm):.1f} demo_cold_s={sum(t.seconds for t in demo['cold']):.1f}"
        f" first_task_start_s={warm[0].first_task_s or 0:.1f} llm_calls={sum(t.total('calls') for t in warm)}"
        f" prompt_tokens_evaluated={sum(t.total('evaluated') for t in warm)}"
        f" decoded_tokens={sum(t.total('decoded') for t in warm)} forward_passes={sum(t.total('passes') for t in warm)}"
    )


def request_input(request: str, names: list[str]) -> dict[str, Any]:
    return {"request": request, "files": names, "mode": "full", "approval": False}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="the controller, as `--model` of the CLI (default: the embedded default)")
    asyncio.run(main(parser.parse_args().model))
