"""Chat models from `provider:model` names: the embedded local controller, OpenAI, or any OpenAI-compatible
server. Providers are imported only when asked for, so naming one costs nothing until it is used."""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel

from hugginggraph.settings import ConfigurationError, Settings

PROVIDERS = ("local", "openai")


def chat_model(spec: str, settings: Settings) -> BaseChatModel:
    """The chat model `spec` names; a ConfigurationError says what is missing (a key, a package, a name)."""
    provider, sep, name = spec.partition(":")
    if not sep or not name or provider not in PROVIDERS:
        raise ConfigurationError(
            f"unknown model {spec!r}: write provider:model with a provider among {', '.join(PROVIDERS)}, "
            "e.g. local:qwen2.5-coder-1.5b or openai:gpt-4o-mini"
        )
    if provider == "openai":
        return _openai(name, settings)
    return _local(name)


def _openai(name: str, settings: Settings) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    if settings.api_key is None and settings.base_url is None:
        raise ConfigurationError(
            "OPENAI_API_KEY is not set: export it, or give --base-url for a local OpenAI-compatible server, "
            "or use the embedded controller (--model local:qwen2.5-coder-1.5b)"
        )
    # Local servers (vLLM, Ollama, llama.cpp) take any key; the client insists on one.
    api_key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
    return ChatOpenAI(model=name, base_url=settings.base_url, api_key=api_key, temperature=0)  # type: ignore[arg-type]


def _local(name: str) -> BaseChatModel:
    from hugginggraph.tools.controllers.gguf_weights import ControllerNotInstalled
    from hugginggraph.tools.controllers.local_llama import local_chat_model

    try:
        return local_chat_model(name)
    except ControllerNotInstalled as error:
        raise ConfigurationError(str(error)) from error
