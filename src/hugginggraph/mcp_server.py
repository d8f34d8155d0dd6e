"""HuggingGraph as a Model Context Protocol server on stdio (`hugginggraph mcp`, the `mcp` extra), so agent apps
(Claude Desktop, IDEs) can hand it a request over images, audio or text as one tool call and read back the answer
and the files the experts wrote. docs/mcp.md shows how to register it.

Stdout is the protocol's channel: while the server runs, the SDK's stdio transport (mcp 2) points file descriptor 1
at stderr and serves the protocol from a copy of it, so whatever a library prints as a call runs (a model loading, a
C library's log) lands in the client's log of the server, never in the protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from hugginggraph.context_assembly import build_context
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import TaskStatus
from hugginggraph.langchain_tool import DESCRIPTION, reply_text
from hugginggraph.runs import arun
from hugginggraph.settings import Settings
from hugginggraph.tools.artifacts import InputFileError, is_remote, resolve_input_file

TOOL = "hugginggraph"
TOOL_DESCRIPTION = (
    f"{DESCRIPTION} Paths are on the machine running HuggingGraph: absolute, or relative to its workspace folder. "
    "A run takes from seconds to minutes. To ask a follow-up about the same files or results, pass the `thread_id` "
    "the reply gave."
)


class TaskReport(BaseModel):
    """How one task of the plan ended."""

    id: int
    task: str = Field(description="The Hub task id, e.g. automatic-speech-recognition.")
    status: TaskStatus
    model: str | None = Field(description="The model that ran it, when one did.")
    error: str | None = Field(description="Why it failed or was skipped.")
    files: list[str] = Field(description="Absolute paths of the files it wrote.")


class HuggingGraphReply(BaseModel):
    """The tool's structured result, beside the answer text."""

    answer: str
    thread_id: str = Field(description="Pass it again as `thread_id` to continue this conversation.")
    tasks: list[TaskReport]
    files: list[str] = Field(description="Absolute paths of every file the experts wrote, in task order.")


def reply(state: dict[str, Any]) -> CallToolResult:
    """The answer as text (with each output file and the thread id, for a client that shows its model only text),
    and the same as `HuggingGraphReply`. A run that could not be carried out (no usable plan, a budget or an
    unreachable controller stopped it) is a tool error whose text says why, as the CLI exits 1 for one."""
    tasks = [
        TaskReport(
            id=result.task_id,
            task=result.task,
            status=result.status,
            model=result.model_id,
            error=result.error,
            files=[artifact.path for artifact in result.artifacts],
        )
        for result in sorted(state.get("results", {}).values(), key=lambda result: result.task_id)
    ]
    structured = HuggingGraphReply(
        answer=state.get("answer", ""),
        thread_id=state["thread_id"],
        tasks=tasks,
        files=[path for task in tasks for path in task.files],
    )
    text = f"{reply_text(state)}\nthread_id: {structured.thread_id}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured.model_dump(mode="json"),
        is_error=bool(state.get("plan_error") or state.get("stopped")),
    )


def mcp_server(context: HuggingGraphContext, settings: Settings) -> MCPServer:
    """A server with one tool, `hugginggraph`, running each call as one turn of the graph on `context` (a new thread,
    or the one given), saved where `settings` say, as the CLI saves its runs. One context serves every call, so
    models loaded for one call stay loaded for the next."""

    async def hugginggraph(
        request: Annotated[str, Field(min_length=1, description="What to do, naming the input files it refers to.")],
        files: Annotated[
            list[str] | None, Field(description="Paths (or http(s) URLs) of the input files: images, audio, text.")
        ] = None,
        thread_id: Annotated[
            str | None, Field(description="A thread id from an earlier reply, to continue that conversation.")
        ] = None,
    ) -> Annotated[CallToolResult, HuggingGraphReply]:
        files = files or []
        try:  # before any model runs: a wrong path is the caller's to fix, not a task for the plan to fail
            for name in files:
                if not is_remote(name):
                    resolve_input_file(name, context.workspace)
        except InputFileError as error:
            raise ToolError(str(error)) from None
        state = await arun(
            request,
            context,
            files=files,
            thread_id=thread_id,
            checkpoint_path=settings.checkpoint_path,
            checkpoint_url=settings.checkpoint_url,
        )
        return reply(state)

    server = MCPServer(TOOL, log_level="WARNING")  # not INFO: a line per controller request would bury the log
    server.add_tool(
        hugginggraph,
        name=TOOL,
        description=TOOL_DESCRIPTION,
        annotations=ToolAnnotations(title="HuggingGraph", read_only_hint=False, destructive_hint=False),
    )
    return server


def serve(settings: Settings, workspace: Path | None = None) -> int:
    """Serve MCP on stdin and stdout until the client closes stdin; 0 then. The context is built first, so a bad
    configuration (an unknown model, a missing key) raises ConfigurationError before the client is answered; it
    loads no model and prints nothing, which models may do when the first call loads them, once stdout is the
    transport's. Relative input paths are read in `workspace` (default: the working directory, which an app that
    starts the server may leave undefined)."""
    mcp_server(build_context(settings, workspace, resident=True), settings).run("stdio")
    return 0
