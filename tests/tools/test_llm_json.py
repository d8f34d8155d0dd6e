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
