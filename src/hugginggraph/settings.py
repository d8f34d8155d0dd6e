"""HuggingGraph's configuration: one typed object, read from command-line flags, the environment and an optional
TOML file, in that order of precedence.

The controller is named `provider:model`, as LangChain's `init_chat_model` does: `local:qwen2.5-coder-1.5b` (the
embedded default, no key), `openai:gpt-4o-mini`, or `openai:<name>` with a base URL for any OpenAI-compatible
server (vLLM, Ollama, llama.cpp's server). One controller serves every stage unless a stage names its own.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_config_dir
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from hugginggraph.tools.runners.hub_downloads import DEFAULT_BUDGET_GB

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"

ENVIRONMENT = {
    "HUGGINGGRAPH_MODEL": "model",
    "HUGGINGGRAPH_PLAN_MODEL": "plan_model",
    "HUGGINGGRAPH_SELECT_MODEL": "select_model",
    "HUGGINGGRAPH_RESPOND_MODEL": "respond_model",
    "OPENAI_BASE_URL": "base_url",
    "OPENAI_API_KEY": "api_key",
    "HUGGINGGRAPH_HUB": "hub",
    "HUGGINGGRAPH_HUB_DISK_BUDGET_GB": "hub_disk_budget_gb",
    "HUGGINGGRAPH_CHECKPOINTS": "checkpoint_path",
    "HUGGINGGRAPH_CHECKPOINT_URL": "checkpoint_url",
    "HUGGINGGRAPH_ISOLATE_MODELS": "isolate_models",
    "HUGGINGGRAPH_RANDOM_MODELS": "random_models",
}
"""Environment variable → setting."""


class ConfigurationError(ValueError):
    """The configuration cannot work; the message says what to change."""


class Settings(BaseModel):
    """Everything a run is configured by; see the module docstring for where each value comes from."""

    model_config = ConfigDict(extra="forbid")

    model: str = DEFAULT_MODEL
    """The controller for every stage, `provider:model`."""
    plan_model: str | None = None
    select_model: str | None = None
    respond_model: str | None = None
    base_url: str | None = None
    """An OpenAI-compatible server for `openai:` models (default: OpenAI's own)."""
    api_key: SecretStr | None = None
    models_dirs: list[Path] = Field(default_factory=list)
    """Extra folders of saved models for the catalog."""
    hub: bool | Literal["auto"] = "auto"
    """Also list the Hugging Face Hub's models: "auto" when the Hub answers a short probe at the first run of the
    process (never with `HF_HUB_OFFLINE=1`; `tools/hub_probe.py`), true always, false never. The environment and the
    config file take `auto`, or true/false, 1/0, on/off."""
    hub_disk_budget_gb: float = Field(default=DEFAULT_BUDGET_GB, gt=0)
    """The most the Hugging Face cache may hold, in GB, after a Hub model is downloaded to run here: a model that
    would take it past this is not downloaded, and its task moves to the next candidate, saying how to make room."""
    checkpoint_path: Path | None = None
    """The SQLite file runs are saved in (default: in the user data directory)."""
    checkpoint_url: SecretStr | None = None
    """A `postgresql://` URL: save runs in that database instead of SQLite (a secret: it may hold a password)."""
    random_models: bool = False
    """Also offer models with random weights (`models make-tiny` folders, the Hub's `tiny-random` test models),
    for trying the wiring offline; their outputs are noise and are labelled so wherever they are shown."""
    isolate_models: bool = False
    """Run local models in a child process per call, so a timed-out call is killed, not left computing
    (`SubprocessRunner`); each call then pays a process start and a model load."""

    def stage_models(self) -> dict[str, str]:
        """Stages whose controller differs from `model`."""
        chosen = {"plan": self.plan_model, "select": self.select_model, "respond": self.respond_model}
        return {stage: spec for stage, spec in chosen.items() if spec and spec != self.model}


def default_config_file() -> Path:
    """`$HUGGINGGRAPH_CONFIG`, else `config.toml` in the user config directory (e.g. `~/.config/hugginggraph`)."""
    return Path(os.environ.get("HUGGINGGRAPH_CONFIG") or Path(user_config_dir("hugginggraph")) / "config.toml")


def load_settings(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Settings from `flags` (values None are unset), then `environ`, then `config_file`, then the defaults."""
    environ = os.environ if environ is None else environ
    path = config_file or default_config_file()
    values: dict[str, Any] = _read_file(path) if path.is_file() else {}
    values.update({setting: environ[name] for name, setting in ENVIRONMENT.items() if environ.get(name)})
    values.update({key: value for key, value in (flags or {}).items() if value is not None})
    try:
        return Settings(**values)
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ConfigurationError(f"invalid configuration ({problems}); check {path} and the environment") from error


def _read_file(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ConfigurationError(f"cannot read the config file {path}: {error}") from error
