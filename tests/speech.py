"""Real speech for tests: espeak-ng speaks a known sentence into a WAV file, and transcripts are scored by words."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

SENTENCE = "the quick brown fox jumps over the lazy dog"


def speak(path: Path, sentence: str = SENTENCE) -> Path:
    """`sentence` spoken into `path`; skips the test (saying what to install) where espeak-ng is missing."""
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed: apt-get install -y espeak-ng")
    # Slower, with gaps between words: at espeak's default pace Whisper tiny.en hears "roundfark stump".
    subprocess.run(["espeak-ng", "-s", "120", "-g", "5", "-w", str(path), sentence], check=True)
    return path


def words_heard(transcript: str, sentence: str = SENTENCE) -> int:
    """How many of the sentence's words the transcript contains (each counted as often as it is spoken)."""
    heard = Counter(re.findall(r"[a-z]+", transcript.lower()))
    return sum((Counter(sentence.split()) & heard).values())
