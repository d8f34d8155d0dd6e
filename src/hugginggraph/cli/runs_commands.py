"""The commands that read the saved runs, running nothing: `runs` lists them, `history` shows one's steps."""

from __future__ import annotations

import argparse
import asyncio
import sys

from hugginggraph.cli.exit_codes import EXIT_FAILED
from hugginggraph.cli.flags import Commands, command_settings, configuration_flags


def _history(args: argparse.Namespace) -> int:
    from hugginggraph.runs import ahistory

    settings = command_settings(args)
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

    settings = command_settings(args)
    threads = asyncio.run(athreads(checkpoint_path=settings.checkpoint_path, checkpoint_url=settings.checkpoint_url))
    for thread_id in threads:
        print(thread_id)
    return 0


def add_history(commands: Commands) -> None:
    history = commands.add_parser("history", help="the saved steps of a run")
    history.add_argument("thread")
    configuration_flags(history)
    history.set_defaults(run=_history)


def add_runs(commands: Commands) -> None:
    runs = commands.add_parser("runs", help="list saved runs, newest first")
    configuration_flags(runs)
    runs.set_defaults(run=_runs)
