from dataclasses import replace

import pytest

from hugginggraph.context_assembly import start_loading
from hugginggraph.tools.llama_cpp.local_llama import LocalLlamaChatModel


def test_start_loading_starts_only_the_embedded_controllers(make_context, monkeypatch: pytest.MonkeyPatch):
    started: list[str] = []
    monkeypatch.setattr(LocalLlamaChatModel, "load_soon", lambda self: started.append(self.model_path))
    context = make_context([], {})
    local = replace(context, stage_llms={"respond": LocalLlamaChatModel(model_path="answers.gguf")})

    assert start_loading(local) is local and started == ["answers.gguf"]  # the planning one is scripted
    start_loading(replace(local, llm=LocalLlamaChatModel(model_path="plans.gguf")))
    assert started == ["answers.gguf", "plans.gguf", "answers.gguf"]
