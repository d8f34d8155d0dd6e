"""llama-cpp-python's output while it loads and runs a model, made safe for a process that prints meanwhile.

Asked to be quiet (`verbose=False`), llama-cpp-python points the whole process's stdout and stderr at /dev/null while
it loads a model (`os.dup2` on file descriptors 1 and 2, in `llama_cpp._utils.suppress_stdout_stderr`;
abetlen/llama-cpp-python#1874). The controller loads on a thread of its own while the command line prints
(`LocalLlamaChatModel.load_soon`), so whatever the process wrote during the load was lost: a run refused in
milliseconds (an input file outside the workspace) printed nothing at all. Here that redirection is a no-op, and
llama.cpp's messages, which all pass through its log callback, go to Python's logging at their own level, errors
only by default: the library's own callback reads the levels of an older ggml (a warning counted as an error).
"""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger("hugginggraph.llama_cpp")

_LEVELS = {1: logging.DEBUG, 2: logging.INFO, 3: logging.WARNING, 4: logging.ERROR}
"""ggml's `ggml_log_level` values (ggml.h: NONE 0, DEBUG 1, INFO 2, WARN 3, ERROR 4, CONT 5) as logging levels."""
_CONTINUED = 5
"""A message continuing the previous one, at its level."""

_callback: Any = None
"""The log callback handed to llama.cpp, kept alive here: llama.cpp holds only a C pointer to it."""


class _OutputKept:
    """Stands in for `suppress_stdout_stderr`: nothing is redirected."""

    def __init__(self, disable: bool = True) -> None:
        pass

    def __enter__(self) -> _OutputKept:
        return self

    def __exit__(self, *_: object) -> None:
        return None


class _Relay:
    """llama.cpp's messages, line by line, to `logger`; errors only unless the logger is told otherwise."""

    def __init__(self) -> None:
        self.level = logging.DEBUG

    def __call__(self, level: int, text: bytes | None, _user_data: Any) -> None:
        if level != _CONTINUED:
            self.level = _LEVELS.get(level, logging.DEBUG)
        if text and logger.isEnabledFor(self.level):
            logger.log(self.level, "%s", text.decode("utf-8", "replace").rstrip("\n"))


def keep_process_output() -> None:
    """Make llama-cpp-python leave the process's stdout and stderr alone and send llama.cpp's messages to logging.
    Idempotent; called before each load."""
    global _callback
    import llama_cpp
    import llama_cpp._internals
    import llama_cpp.llama

    llama_cpp.llama.suppress_stdout_stderr = _OutputKept  # type: ignore[misc,assignment]
    llama_cpp._internals.suppress_stdout_stderr = _OutputKept  # type: ignore[misc,assignment]
    if _callback is None:
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.ERROR)
        _callback = llama_cpp.llama_log_callback(_Relay())
        llama_cpp.llama_log_set(_callback, None)
