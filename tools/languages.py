"""Languages by name and ISO 639-1 code, and whether a text is written in the language it should be.

A translation is asked for "into French", and comes back from a model that may have answered in English, or
repeated its input: the output is checked with `langdetect` (Google's n-gram language profiles, Apache-2.0), which
knows the 55 languages named here. It is unreliable on a few words ("Paris" reads as Indonesian), so a text is
judged only when it is long enough and the detector is sure: a doubt passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langdetect.detector_factory import DetectorFactory

# fmt: off
LANGUAGES: dict[str, str] = {
    "afrikaans": "af", "albanian": "sq", "arabic": "ar", "bengali": "bn", "bulgarian": "bg", "catalan": "ca",
    "chinese": "zh", "croatian": "hr", "czech": "cs", "danish": "da", "dutch": "nl", "english": "en",
    "estonian": "et", "finnish": "fi", "french": "fr", "german": "de", "greek": "el", "gujarati": "gu",
    "hebrew": "he", "hindi": "hi", "hungarian": "hu", "indonesian": "id", "italian": "it", "japanese": "ja",
    "kannada": "kn", "korean": "ko", "latvian": "lv", "lithuanian": "lt", "macedonian": "mk", "malayalam": "ml",
    "marathi": "mr", "nepali": "ne", "norwegian": "no", "persian": "fa", "polish": "pl", "portuguese": "pt",
    "punjabi": "pa", "romanian": "ro", "russian": "ru", "slovak": "sk", "slovenian": "sl", "somali": "so",
    "spanish": "es", "swahili": "sw", "swedish": "sv", "tagalog": "tl", "tamil": "ta", "telugu": "te", "thai": "th",
    "turkish": "tr", "ukrainian": "uk", "urdu": "ur", "vietnamese": "vi", "welsh": "cy",
}
"""English names of the languages the detector knows, lower case, to their ISO 639-1 codes."""
# fmt: on

ALIASES = {"farsi": "fa", "filipino": "tl", "mandarin": "zh", "castilian": "es", "flemish": "nl"}
"""Other names a request may use for the same languages."""

_NAMES = {code: name.capitalize() for name, code in LANGUAGES.items()}

MIN_LETTERS = 12
"""Texts with fewer letters are not judged: on one or two words the detector guesses (measured in the tests)."""
SURE = 0.9
"""The detector's probability for another language above which a text is judged to be in that language."""
DOUBT = 0.1
"""A target language the detector gives at least this probability is taken as possible: the text passes."""


def language_code(name: str) -> str | None:
    """The ISO 639-1 code of a language given by English name ("French", "french") or by code ("fr", "zh-cn");
    None for a language this module does not know."""
    key = name.strip().lower()
    if key in LANGUAGES or key in ALIASES:
        return LANGUAGES.get(key) or ALIASES[key]
    primary = key.replace("_", "-").split("-")[0]
    return primary if primary in _NAMES else None


def language_name(code: str) -> str:
    """The English name of a known code ("fr" -> "French"), else the code itself."""
    return _NAMES.get(code, code)


@dataclass(frozen=True)
class Detected:
    """The detector's reading of a text: each language it considers, with its probability, likeliest first."""

    probabilities: tuple[tuple[str, float], ...]

    def probability(self, code: str) -> float:
        return sum(p for found, p in self.probabilities if found == code)


@cache
def _factory() -> DetectorFactory:
    """The detector's profiles, loaded once (a fraction of a second, too long to pay per text); seeded, so a text
    always reads the same."""
    from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory

    factory = DetectorFactory()
    factory.load_profile(PROFILES_DIRECTORY)
    factory.set_seed(0)
    return factory


def detect(text: str) -> Detected:
    """The languages `text` may be in; none for a text without letters."""
    from langdetect.lang_detect_exception import LangDetectException

    detector = _factory().create()
    detector.append(text)
    try:
        found = detector.get_probabilities()
    except LangDetectException:  # no letters at all
        return Detected(())
    # The detector tells Chinese scripts apart (zh-cn, zh-tw); a request names the language.
    return Detected(tuple((str(item.lang).split("-")[0], float(item.prob)) for item in found))


def wrong_language(text: str, language: str) -> str | None:
    """Why `text` is not in `language` ("the output is in English, not French"), or None when it is, may be, or
    cannot be told (too short, or a language the detector does not know)."""
    code = language_code(language)
    if code is None or sum(char.isalpha() for char in text) < MIN_LETTERS:
        return None
    detected = detect(text)
    if not detected.probabilities or detected.probability(code) >= DOUBT:
        return None
    found, probability = detected.probabilities[0]
    if probability < SURE:
        return None
    return f"the output is in {language_name(found)}, not {language_name(code)}"
