"""Chat models from `provider:model` names: the embedded local controller, or any provider LangChain's
`init_chat_model` knows whose integration package is installed (OpenAI and OpenAI-compatible servers come with
HuggingGraph). Providers are imported only when asked for, so naming one costs nothing until it is used."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel

from hugginggraph.settings import ConfigurationError, Settings


def chat_model(spec: str, settings: Settings) -> BaseChatModel:
    """The chat model `spec` names; a ConfigurationError says what is missing (a key, a package, a name)."""
    provider, sep, name = spec.partition(":")
    if not sep or not provider or not name:
        raise ConfigurationError(
            f"unknown model {spec!r}: write provider:model, e.g. local:qwen2.5-coder-1.5b (embedded, no key), "
            "openai:gpt-4o-mini, anthropic:claude-sonnet-4-5 or ollama:llama3.2 (with its LangChain package)"
        )
    if provider == "local":
        return _local(name)
    return _integration(provider, name, _openai_options(settings) if provider == "openai" else {})


def _openai_options(settings: Settings) -> dict[str, Any]:
    """The configured OpenAI server and key: `base_url` points `openai:` at any OpenAI-compatible server."""
    if settings.api_key is None and settings.base_url is None:
        raise ConfigurationError(
            "OPENAI_API_KEY is not set: export it, or give --base-url for a local OpenAI-compatible server, "
            "or use the embedded controller (--model local:qwen2.5-coder-1.5b)"
        )
    # Local servers (vLLM, Ollama, llama.cpp) take any key; the client insists on one.
    api_key = settings.api_key.get_secret_value() if settings.api_key else "not-needed"
    return {"base_url": settings.base_url, "api_key": api_key}


def _integration(provider: str, name: str, options: dict[str, Any]) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    try:
        # Greedy, so a plan or a choice does not change between two runs of the same request.
        return init_chat_model(name, model_provider=provider, temperature=0, **options)
    except ImportError as error:  # the message names the package: "pip install langchain-anthropic"
        raise ConfigurationError(f"{provider}:{name} needs its LangChain integration: {error}") from error
    except ValueError as error:  # an unknown provider (the message lists the known ones), or a missing key
        raise ConfigurationError(f"cannot use {provider}:{name}: {' '.join(str(error).split())}") from error


def _local(name: str) -> BaseChatModel:
    from hugginggraph.tools.llama_cpp.gguf_weights import ControllerNotInstalled
    from hugginggraph.tools.llama_cpp.local_llama import local_chat_model

    try:
        return local_chat_model(name)
    except ControllerNotInstalled as error:
        raise ConfigurationError(str(error)) from error
