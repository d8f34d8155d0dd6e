"""`hugginggraph chat`: its commands, and a conversation typed into a real pseudo-terminal, each answer shown before
the next request is typed."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pexpect
import pytest
from test_cli_runs import ANSWER, PROXIES, TERMINAL, server  # noqa: F401  (server: the fake controller fixture)

from hugginggraph.chat import ChatInput


def typed(text: str, files: tuple[str, ...] = ()) -> list[dict[str, object]]:
    chat = ChatInput(files, source=io.StringIO(text), out=io.StringIO())
    return list(chat.turns("t"))


def test_each_line_is_a_request_and_files_attach_to_the_next_one_only():
    turns = typed("/file memo.wav 'my photo.jpg'\ntranscribe it\n\n  \nand again\n", files=("notes.txt",))
    assert [(turn["request"], turn["files"]) for turn in turns] == [
        ("transcribe it", ["notes.txt", "memo.wav", "my photo.jpg"]),
        ("and again", ["notes.txt"]),
    ]


def test_approve_toggles_and_exit_ends_the_chat():
    out = io.StringIO()
    chat = ChatInput(source=io.StringIO("/approve\nfirst\n/approve\nsecond\n/unknown\n/exit\nnever\n"), out=out)
    assert [(turn["request"], turn["approval"]) for turn in chat.turns("t")] == [("first", True), ("second", False)]
    said = out.getvalue()
    assert "Plan approval is on." in said and "Plan approval is off." in said and "Unknown command /unknown" in said


def test_a_file_command_without_a_file_says_so():
    out = io.StringIO()
    assert list(ChatInput(source=io.StringIO("/file\n/file 'open\n"), out=out).turns("t")) == []
    assert out.getvalue().count("/file PATH:") == 2


@pytest.mark.slow
def test_a_conversation_in_a_terminal_answers_each_line_before_the_next(tmp_path: Path, server):  # noqa: F811
    env = {key: value for key, value in os.environ.items() if key not in PROXIES | TERMINAL}
    env.update(HUGGINGGRAPH_HOME=str(tmp_path / "home"), OPENAI_API_KEY="sk-test", HF_HUB_OFFLINE="1", TERM="dumb")
    command = ["-m", "hugginggraph", "chat", "--thread", "talk", "--model", "openai:fake-model"]
    terminal = pexpect.spawn(
        sys.executable,
        [*command, "--base-url", server.base_url],
        env=env,
        cwd=str(tmp_path),
        encoding="utf-8",
        timeout=120,
        dimensions=(40, 200),
    )
    try:
        terminal.expect_exact("Chat on thread talk.")
        terminal.expect_exact("> ")
        terminal.sendline("is this text positive?")
        terminal.expect_exact(ANSWER)  # answered while the chat waits for the next line
        terminal.expect_exact("> ")
        assert len(server.requests_for("respond")) == 1
        terminal.sendline("/file notes.txt")
        terminal.expect_exact("Attached to the next request: notes.txt.")
        terminal.expect_exact("[notes.txt] > ")  # the prompt shows what the next request carries
        terminal.sendline("/exit")
        terminal.expect(pexpect.EOF)
    finally:
        terminal.close()
    assert terminal.exitstatus == 0
    assert "is this text positive?" in (tmp_path / "home" / "chat_history").read_text()  # readline kept the line
