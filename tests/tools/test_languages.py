"""Language names and codes, and the check that a text is in the language asked for: wrong only when the detector
is sure, never on a text too short to tell or in a language it does not know."""

import pytest

from hugginggraph.tools.languages import detect, language_code, language_name, wrong_language


@pytest.mark.parametrize(
    ("name", "code"),
    [("French", "fr"), ("french", "fr"), (" German ", "de"), ("de", "de"), ("zh-CN", "zh"), ("Farsi", "fa"),
     ("pt_BR", "pt"), ("Klingon", None), ("xx", None)],
)  # fmt: skip
def test_languages_are_known_by_name_or_code(name: str, code: str | None):
    assert language_code(name) == code


def test_codes_have_english_names():
    assert language_name("fr") == "French" and language_name("xx") == "xx"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Où est la gare ? Je voudrais acheter un billet.", "French"),
        ("Wo ist der Bahnhof? Ich möchte eine Fahrkarte kaufen.", "de"),
        ("¿Dónde está la estación de tren?", "Spanish"),
        ("私は毎朝コーヒーを飲みながら新聞を読みます。", "Japanese"),
    ],
)
def test_a_text_in_the_language_asked_for_passes(text: str, language: str):
    assert wrong_language(text, language) is None


def test_a_text_in_another_language_is_named():
    assert wrong_language("Where is the train station? I would like a ticket.", "French") == (
        "the output is in English, not French"
    )
    assert wrong_language("Wo ist der Bahnhof? Ich möchte eine Fahrkarte kaufen.", "Spanish") == (
        "the output is in German, not Spanish"
    )


def test_too_short_or_unknown_cannot_be_told():
    assert detect("Paris").probabilities[0][0] != "fr"  # why short texts are not judged
    assert wrong_language("Paris", "French") is None
    assert wrong_language("Where is the train station? I would like a ticket.", "Klingon") is None
    assert wrong_language("12345 67890 !!! 2024-01-01", "French") is None
