"""Finding JSON in what a chat model wrote."""

import pytest

from hugginggraph.tools.llm_json import extract_json


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[1, 2]", [1, 2]),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here: {"a": [1]} and more {"b": 2}', {"a": [1]}),
        ('noise [not json] then {"ok": true}', {"ok": True}),
    ],
)
def test_first_json_value_is_found(text, expected):
    assert extract_json(text) == expected


def test_no_json_raises_with_a_preview():
    with pytest.raises(ValueError, match="no JSON found in the model's reply: 'I cannot do that'"):
        extract_json("I cannot do that")


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, "[" * 3000 + "]" * 3000, "[1," * 20_000, '{"a":' * 5000],
)
def test_json_nested_past_the_stack_is_no_json(text):
    with pytest.raises(ValueError, match="no JSON found"):
        extract_json(text)


def test_json_nested_past_what_a_checkpoint_stores_is_refused():
    with pytest.raises(ValueError, match="nested deeper than 64 levels"):
        extract_json("[" * 300 + "]" * 300)


def test_values_a_checkpoint_cannot_store_are_made_storable():
    """msgpack refuses lone surrogates and integers past 64 bits; Python refuses integers of over 4,300 digits."""
    value = extract_json('[{"id": ' + "9" * 5000 + ', "dep": [18446744073709551616], "\\ud800key": "\\udfff"}]')
    assert value == [{"id": float("inf"), "dep": [1.8446744073709552e19], "\ufffdkey": "\ufffd"}]
