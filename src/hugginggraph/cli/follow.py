"""Following a run on the terminal: stream the graph and print it as it goes; when it pauses for approval, ask the
user and carry on."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hugginggraph.console import RunPrinter


async def _until_pause(graph: Any, graph_input: Any, config: dict[str, Any], context: Any, printer: RunPrinter) -> Any:
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


async def follow_run(
    graph: Any, graph_input: Any, thread_id: str, context: Any, printer: RunPrinter | None = None
) -> dict[str, Any]:
    """Run the graph to its end, printing it as it goes; when it pauses for approval, ask the user and carry on.
    Return the final state, which keeps `__interrupt__` when the input ended before the user answered."""
    from langgraph.types import Command

    from hugginggraph.approval_dialog import NoAnswer, ask
    from hugginggraph.console_live import printer_for
    from hugginggraph.nodes.approval import ApprovalRequest

    printer = printer or printer_for()
    config = {"configurable": {"thread_id": thread_id}}
    try:
        snapshot = await _until_pause(graph, graph_input, config, context, printer)
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
            snapshot = await _until_pause(graph, resume, config, context, printer)
        printer.outcome(snapshot.values, thread_id)
    finally:
        printer.close()
    state: dict[str, Any] = snapshot.values
    return state
