"""llama-cpp-python leaves the process's output alone while the controller loads on a thread of its own, and
llama.cpp's messages reach logging at their own level."""

import logging
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hugginggraph.tools.llama_cpp.gguf_weights import install_hint, missing_requirements
from hugginggraph.tools.llama_cpp.library_output import _Relay

CONTROLLER = "qwen2.5-coder-0.5b"


def test_llama_cpp_messages_reach_logging_at_ggmls_levels_continuations_at_the_last_one(caplog):
    relay = _Relay()
    with caplog.at_level(logging.DEBUG, logger="hugginggraph.llama_cpp"):
        relay(3, b"load: control-looking token\n", None)  # GGML_LOG_LEVEL_WARN
        relay(5, b"... continued\n", None)
        relay(4, b"failed to load\n", None)
        relay(1, b"", None)  # nothing to say
    assert [(record.levelno, record.getMessage()) for record in caplog.records] == [
        (logging.WARNING, "load: control-looking token"),
        (logging.WARNING, "... continued"),
        (logging.ERROR, "failed to load"),
    ]


@pytest.mark.slow
def test_what_the_process_prints_while_the_controller_loads_early_is_not_lost(tmp_path: Path):
    """The command line printed nothing for a run refused in milliseconds: llama-cpp-python had pointed stdout and
    stderr at /dev/null for the background load (abetlen/llama-cpp-python#1874). Lines printed all through a real
    early load, and after it, must all arrive, with none of llama.cpp's warnings."""
    pytest.importorskip("llama_cpp")
    if missing_requirements(CONTROLLER):
        pytest.fail(f"the {CONTROLLER} weight packages are not installed: {install_hint(CONTROLLER)}")
    code = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from hugginggraph.tools.llama_cpp.local_llama import local_chat_model

        model = local_chat_model({CONTROLLER!r}, data_dir=Path({str(tmp_path)!r}))
        model.load_soon()
        line = 0
        while model.loaded_model() is None:
            print("out", line, flush=True)
            print("err", line, file=sys.stderr, flush=True)
            line += 1
            time.sleep(0.005)
        print("loaded after", line, "lines")
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    out, err = done.stdout.splitlines(), done.stderr.splitlines()
    lines = int(out[-1].split()[2])
    assert lines > 0  # the load took long enough to print through it
    assert out == [f"out {line}" for line in range(lines)] + [f"loaded after {lines} lines"]
    assert err == [f"err {line}" for line in range(lines)]
