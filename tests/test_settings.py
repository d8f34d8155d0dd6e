"""Configuration: flags over environment over the config file over defaults; clear errors."""

import re
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI

from hugginggraph.controllers import chat_model
from hugginggraph.settings import DEFAULT_MODEL, ConfigurationError, Settings, load_settings


def test_flags_win_over_environment_which_wins_over_the_file(tmp_path: Path):
    config = tmp_path / "config.toml"
    config.write_text('model = "openai:from-file"\nplan_model = "openai:planner"\nhub = true\n')
    env = {"HUGGINGGRAPH_MODEL": "openai:from-env", "OPENAI_API_KEY": "sk-env"}
    settings = load_settings({"model": "openai:from-flag", "base_url": None}, env, config)
    assert settings.model == "openai:from-flag"
    assert settings.plan_model == "openai:planner" and settings.hub is True
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "sk-env"
    assert load_settings({}, env, config).model == "openai:from-env"
    assert load_settings({}, {}, config).model == "openai:from-file"
    assert load_settings({}, {}, tmp_path / "none.toml").model == DEFAULT_MODEL


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
def test_a_bad_config_file_is_a_clear_error(tmp_path: Path, content, message):
    config = tmp_path / "config.toml"
    config.write_text(content)
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        load_settings({}, {}, config)


def test_openai_models_use_the_configured_server():
    model = chat_model("openai:served-model", Settings(base_url="http://127.0.0.1:9/v1"))
    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "served-model" and model.openai_api_base == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY is not set"),
        ("gpt-4o-mini", "unknown model 'gpt-4o-mini'"),
        ("anthropic:claude", "provider among local, openai"),
    ],
)
def test_unusable_model_names_say_what_to_do(spec, message):
    with pytest.raises(ConfigurationError, match=message):
        chat_model(spec, Settings())
