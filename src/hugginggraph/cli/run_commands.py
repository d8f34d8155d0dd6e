"""The commands that run requests on one thread, printing each run as it goes: `run`, `demo`, `chat` and `resume`."""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from hugginggraph.cli.exit_codes import EXIT_FAILED
from hugginggraph.cli.flags import Commands, command_settings, configuration_flags, request_arguments
from hugginggraph.cli.follow import follow_run

DEMO_FILES = ("memo.wav", "sign.png")
DEMO_REQUESTS = (
    "Transcribe memo.wav, summarize the transcript and read the summary aloud.",
    "Read the text on sign.png.",
)
"""Two turns of one conversation, each with its own file (`DEMO_FILES` in order), rather than one request of every
step: the embedded controller plans short requests well and drops or misnames steps of long ones (docs/planning.md,
its TaskBench results)."""

APPROVE_HELP = (
    "show the plan and its models before any model runs, and ask `Approve? [y]es / [n]o / [e]dit`: y runs it, n ends "
    "the run (a reason is asked for), e takes edits, one per line, `ID ARG=VALUE` or `ID model=MODEL`, then an empty "
    "line. In a pipe the answers are read from stdin"
)


async def _conversation(
    args: argparse.Namespace,
    turns: Callable[[str], Iterable[dict[str, Any]]] | None,
    workspace: Path | None = None,
    *,
    resident: bool = False,
) -> int:
    """Run the graph inputs `turns(thread_id)` gives on one thread, each printed and answered before the next is
    asked for (or resume the thread when `turns` is None). The context is built once: models loaded for one turn
    stay loaded for the next. `resident`: the process waits for requests as they come (`build_context`)."""
    from hugginggraph.context_assembly import build_context, start_loading
    from hugginggraph.graph.builder import build_graph
    from hugginggraph.graph.checkpoint import check_saved, open_checkpointer

    settings = command_settings(args)
    thread_id = args.thread or uuid.uuid4().hex[:12]
    code = 0
    async with open_checkpointer(settings.checkpoint_url, settings.checkpoint_path) as saver:
        if turns is None:  # before the controller loads: a wrong thread id is told at once
            await check_saved(saver, thread_id)
        context = start_loading(build_context(settings, workspace, resident=resident))
        graph = build_graph(saver)
        for graph_input in [None] if turns is None else turns(thread_id):
            state = await follow_run(graph, graph_input, thread_id, context)
            finished = not (state.get("plan_error") or state.get("stopped") or state.get("__interrupt__"))
            code = 0 if finished else EXIT_FAILED
    return code


async def _turns(
    args: argparse.Namespace,
    requests: Sequence[str] | None,
    files: Sequence[str] | Sequence[Sequence[str]] = (),
    workspace: Path | None = None,
    approval: bool = False,
) -> int:
    """Run requests on one thread (or resume it when `requests` is None), printing each. `files` are every
    request's input files, or one list of them per request."""
    if requests is None:
        return await _conversation(args, None, workspace)
    per_request = [list(f) for f in files] if files and not isinstance(files[0], str) else [list(files)] * len(requests)
    inputs = [
        {"request": r, "files": f, "mode": "full", "approval": approval}
        for r, f in zip(requests, per_request, strict=False)
    ]
    return await _conversation(args, lambda _: inputs, workspace)


def _run(args: argparse.Namespace) -> int:
    return asyncio.run(_turns(args, [args.request], args.file, approval=args.approve))


def _resume(args: argparse.Namespace) -> int:
    from hugginggraph.graph.checkpoint import NothingSaved

    try:
        return asyncio.run(_turns(args, None))
    except NothingSaved as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED


def _chat(args: argparse.Namespace) -> int:
    """A conversation on one thread: each line a request, answered before the next is read (hugginggraph.chat)."""
    from hugginggraph.chat import ChatInput
    from hugginggraph.paths import default_data_dir

    chat = ChatInput(args.file, history_file=default_data_dir() / "chat_history")
    return asyncio.run(_conversation(args, chat.turns, resident=True))


def _demo(args: argparse.Namespace) -> int:
    """The README's first run: the bundled recording and picture, copied into a folder, and a conversation over
    both, every task of which has real offline weights (`models install-offline` and the README's extras)."""
    import shutil
    from importlib.resources import as_file, files

    args.dir.mkdir(parents=True, exist_ok=True)
    for name in DEMO_FILES:
        with as_file(files("hugginggraph").joinpath("samples", name)) as sample:
            shutil.copyfile(sample, args.dir / name)
    print(f"Demo in {args.dir}: {' Then: '.join(DEMO_REQUESTS)}\n")
    return asyncio.run(_turns(args, list(DEMO_REQUESTS), [[name] for name in DEMO_FILES], args.dir.resolve()))


def add_run(commands: Commands) -> None:
    run = commands.add_parser("run", help="plan, choose models, run them and answer one request")
    request_arguments(run, thread_help="continue this conversation (default: a new one)")
    run.add_argument("--approve", action="store_true", help=APPROVE_HELP)
    configuration_flags(run)
    run.set_defaults(run=_run)


def add_demo(commands: Commands) -> None:
    demo = commands.add_parser("demo", help="one request over a bundled recording and a picture of a sign")
    demo.add_argument("--dir", type=Path, default=Path("hugginggraph-demo"), help="where to put the sample files")
    demo.add_argument("--thread", help="the thread id to save the run under")
    configuration_flags(demo)
    demo.set_defaults(run=_demo)


def add_chat(commands: Commands) -> None:
    chat = commands.add_parser("chat", help="a conversation on one thread: each line a request, answered as entered")
    chat.add_argument("--file", action="append", default=[], help="an input file of every request (repeatable)")
    chat.add_argument("--thread", help="continue this conversation")
    configuration_flags(chat)
    chat.set_defaults(run=_chat)


def add_resume(commands: Commands) -> None:
    resume = commands.add_parser("resume", help="finish an interrupted run")
    resume.add_argument("thread")
    configuration_flags(resume)
    resume.set_defaults(run=_resume)
