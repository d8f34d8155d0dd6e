"""`hugginggraph ui`: the web app (the `ui` extra), Gradio's page on the stream the command line follows.

Upload images, sound or text, write a request, and watch it run: the plan as a DAG, each task's status as it
starts and ends, its outputs inline (pictures shown, sound playable), the answer as the controller writes it. With
approval on, the plan and its models wait on the page to be approved, edited or rejected. Past threads, the CLI's
included, are listed from the checkpointer and reopen where they stand.

Gradio because it is the Hugging Face ecosystem's way to put models on a page. The page is served on 127.0.0.1
unless told otherwise, never through a share link, with Gradio's analytics off and nothing fetched from a CDN:
it works where the rest of HuggingGraph works, offline. What the page shows is worked out in
hugginggraph.web_app_view; the runs behind it are hugginggraph.web_app_runs; this module is the layout.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

import gradio as gr

from hugginggraph.approval_dialog import edit_decision
from hugginggraph.nodes.approval import ApprovalDecision
from hugginggraph.paths import default_data_dir
from hugginggraph.settings import Settings
from hugginggraph.web_app_runs import WebRuns
from hugginggraph.web_app_view import (
    TABLE_COLUMNS,
    Media,
    Message,
    RunView,
    conversation,
    phase,
    plan_dag,
    question_text,
    task_table,
)

PLAYERS: dict[str, Callable[..., gr.components.Component]] = {
    "image": gr.Image,
    "audio": gr.Audio,
    "video": gr.Video,
    "file": gr.File,
}
"""The Gradio component that shows each kind of file inline in the chat."""

RUNS = "runs"
"""The queue every event that streams a run joins: one run at a time, as the embedded controller runs one call at
a time anyway; other users wait their turn in Gradio's queue."""


@dataclass(frozen=True)
class Session:
    """One browser tab's conversation: its thread and the turns before the current one, as they were shown."""

    thread_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    history: list[Message] = field(default_factory=list)


def _content(media: Media, folders: list[Path]) -> Any:
    """A file as its player, or its path in words when the page may not serve it (gone since, or saved by a run
    outside the page's folders)."""
    path = Path(media.path)
    if path.is_file() and any(path.resolve().is_relative_to(folder.resolve()) for folder in folders):
        return PLAYERS[media.kind](value=str(path), label=path.name)
    return f"({media.kind}: {media.path})"


def _chat(messages: list[Message], folders: list[Path]) -> list[dict[str, Any]]:
    """Bubbles in Gradio's message format; a task's bubble is a folded "thought" with its status beside it."""
    chat: list[dict[str, Any]] = []
    for message in messages:
        content = message.text if message.media is None else _content(message.media, folders)
        entry: dict[str, Any] = {"role": message.role, "content": content}
        if message.title is not None:
            entry["metadata"] = {"title": message.title, "log": message.log}
            if message.pending:
                entry["metadata"]["status"] = "pending"
        chat.append(entry)
    return chat


def build_app(runs: WebRuns) -> gr.Blocks:
    """The page, wired to `runs`."""
    with gr.Blocks(title="HuggingGraph", analytics_enabled=False) as app:
        session = gr.State()  # a Session, set as the page loads or by the first request an API client sends
        gr.Markdown("## HuggingGraph\nAn LLM plans the tasks, picks expert models, runs them and answers.")
        with gr.Row():
            with gr.Column(scale=3):
                chat = gr.Chatbot(label="Conversation", elem_id="chat", height=560)
                request = gr.Textbox(label="Request", lines=2, elem_id="request", placeholder="Transcribe memo.wav")
                uploads = gr.File(label="Images, sound, text", file_count="multiple", height=120, elem_id="uploads")
                with gr.Row():
                    approval = gr.Checkbox(label="Show me the plan before any model runs", elem_id="approval")
                    send = gr.Button("Run", variant="primary", elem_id="run")
            with gr.Column(scale=2):
                status = gr.Markdown(elem_id="status")
                with gr.Group(visible=False, elem_id="question") as panel:
                    question = gr.Markdown()
                    edits = gr.Textbox(
                        label="Edits, one per line: ID ARG=VALUE or ID model=MODEL",
                        placeholder="0 text=a calmer sentence",
                        lines=2,
                        elem_id="edits",
                    )
                    reason = gr.Textbox(label="Why not (when rejecting)", elem_id="reason")
                    with gr.Row():
                        approve = gr.Button("Approve", variant="primary", elem_id="approve")
                        edit = gr.Button("Apply edits", elem_id="edit")
                        reject = gr.Button("Reject", variant="stop", elem_id="reject")
                dag = gr.Markdown(elem_id="dag")
                thread = gr.Markdown(elem_id="thread")
                threads = gr.Dropdown(label="Past threads", choices=[], allow_custom_value=True, elem_id="threads")
                with gr.Row():
                    reopen = gr.Button("Open", elem_id="open")
                    new = gr.Button("New conversation", elem_id="new")
        table = gr.Dataframe(
            headers=TABLE_COLUMNS,
            label="Tasks",
            interactive=False,
            wrap=True,
            column_widths=["4%", "18%", "18%", "5%", "15%", "20%", "20%"],
            elem_id="tasks",
        )

        def frame(state: Session, view: RunView | None) -> dict[Any, Any]:
            """Every part of the page for the turn `view` (None: no turn yet)."""
            shown = state.history + (conversation(view) if view else [])
            return {
                session: state,
                chat: _chat(shown, runs.folders),
                status: phase(view) if view else "",
                panel: gr.Group(visible=bool(view and view.question)),
                question: question_text(view.question) if view and view.question else "",
                dag: plan_dag(view) if view else "",
                table: task_table(view) if view else [],
                thread: f"Thread `{state.thread_id}`",
            }

        async def follow(state: Session, views: AsyncIterator[RunView]) -> AsyncIterator[dict[Any, Any]]:
            """The page after each item of the stream, then the whole page once more with the threads listed. The
            DAG and the table are sent only when they change, so Mermaid does not redraw for every token."""
            sent: dict[Any, Any] = {}
            view = None
            async for view in views:
                page = frame(state, view)
                for part in (dag, table):
                    if sent.get(part) == page[part]:
                        del page[part]
                    else:
                        sent[part] = page[part]
                yield page
            last = frame(state, view)
            if view is not None and view.ended:  # a paused turn is read again from the checkpointer when answered
                last[session] = Session(state.thread_id, state.history + conversation(view))
            yield {**last, threads: gr.Dropdown(choices=await runs.threads())}

        async def on_run(state: Session | None, text: str, files: list[str] | None, ask: bool) -> AsyncIterator[Any]:
            if not text.strip():
                raise gr.Error("Write a request first.")
            state = state or Session()
            names = runs.receive(state.thread_id, files or [])
            yield {request: "", uploads: None}
            async for page in follow(state, runs.start(state.thread_id, text.strip(), names, ask)):
                yield page

        async def decide(state: Session, decision: ApprovalDecision) -> AsyncIterator[Any]:
            yield {edits: "", reason: ""}
            async for page in follow(state, runs.answer(state.thread_id, decision)):
                yield page

        async def on_answer(action: Literal["approve", "reject"], state: Session, why: str) -> AsyncIterator[Any]:
            feedback = why.strip() if action == "reject" else ""
            async for page in decide(state, ApprovalDecision(action=action, feedback=feedback)):
                yield page

        async def on_edit(state: Session, lines: str) -> AsyncIterator[Any]:
            asked = await runs.question(state.thread_id)
            if asked is None:
                raise gr.Error("This thread is not waiting for an answer.")
            try:
                decision = edit_decision(asked, [line for line in lines.splitlines() if line.strip()])
            except ValueError as error:
                raise gr.Error(f"Not applied: {error}") from None
            async for page in decide(state, decision):
                yield page

        async def on_open(thread_id: str | None) -> dict[Any, Any]:
            if not thread_id:
                raise gr.Error("Choose a thread first.")
            history, view = await runs.reopen(thread_id)
            return frame(Session(thread_id, history), view)

        async def on_load() -> dict[Any, Any]:
            return {**frame(Session(), None), threads: gr.Dropdown(choices=await runs.threads())}

        parts = [session, chat, status, panel, question, dag, table, thread, threads]

        def streams(
            button: gr.Button, handler: Callable[..., AsyncIterator[Any]], inputs: list[Any], name: str
        ) -> None:
            """A button that runs the graph: its pages stream, its inputs are cleared, it waits for its turn."""
            outputs = [*parts, request, uploads, edits, reason]
            button.click(
                handler,
                inputs,
                outputs,
                api_name=name,
                show_progress="minimal",
                concurrency_id=RUNS,
                concurrency_limit=1,
            )

        streams(send, on_run, [session, request, uploads, approval], "run")
        streams(approve, partial(on_answer, "approve"), [session, reason], "approve")
        streams(reject, partial(on_answer, "reject"), [session, reason], "reject")
        streams(edit, on_edit, [session, edits], "edit")
        reopen.click(on_open, [threads], parts, api_name="open")
        new.click(lambda: frame(Session(), None), None, parts, api_name="new")
        app.load(on_load, None, parts)
    return app


def launch(app: gr.Blocks, runs: WebRuns, host: str, port: int, *, block: bool) -> str:
    """Serve the page; return its address. With `block`, return only once the server is stopped (Ctrl-C)."""
    _, url, _ = app.launch(
        server_name=host,
        server_port=port,
        share=False,
        ssr_mode=False,  # Gradio's server-side rendering would start a Node process: nothing it needs here
        allowed_paths=[str(folder) for folder in runs.folders],
        prevent_thread_lock=not block,
        show_error=True,
        quiet=not block,
    )
    return url


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 7860) -> int:
    """Build the context once (the controller and every expert), then serve the page until Ctrl-C."""
    from hugginggraph.context_assembly import build_context, start_loading

    uploads = default_data_dir() / "uploads"
    context = start_loading(build_context(settings, uploads, resident=True))
    runs = WebRuns(context, uploads, checkpoint_path=settings.checkpoint_path, checkpoint_url=settings.checkpoint_url)
    launch(build_app(runs), runs, host, port, block=True)
    return 0
