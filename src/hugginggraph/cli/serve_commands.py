"""The commands that serve HuggingGraph to others until stopped: `ui` (the web app) and `mcp` (an MCP server)."""

from __future__ import annotations

import argparse
from pathlib import Path

from hugginggraph.cli.flags import Commands, command_settings, configuration_flags


def _ui(args: argparse.Namespace) -> int:
    """The web app (the `ui` extra): requests with images and sound, the plan and each task live, outputs inline."""
    from hugginggraph.web_app import serve

    return serve(command_settings(args), host=args.host, port=args.port)


def _mcp(args: argparse.Namespace) -> int:
    """HuggingGraph as a Model Context Protocol server on stdin and stdout (the `mcp` extra)."""
    from hugginggraph.mcp_server import serve

    return serve(command_settings(args), args.workspace)


def add_ui(commands: Commands) -> None:
    ui = commands.add_parser("ui", help="the web app: drop in images and sound, see the plan run (the `ui` extra)")
    ui.add_argument("--host", default="127.0.0.1", help="the address to serve on (default %(default)s)")
    ui.add_argument("--port", type=int, default=7860, help="the port to serve on (default %(default)s)")
    configuration_flags(ui)
    ui.set_defaults(run=_ui)


def add_mcp(commands: Commands) -> None:
    mcp = commands.add_parser("mcp", help="serve HuggingGraph to MCP clients over stdio (the `mcp` extra)")
    mcp.add_argument(
        "--workspace", type=Path, help="where relative input paths are read (default: the working directory)"
    )
    configuration_flags(mcp)
    mcp.set_defaults(run=_mcp)
