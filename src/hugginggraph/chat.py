"""`hugginggraph chat`: a conversation in the terminal, each line a request answered before the next is read.

In a terminal it shows a prompt, edits lines and keeps their history across sessions (Python's `readline`, where
the platform has it), and takes commands: `/file PATH` attaches a file to the next request, `/approve` turns plan
approval on or off, `/exit` (or end of input, Ctrl-D) ends the chat; Ctrl-C at the prompt drops the line. Piped
input is read the same way, one request per line, each run as soon as its line arrives. The process, and with it
the loaded models and the controller's prompt cache, stays up for the whole conversation.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

HELP = "/file PATH attaches a file to the next request, /approve turns plan approval on or off, /exit ends the chat"
ENDINGS = frozenset({"/exit", "/quit", "exit", "quit"})


@dataclass
class ChatInput:
    """The requests of a chat as the user types them, as graph inputs, one at a time (`turns`)."""

    files: Sequence[str] = ()
    """Files given with `--file`: part of every request."""
    approval: bool = False
    history_file: Path | None = None
    """Where typed lines are kept between sessions (readline's history), in a terminal."""
    source: TextIO = field(default_factory=lambda: sys.stdin)
    out: TextIO = field(default_factory=lambda: sys.stdout)
    attached: list[str] = field(default_factory=list)
    """Files attached with `/file` for the next request."""

    @property
    def interactive(self) -> bool:
        return self.source.isatty()

    def turns(self, thread_id: str) -> Iterator[dict[str, Any]]:
        """Each request as the graph's input, read when the last one has been answered."""
        with self._line_editing():
            if self.interactive:
                self.say(f"Chat on thread {thread_id}. {HELP}.")
            while (line := self._read()) is not None:
                words = line.split(maxsplit=1)
                if not words:
                    continue
                if line.lower() in ENDINGS:
                    return
                if words[0] == "/file":
                    self._attach(words[1] if len(words) > 1 else "")
                elif words[0] == "/approve":
                    self.approval = not self.approval
                    self.say(f"Plan approval is {'on' if self.approval else 'off'}.")
                elif words[0].startswith("/"):
                    self.say(f"Unknown command {words[0]}: {HELP}.")
                else:
                    files, self.attached = [*self.files, *self.attached], []
                    yield {"request": line, "files": files, "mode": "full", "approval": self.approval}

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _attach(self, argument: str) -> None:
        try:
            names = shlex.split(argument)
        except ValueError as error:
            names, problem = [], str(error)
        else:
            problem = "" if names else "no file named"
        if problem:
            self.say(f"/file PATH: {problem}.")
            return
        self.attached.extend(names)
        self.say(f"Attached to the next request: {', '.join(self.attached)}.")

    def _read(self) -> str | None:
        """The next line, stripped; None at the end of input."""
        while True:
            try:
                if self.interactive:
                    attached = f"[{', '.join(self.attached)}] " if self.attached else ""
                    return input(f"{attached}> ").strip()
                line = self.source.readline()
                return line.strip() if line else None
            except EOFError:
                self.say("")
                return None
            except KeyboardInterrupt:  # at the prompt: the line is dropped, the chat goes on
                self.say("")

    @contextlib.contextmanager
    def _line_editing(self) -> Iterator[None]:
        """readline's editing and history for `input`, in a terminal, where the module exists."""
        readline: Any = None
        if self.interactive and self.source is sys.stdin:
            with contextlib.suppress(ImportError):
                import readline  # importing it is what turns line editing on for input()
        if readline is not None and self.history_file is not None:
            with contextlib.suppress(OSError):
                readline.read_history_file(self.history_file)
        try:
            yield
        finally:
            if readline is not None and self.history_file is not None:
                with contextlib.suppress(OSError):
                    self.history_file.parent.mkdir(parents=True, exist_ok=True)
                    readline.write_history_file(self.history_file)
