"""HuggingGraph's configuration: one typed object (pydantic-settings), read from command-line flags, the
environment and an optional TOML file, in that order of precedence; the defaults fill the rest.

Every setting has one name: the TOML key (`[limits]` and `[planning]` are tables), `HUGGINGGRAPH_` + the name in
capitals for the environment (`__` between a table and its key: `HUGGINGGRAPH_LIMITS__TOP_K`), and `--set
NAME=VALUE` on the command line (`--set limits.top_k=3`), which the common flags (`--model`, `--hub`, ...) spell
shorter. The README's settings table lists them all, and a test holds it to these fields.

The controller is named `provider:model`, as LangChain's `init_chat_model` does: `local:qwen2.5-coder-1.5b` (the
embedded default, no key), `openai:gpt-4o-mini` (or any OpenAI-compatible server with a base URL), or any provider
whose LangChain integration is installed (`anthropic:...`, `ollama:...`). One controller serves every stage unless
a stage names its own.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_config_dir
from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from hugginggraph.errors import ConfigurationError as ConfigurationError  # raised here, caught by callers
from hugginggraph.graph.context import Limits, PlanningAids
from hugginggraph.tools.expert_endpoints import ExpertEndpoint
from hugginggraph.tools.runners.hub_downloads import DEFAULT_BUDGET_GB

DEFAULT_MODEL = "local:qwen2.5-coder-1.5b"
ENV_PREFIX = "HUGGINGGRAPH_"
TABLE_SEPARATOR = "__"


class Settings(BaseSettings):
    """Everything a run is configured by; see the module docstring for where each value comes from."""

    model_config = SettingsConfigDict(
        extra="forbid",
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=TABLE_SEPARATOR,
        env_ignore_empty=True,
        use_attribute_docstrings=True,
        validate_by_name=True,  # an alias names an environment variable; flags and the file use the setting's name
    )

    model: str = DEFAULT_MODEL
    """The controller for every stage, `provider:model`."""
    plan_model: str | None = None
    """The planner, when it differs from `model`."""
    select_model: str | None = None
    """The model chooser, when it differs from `model`."""
    respond_model: str | None = None
    """The answer writer, when it differs from `model`."""
    base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("HUGGINGGRAPH_BASE_URL", "OPENAI_BASE_URL")
    )
    """An OpenAI-compatible server for `openai:` models (default: OpenAI's own); environment `OPENAI_BASE_URL`."""
    api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("HUGGINGGRAPH_API_KEY", "OPENAI_API_KEY")
    )
    """The key for `openai:` models; environment `OPENAI_API_KEY`. Other providers read their own variable."""
    endpoints: list[ExpertEndpoint] = Field(default_factory=list)
    """Inference servers for some task types (TGI, TEI, vLLM, Inference Endpoints), each the first candidate of its
    tasks while it answers: `[[endpoints]]` tables in the file (`url`, `tasks`, `model`, `protocol`, `token`), a
    JSON list in `HUGGINGGRAPH_ENDPOINTS` (docs/deploy.md)."""
    models_dirs: list[Path] = Field(default_factory=list)
    """Extra folders of saved models for the catalog."""
    hub: bool | Literal["auto"] = "auto"
    """Also list the Hugging Face Hub's models: "auto" when the Hub answers a short probe at the first run of the
    process (never with `HF_HUB_OFFLINE=1`; `tools/hub_probe.py`), true always, false never."""
    hub_disk_budget_gb: float = Field(default=DEFAULT_BUDGET_GB, gt=0)
    """The most the Hugging Face cache may hold, in GB, after a Hub model is downloaded to run here: a model that
    would take it past this is not downloaded, and its task moves to the next candidate, saying how to make room."""
    checkpoint_path: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("HUGGINGGRAPH_CHECKPOINT_PATH", "HUGGINGGRAPH_CHECKPOINTS"),
    )
    """The SQLite file runs are saved in (default: in the user data directory); also `HUGGINGGRAPH_CHECKPOINTS`."""
    checkpoint_url: SecretStr | None = None
    """A `postgresql://` URL: save runs in that database instead of SQLite (a secret: it may hold a password)."""
    random_models: bool = False
    """Also offer models with random weights (`models make-tiny` folders, the Hub's `tiny-random` test models),
    for trying the wiring offline; their outputs are noise and are labelled so wherever they are shown."""
    isolate_models: bool | None = None
    """Run local models in worker processes that keep them loaded (`SubprocessRunner`), so a timed-out call is
    killed, not left computing, and a crashing model takes only its worker down. Unset, it is on where the process
    stays (the LangGraph server, `ui`, `mcp`, `chat`): a warm worker's call costs little more than one in a thread,
    and a call that hangs there would otherwise hold its thread and model for the life of the server. One-shot runs
    (`run`, `demo`, `plan`, `resume`) keep models in their own thread, since a worker's first call pays a fresh
    interpreter, its imports and the model's load, which a process that ends after one request never earns back
    (SECURITY.md, Timeouts)."""
    limits: Limits = Field(default_factory=Limits)
    """Bounds on each run: candidates per task, timeouts, budgets (`graph/context.py`, `Limits`)."""
    planning: PlanningAids = Field(default_factory=PlanningAids)
    """What the planner is given besides the request (`graph/context.py`, `PlanningAids`; docs/planning.md)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Flags (the constructor's values) over the environment over the TOML file; no dotenv or secrets folder."""
        return init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=default_config_file())

    def stage_models(self) -> dict[str, str]:
        """Stages whose controller differs from `model`."""
        chosen = {"plan": self.plan_model, "select": self.select_model, "respond": self.respond_model}
        return {stage: spec for stage, spec in chosen.items() if spec and spec != self.model}


def default_config_file() -> Path:
    """`$HUGGINGGRAPH_CONFIG`, else `config.toml` in the user config directory (e.g. `~/.config/hugginggraph`)."""
    return Path(os.environ.get("HUGGINGGRAPH_CONFIG") or Path(user_config_dir("hugginggraph")) / "config.toml")


def load_settings(flags: Mapping[str, Any] | None = None) -> Settings:
    """Settings from `flags` (values None are unset; nested tables as dicts), then the environment, then the
    config file, then the defaults. A value that does not fit is a ConfigurationError naming it."""
    try:
        return Settings(**{key: value for key, value in (flags or {}).items() if value is not None})
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"cannot read the config file {default_config_file()}: {error}") from error
    except ValidationError as error:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ConfigurationError(
            f"invalid configuration ({problems}); check the flags, the environment and {default_config_file()}"
        ) from error


def setting_names() -> list[str]:
    """Every setting's dotted name (`limits.top_k`), as `--set` and the README's table spell them."""
    names: list[str] = []
    for name, field in Settings.model_fields.items():
        if is_dataclass(field.annotation):
            names.extend(f"{name}.{inner.name}" for inner in fields(field.annotation))
        else:
            names.append(name)
    return names


def environment_variables() -> dict[str, str]:
    """Each environment variable a setting is read from → the setting's dotted name (an alias list where the
    setting has one, `HUGGINGGRAPH_` + the name in capitals otherwise)."""
    variables: dict[str, str] = {}
    for name in setting_names():
        field = Settings.model_fields.get(name)
        alias = field.validation_alias if field else None
        if isinstance(alias, AliasChoices):
            variables.update({str(choice): name for choice in alias.choices})
        else:
            variables[ENV_PREFIX + name.replace(".", TABLE_SEPARATOR).upper()] = name
    return variables


def assignments(pairs: Iterable[str]) -> dict[str, Any]:
    """`--set` values (`NAME=VALUE`, dotted for a table's key) as nested flags; an unknown name is an error that
    lists the known ones, since pydantic would drop an unknown key of a table without a word."""
    known = setting_names()
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in known:
            raise ConfigurationError(f"--set {pair!r}: write NAME=VALUE with a NAME among {', '.join(known)}")
        table, _, key = name.rpartition(".")
        (values.setdefault(table, {}) if table else values)[key] = value.strip()
    return values
