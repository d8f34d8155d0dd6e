"""The embedded controller's speed and plan quality on the 20 planning requests of its tests (`PLAN_CASES` in
tests/tools/llama_cpp/test_local_llama.py: varied modalities, one- and two-step plans, chit-chat).

Plans go through the graph's `Planner` with the graph's default aids but `--demos` (constrained task names, and a
fix pass when a plan names input files nobody gave; the request's files exist here, as a user's would), one
request after another in one process, so the prompt cache restores what consecutive planning prompts share, as
in a session of graph runs. The seconds per plan are wall time of the whole planning stage, demo retrieval and
any fix pass included. Tokens per second come from the embedded model's counters (`DecodeCounts`: tokens
evaluated and seconds spent in llama.cpp, prompt and decoding apart), not from wall time; a prompt whose prefix was
restored from the cache evaluates only the rest, so each line shows the prompt's tokens (LangChain's
`usage_metadata`) and those evaluated. Decoding counts the tokens of the replies and the forward passes that made
them: with drafts (tools/llama_cpp/drafts.py) one pass can decode several, so tokens per second exceed what one
token per pass allows. "right" means the plan's set of task types equals the expected set.
Peak RSS is the whole process's: the model, Python, and MiniLM when demos are retrieved.

Prints the load, one line per request, then, last,
`plans_parsed=<k>/<n> right_tasks=<k>/<n> seconds_per_plan=.. prompt_tok_s=.. decode_tok_s=.. peak_rss_gb=..`.
Run: python benchmarks/controller.py [--model local:qwen2.5-coder-1.5b] [--demos retrieved] [--limit N] [--whole-chain]
[--no-drafts]
On a busy machine give `--threads 1`: llama.cpp's threads wait for each other at every step, so one of them
sharing a core with another process stalls them all (measured: a plan of 11 s on one thread had not finished
after 45 s on two, with a second process busy on this 2-core machine).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from harness import load_test_module
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import LLMResult

from hugginggraph.graph.context import PlanningAids
from hugginggraph.planning.planner import Planner
from hugginggraph.settings import DEFAULT_MODEL
from hugginggraph.tools.demo_bank import default_demo_bank
from hugginggraph.tools.llama_cpp.local_llama import local_chat_model
from hugginggraph.tools.tasks import TASKS

PLAN_CASES: list[tuple[str, list[str], set[str]]] = load_test_module(
    "tests/tools/llama_cpp/test_local_llama.py"
).PLAN_CASES


class Usage(BaseCallbackHandler):
    """Counts the controller's calls and the prompt tokens of each reply's `usage_metadata`."""

    def __init__(self) -> None:
        self.calls = 0
        self.prompt_tokens = 0

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        for generations in response.generations:
            for generation in generations:
                self.calls += 1
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None) or {}
                self.prompt_tokens += usage.get("input_tokens", 0)


@dataclass(frozen=True)
class PlanRun:
    seconds: float
    parsed: bool
    tasks: set[str]
    calls: int
    prompt_tokens: int
    """Tokens of the prompts sent (all calls of the plan)."""
    evaluated: int
    """Prompt tokens llama.cpp evaluated: the rest came from the prompt cache."""
    prompt_s: float
    decoded: int
    passes: int
    decode_s: float


def peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # Linux reports KiB


def rate(tokens: int, seconds: float) -> float:
    return tokens / seconds if seconds else 0.0


async def main(
    name: str,
    demos: Literal["none", "static", "retrieved"],
    cases: list[Any],
    threads: int | None,
    whole_chain: bool,
    drafts: bool,
) -> None:
    started = time.perf_counter()
    options = {"n_threads": threads} if threads else {}
    llm = local_chat_model(name, **options)  # finds (the first time, joins) the GGUF file
    weights_s = time.perf_counter() - started
    started = time.perf_counter()
    llama = llm._model().llama
    llama.best_first, llama.drafts = not whole_chain, drafts
    load_s = time.perf_counter() - started
    print(
        f"model={name} threads={llm.n_threads} weights_s={weights_s:.2f} load_s={load_s:.2f}"
        f" rss_gb={peak_rss_gb():.2f}",
        flush=True,
    )

    usage = Usage()
    runs: list[PlanRun] = []
    with tempfile.TemporaryDirectory() as workdir:
        counted = llm.model_copy(update={"callbacks": [usage]})  # shares the loaded model
        planner = Planner(counted, TASKS, PlanningAids(demos=demos), default_demo_bank(), Path(workdir))
        if demos == "retrieved":  # MiniLM loads and embeds the bank once per process: not a per-plan cost
            started = time.perf_counter()
            await planner.demos("warm-up")
            print(f"demo_retrieval_warmup_s={time.perf_counter() - started:.2f}", flush=True)
        for index, (request, files, expected) in enumerate(cases):
            for file in files:
                (Path(workdir) / file).touch()
            calls, prompt_tokens = usage.calls, usage.prompt_tokens
            before = replace(llama.counts)
            started = time.perf_counter()
            draft = await planner.draft(request, files)
            seconds = time.perf_counter() - started
            counts = llama.counts
            tasks = {item.get("task") for item in draft.items if isinstance(item, dict)}
            run = PlanRun(
                seconds=seconds,
                parsed=draft.error is None,
                tasks={task for task in tasks if isinstance(task, str)},
                calls=usage.calls - calls,
                prompt_tokens=usage.prompt_tokens - prompt_tokens,
                evaluated=counts.prompt_tokens - before.prompt_tokens,
                prompt_s=counts.prompt_seconds - before.prompt_seconds,
                decoded=counts.reply_tokens - before.reply_tokens,
                passes=counts.passes - before.passes,
                decode_s=counts.pass_seconds - before.pass_seconds,
            )
            runs.append(run)
            right = run.tasks == expected
            print(
                f"[{index:2d}] {run.seconds:5.2f}s parsed={'yes' if run.parsed else 'NO'}"
                f" right={'yes' if right else 'no'}"
                f" calls={run.calls} prompt={run.prompt_tokens} evaluated={run.evaluated}"
                f" ({rate(run.evaluated, run.prompt_s):.0f} tok/s) decoded={run.decoded} in {run.passes} passes"
                f" ({rate(run.decoded, run.decode_s):.1f} tok/s)"
                f" tasks={','.join(sorted(run.tasks)) or '-'} expected={','.join(sorted(expected)) or '-'}"
                f" | {request[:50]}",
                flush=True,
            )

    n = len(runs)
    parsed = sum(run.parsed for run in runs)
    right = sum(run.tasks == expected for run, (_, _, expected) in zip(runs, cases, strict=True))
    seconds = sum(run.seconds for run in runs) / n
    prompt = rate(sum(run.evaluated for run in runs), sum(run.prompt_s for run in runs))
    decode = rate(sum(run.decoded for run in runs), sum(run.decode_s for run in runs))
    print(
        f"plans_parsed={parsed}/{n} right_tasks={right}/{n} seconds_per_plan={seconds:.2f} "
        f"prompt_tok_s={prompt:.1f} decode_tok_s={decode:.1f} peak_rss_gb={peak_rss_gb():.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"local:<name> (default: {DEFAULT_MODEL})")
    parser.add_argument("--demos", choices=["none", "static", "retrieved"], default="retrieved")
    parser.add_argument("--limit", type=int, help="only the first N requests (smoke runs)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: the controller's, every core)")
    parser.add_argument(
        "--whole-chain",
        action="store_true",
        help="sample every token through the whole grammar chain, as llama-cpp-python does (tools/llama_cpp/"
        "fast_llama.py): the plans are the same, the time is what the shortcut saves",
    )
    parser.add_argument(
        "--no-drafts",
        action="store_true",
        help="decode one token per forward pass, without the drafts of tools/llama_cpp/drafts.py: the time they save "
        "(a plan can differ where greedy decoding meets a near tie: a batch rounds differently from single tokens)",
    )
    args = parser.parse_args()
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    provider, _, model_name = args.model.partition(":")
    if provider != "local" or not model_name:
        parser.error("--model must be local:<name>: the timings are llama.cpp's, read from the embedded model")
    cases = PLAN_CASES[: args.limit]
    asyncio.run(main(model_name, args.demos, cases, args.threads, args.whole_chain, not args.no_drafts))
