"""The arguments several commands share, and the settings they give over the environment and the config file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TypeAlias

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The `hugginggraph` parser's subcommands, which each command module adds its own to."""

HUB_HELP = (
    "list the Hugging Face Hub's models too: --hub always, --no-hub never (default: when the Hub answers a short "
    "probe; HUGGINGGRAPH_HUB=auto/1/0)"
)


RANDOM_MODELS_HELP = (
    "also offer models with random weights (`models make-tiny`), to try the wiring: their outputs are noise, "
    "labelled so"
)


def configuration_flags(command: argparse.ArgumentParser) -> None:
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


def request_arguments(command: argparse.ArgumentParser, thread_help: str) -> None:
    """The request, its input files and the conversation it belongs to, as `run` and `plan` take them."""
    command.add_argument("request")
    command.add_argument("--file", action="append", default=[], help="an input file (repeatable)")
    command.add_argument("--thread", help=thread_help)


def command_settings(args: argparse.Namespace) -> Any:
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
