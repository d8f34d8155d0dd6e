"""Configuration: flags over environment over the config file over defaults, every setting (limits and planning
aids included) by one name in each; providers by `init_chat_model`; the README's table held to the model."""

import re
from pathlib import Path

import pytest
from configured import settings_from
from langchain_openai import AzureChatOpenAI, ChatOpenAI

from hugginggraph.chat_models import chat_model
from hugginggraph.cli import parser
from hugginggraph.cli.flags import command_settings
from hugginggraph.context_assembly import build_context
from hugginggraph.graph.context import Limits, PlanningAids
from hugginggraph.server import ServerOptions
from hugginggraph.settings import (
    DEFAULT_MODEL,
    ConfigurationError,
    Settings,
    assignments,
    environment_variables,
    setting_names,
)

README = Path(__file__).parents[1] / "README.md"


def test_flags_win_over_environment_which_wins_over_the_file(tmp_path: Path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('model = "openai:from-file"\nplan_model = "openai:planner"\nhub = true\n')
    env = {"HUGGINGGRAPH_MODEL": "openai:from-env", "OPENAI_API_KEY": "sk-env"}
    settings = settings_from(monkeypatch, env, config, {"model": "openai:from-flag", "base_url": None})
    assert settings.model == "openai:from-flag"
    assert settings.plan_model == "openai:planner" and settings.hub is True
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-env"
    assert settings_from(monkeypatch, env, config).model == "openai:from-env"
    assert settings_from(monkeypatch, {}, config).model == "openai:from-file"
    assert settings_from(monkeypatch, {}, tmp_path / "none.toml").model == DEFAULT_MODEL


def test_limits_and_planning_aids_merge_key_by_key_across_the_three_sources(tmp_path: Path, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text('[limits]\ntop_k = 2\ntask_timeout_s = 50\n\n[planning]\ndemos = "static"\n')
    env = {"HUGGINGGRAPH_LIMITS__TOP_K": "3", "HUGGINGGRAPH_PLANNING__FIX_PASS": "false"}
    settings = settings_from(monkeypatch, env, config, assignments(["limits.top_k=4", "limits.max_llm_calls=6"]))
    assert settings.limits == Limits(top_k=4, task_timeout_s=50, max_llm_calls=6)
    assert settings.planning == PlanningAids(demos="static", fix_pass=False)


def test_the_command_line_sets_any_setting_and_its_named_flags_win(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HUGGINGGRAPH_CONFIG", str(tmp_path / "none.toml"))
    args = parser().parse_args(
        ["run", "hi", "--model", "openai:flag", "--set", "model=openai:set", "--set", "planning.steps=first"]
    )
    settings = command_settings(args)
    assert settings.model == "openai:flag" and settings.planning.steps == "first"
    assert (
        command_settings(parser().parse_args(["plan", "hi", "--set", "respond-model=openai:r"])).respond_model
        == "openai:r"
    )


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["limits.top_kk=3"], "NAME among model, plan_model"),
        (["top_k"], "write NAME=VALUE"),
        (["limits.top_k=many"], "invalid configuration (limits.top_k"),
        (["planning.demos=all"], "invalid configuration (planning.demos"),
    ],
)
def test_a_bad_set_is_a_clear_error(pairs: list[str], message: str, tmp_path: Path, monkeypatch):
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        settings_from(monkeypatch, {}, tmp_path / "none.toml", assignments(pairs))


def test_generic_variables_of_other_programs_are_not_read(tmp_path: Path, monkeypatch):
    env = {"BASE_URL": "http://elsewhere", "API_KEY": "theirs", "CHECKPOINT_PATH": "/theirs", "MODEL": "x:y"}
    settings = settings_from(monkeypatch, env, tmp_path / "none.toml")
    assert (settings.base_url, settings.api_key, settings.checkpoint_path) == (None, None, None)
    assert settings.model == DEFAULT_MODEL


def test_the_key_never_shows_in_the_settings_text():
    settings = Settings(api_key="sk-secret")
    assert "sk-secret" not in repr(settings) and "sk-secret" not in settings.model_dump_json()


def test_only_stages_with_another_controller_are_listed():
    settings = Settings(model="openai:a", plan_model="openai:big", respond_model="openai:a")
    assert settings.stage_models() == {"plan": "openai:big"}


@pytest.mark.parametrize(
    ("content", "message"),
    [("model = [", "cannot read the config file"), ("colour = 'blue'", "invalid configuration (colour")],
)
def test_a_bad_config_file_is_a_clear_error(tmp_path: Path, content, message, monkeypatch):
    config = tmp_path / "config.toml"
    config.write_text(content)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        settings_from(monkeypatch, {}, config)


def test_the_server_options_are_the_settings_a_run_may_choose():
    options = ServerOptions.model_fields
    for name, field in options.items():
        assert field.description == Settings.model_fields[name].description
    assert {"api_key", "checkpoint_url", "checkpoint_path", "models_dirs"}.isdisjoint(options)
    assert ServerOptions(planning={"demos": "none"}).chosen() == {"planning": PlanningAids(demos="none")}


def test_openai_models_use_the_configured_server():
    model = chat_model("openai:served-model", Settings(base_url="http://127.0.0.1:9/v1"))
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "served-model" and model.openai_api_base == "http://127.0.0.1:9/v1"
    assert model.temperature == 0


def test_any_installed_integration_is_made_by_init_chat_model(monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    model = chat_model("azure_openai:my-deployment", Settings())
    assert isinstance(model, AzureChatOpenAI) and model.model_name == "my-deployment" and model.temperature == 0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY is not set"),
        ("gpt-4o-mini", "unknown model 'gpt-4o-mini': write provider:model"),
        ("anthropic:claude-sonnet-4-5", "needs its LangChain integration: .*pip install langchain-anthropic"),
        ("ollama:llama3.2", "pip install langchain-ollama"),
        ("nowhere:x", "cannot use nowhere:x: .*anthropic"),  # langchain's list of the providers it knows
    ],
)
def test_unusable_model_names_say_what_to_do(spec, message, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match=message):
        chat_model(spec, Settings(api_key=None, base_url=None))


def _readme_rows() -> dict[str, list[str]]:
    section = README.read_text(encoding="utf-8").split("## Configuration\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    return {row[0].strip("| `"): row for row in rows}


def test_the_readme_table_has_every_setting_with_its_variable_and_flag(capsys):
    rows = _readme_rows()
    assert sorted(rows) == sorted(setting_names())
    with pytest.raises(SystemExit):
        parser().parse_args(["run", "--help"])
    run_help = capsys.readouterr().out
    variables = environment_variables()
    for name, (_, environment, flag, *_rest) in rows.items():
        assert re.findall(r"`([A-Z_]+)`", environment) == [v for v, setting in variables.items() if setting == name]
        assert all(option in run_help for option in re.findall(r"`(--[a-z-]+)`", flag)), name


def test_a_run_gets_the_limits_and_planning_aids_set(tmp_path: Path, monkeypatch):
    flags = {"model": "openai:m", "base_url": "http://127.0.0.1:9/v1", "hub": False, "planning": {"demos": "none"}}
    settings = settings_from(monkeypatch, {"HUGGINGGRAPH_LIMITS__TOP_K": "1"}, tmp_path / "none.toml", flags)
    context = build_context(settings)
    assert context.limits == Limits(top_k=1) and context.planning == PlanningAids(demos="none")
