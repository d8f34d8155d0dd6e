"""The command line as a user meets it: in a subprocess, with its output and exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def hugginggraph(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HUGGINGGRAPH_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "hugginggraph", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_start_up_imports_no_torch():
    code = (
        "import sys, hugginggraph.cli as cli; cli.parser(); "
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.slow
def test_make_tiny_then_list_shows_the_models(tmp_path: Path):
    made = hugginggraph("models", "make-tiny", str(tmp_path / "tiny"), "--task", "text-classification", home=tmp_path)
    assert made.returncode == 0, made.stderr
    assert f"text-classification: {tmp_path / 'tiny' / 'tiny-text-classification'}" in made.stdout
    listed = hugginggraph("models", "list", "--models-dir", str(tmp_path / "tiny"), "--random-models", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["task", "model", "source", "library", "downloads", "weights"]
    assert ["text-classification", "tiny-text-classification", "local", "transformers", "0", "random"] in rows
    tasks = [" ".join(line.split()) for line in listed.stdout.split("\nTask types:\n")[1].splitlines()]
    assert "text-classification tiny-text-classification (random weights), the controller LLM" in tasks
    # Without the flag, random weights are not offered: the task is the controller's alone.
    real = hugginggraph("models", "list", "--models-dir", str(tmp_path / "tiny"), home=tmp_path)
    assert "tiny-text-classification" not in real.stdout
    lines = [" ".join(line.split()) for line in real.stdout.splitlines()]
    assert "text-classification the controller LLM" in lines
    assert any(line.startswith("object-detection nothing offline: needs the Hub (--hub;") for line in lines)


def test_an_unknown_task_is_a_clear_error(tmp_path: Path):
    out = hugginggraph("models", "make-tiny", str(tmp_path), "--task", "make-coffee", home=tmp_path)
    assert out.returncode == 1
    assert "no tiny model for make-coffee; known:" in out.stderr and "Traceback" not in out.stderr


def test_resuming_a_thread_with_nothing_saved_is_a_clear_error(tmp_path: Path):
    out = hugginggraph("resume", "never-ran", home=tmp_path)
    assert out.returncode == 1
    assert out.stderr.strip() == "error: nothing was saved on thread 'never-ran': run the request again"


def test_bad_usage_exits_2(tmp_path: Path):
    out = hugginggraph("models", "fly", home=tmp_path)
    assert out.returncode == 2 and "invalid choice" in out.stderr


def test_install_offline_reports_what_it_installed(monkeypatch, capsys):
    from hugginggraph import cli
    from hugginggraph.tools import offline_models
    from hugginggraph.tools.llama_cpp import gguf_weights

    monkeypatch.setattr(offline_models, "install_offline_models", lambda reinstall: [f"experts-{reinstall}"])
    monkeypatch.setattr(gguf_weights, "install_weights", lambda name, reinstall: [f"weights-of-{name}-{reinstall}"])
    assert cli.main(["models", "install-offline"]) == 0
    assert capsys.readouterr().out.strip() == "installed: experts-False, weights-of-qwen2.5-coder-1.5b-False"
    assert cli.main(["models", "install-offline", "--controller", "qwen2.5-coder-0.5b", "--reinstall"]) == 0
    assert capsys.readouterr().out.strip() == "installed: experts-True, weights-of-qwen2.5-coder-0.5b-True"
