"""The graph behind the web page: runs started, answered and reopened as the command line runs them.

One context serves the app's whole life, so the models one request loads stay loaded for the next, as in `chat`.
Each thread gets a workspace folder of its own for the files the user uploads (the run's `workspace`: its plan may
name only files inside it), and runs are saved in the checkpointer the settings choose, so the CLI's `runs`,
`history` and `resume` see the page's threads and the page reopens the CLI's.
"""

from __future__ import annotations

import shutil
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.types import Command, StreamMode
from pydantic import SecretStr

from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.checkpoint import DURABILITY, check_saved, list_threads, open_checkpointer
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import InputState
from hugginggraph.nodes.approval import ApprovalDecision, ApprovalRequest
from hugginggraph.tools.artifacts import run_folder
from hugginggraph.web_app_view import Message, RunView, earlier_turns, media_of

STREAM_MODES: list[StreamMode] = ["updates", "custom", "messages"]


def _config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


class WebRuns:
    """Starts, answers and reopens runs for the page; every run streams as a series of `RunView`s."""

    def __init__(
        self,
        context: HuggingGraphContext,
        uploads: Path,
        *,
        checkpoint_path: Path | str | None = None,
        checkpoint_url: str | SecretStr | None = None,
    ) -> None:
        self.context = context
        self.uploads = uploads
        """The folder of the threads' workspaces."""
        self.checkpoint_path, self.checkpoint_url = checkpoint_path, checkpoint_url

    @property
    def folders(self) -> list[Path]:
        """Where the files the page shows lie: the uploads and the tasks' outputs. It serves no file elsewhere."""
        return [self.uploads, self.context.artifacts_dir]

    def workspace(self, thread_id: str) -> Path:
        return run_folder(self.uploads, thread_id)

    def receive(self, thread_id: str, paths: Sequence[str]) -> list[str]:
        """Copy uploaded files into the thread's workspace; return their names, which the request may use. A later
        upload of the same name replaces the file."""
        folder = self.workspace(thread_id)
        folder.mkdir(parents=True, exist_ok=True)
        names = [Path(path).name for path in paths]
        for path, name in zip(paths, names, strict=True):
            shutil.copyfile(path, folder / name)
        return names

    def start(self, thread_id: str, request: str, files: Sequence[str], approval: bool) -> AsyncIterator[RunView]:
        """A new turn on the thread: `files` are names in its workspace."""
        return self._follow(thread_id, InputState(request=request, files=list(files), mode="full", approval=approval))

    def answer(self, thread_id: str, decision: ApprovalDecision) -> AsyncIterator[RunView]:
        """Carry on the run paused for approval with the user's decision. Raises NothingSaved for an unknown
        thread."""
        return self._follow(thread_id, Command(resume=decision.model_dump(mode="json")))

    async def _follow(self, thread_id: str, graph_input: InputState | Command[Any]) -> AsyncIterator[RunView]:
        async with open_checkpointer(self.checkpoint_url, self.checkpoint_path) as saver:
            graph, config = build_graph(saver), _config(thread_id)
            if isinstance(graph_input, Command):  # the turn so far is in the saved state
                await check_saved(saver, thread_id)
                view = self._view(thread_id, (await graph.aget_state(config)).values)
            else:
                view = self._view(thread_id, graph_input)
            context = replace(self.context, workspace=self.workspace(thread_id))
            with warnings.catch_warnings():
                # As in the CLI: langchain-openai's dump of streamed structured output (langchain-ai/langchain#35538).
                warnings.filterwarnings("ignore", "Pydantic serializer warnings", UserWarning, r"pydantic\.main")
                async for mode, chunk in graph.astream(
                    graph_input, config, context=context, stream_mode=STREAM_MODES, durability=DURABILITY
                ):
                    view.feed(mode, chunk)
                    yield view
            view.end(await graph.aget_state(config))
            yield view

    def _view(self, thread_id: str, values: Mapping[str, Any]) -> RunView:
        """A view of the turn `values` (a run's input, or its saved state) asks for, with the plan, choices and
        results it already holds."""
        workspace = self.workspace(thread_id)
        files = [workspace / name for name in values.get("files", [])]
        view = RunView(values.get("request", ""), [media_of(path) for path in files if path.is_file()])
        view.restore(values)
        return view

    async def reopen(self, thread_id: str) -> tuple[list[Message], RunView]:
        """A saved thread: the chat before its last turn, and that turn as it stands (done, paused or cut off).
        Raises NothingSaved for an unknown thread."""
        async with open_checkpointer(self.checkpoint_url, self.checkpoint_path) as saver:
            await check_saved(saver, thread_id)
            snapshot = await build_graph(saver).aget_state(_config(thread_id))
        view = self._view(thread_id, snapshot.values)
        view.end(snapshot)
        return earlier_turns(snapshot.values.get("messages", [])), view

    async def question(self, thread_id: str) -> ApprovalRequest | None:
        """What the thread's run is waiting for the user to answer, if it is waiting."""
        async with open_checkpointer(self.checkpoint_url, self.checkpoint_path) as saver:
            snapshot = await build_graph(saver).aget_state(_config(thread_id))
        return ApprovalRequest.model_validate(snapshot.interrupts[0].value) if snapshot.interrupts else None

    async def threads(self) -> list[str]:
        """Saved threads, the page's and the CLI's, most recent first."""
        async with open_checkpointer(self.checkpoint_url, self.checkpoint_path) as saver:
            return await list_threads(saver)
