"""The `hugginggraph` command line: the parser, put together from one module per command or group of commands,
and `main`, which runs the command asked for and turns its errors into messages and exit codes (`exit_codes`).

Start-up imports nothing heavy (no torch, no transformers): each command imports what it needs when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from hugginggraph.cli import eval_command, models_command, plan_command, run_commands, runs_commands, serve_commands
from hugginggraph.cli.exit_codes import EXIT_CONFIG, EXIT_FAILED


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="hugginggraph", description="HuggingGPT as a LangGraph graph.")
    commands = root.add_subparsers(dest="command", required=True)
    # In the order `hugginggraph --help` lists them.
    for add in (
        run_commands.add_run,
        plan_command.add_plan,
        run_commands.add_demo,
        run_commands.add_chat,
        serve_commands.add_ui,
        serve_commands.add_mcp,
        run_commands.add_resume,
        runs_commands.add_history,
        eval_command.add_eval,
        eval_command.add_train_step_chooser,
        runs_commands.add_runs,
        models_command.add_models,
    ):
        add(commands)
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
