"""`hugginggraph plan`: the validated plan of a request as JSON, running nothing."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from hugginggraph.cli.exit_codes import EXIT_FAILED
from hugginggraph.cli.flags import Commands, command_settings, configuration_flags, request_arguments


def _plan(args: argparse.Namespace) -> int:
    """Plan and validate, without running anything (mode "tasks"); print the plan as JSON. With `--thread`, the
    plan is made in that conversation (its earlier requests and answers, its files) on a copy of it, so planning
    adds no turn to the conversation."""
    from langchain_core.runnables import RunnableConfig

    from hugginggraph.console import plan_json
    from hugginggraph.context_assembly import build_context, start_loading
    from hugginggraph.graph.builder import build_graph
    from hugginggraph.graph.checkpoint import NothingSaved, fork_thread, open_checkpointer
    from hugginggraph.graph.state import InputState

    async def plan() -> Any:
        settings = command_settings(args)
        graph_input = InputState(request=args.request, files=args.file, mode="tasks")
        if not args.thread:
            return await build_graph().ainvoke(graph_input, context=start_loading(build_context(settings)))
        async with open_checkpointer(settings.checkpoint_url, settings.checkpoint_path) as saver:
            conversation = await fork_thread(saver, args.thread)  # before the controller loads: a wrong id is told
        config: RunnableConfig = {"configurable": {"thread_id": args.thread}}
        return await build_graph(conversation).ainvoke(
            graph_input, config, context=start_loading(build_context(settings))
        )

    try:
        state = asyncio.run(plan())
    except NothingSaved as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    print(plan_json(state))
    return EXIT_FAILED if state.get("plan_error") else 0


def add_plan(commands: Commands) -> None:
    plan = commands.add_parser("plan", help="print the validated plan as JSON, running nothing")
    request_arguments(plan, thread_help="plan within this conversation, on a copy: it gets no new turn")
    configuration_flags(plan)
    plan.set_defaults(run=_plan)
