"""The trained step chooser: weights saved and read back, a type chosen among those the planner may use, none below
the confidence asked for. Hand-set weights over a word-count embedder keep these exact; the last tests use the
shipped weights with MiniLM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import weights_for, word_vectors
from test_demo_bank import SPEAK, bank

from hugginggraph.planning.step_vote import retype_by_steps
from hugginggraph.tools import step_chooser
from hugginggraph.tools.demo_bank import DemoBank, default_demo_bank, minilm_embedder
from hugginggraph.tools.step_chooser import ChooserWeights, StepChooser, shipped_weights, trained_chooser
from hugginggraph.tools.tasks import TASKS

SPEECH_OR_TRANSLATION = weights_for({"aloud": "text-to-speech", "french": "translation", "caption": "image-to-text"})


def test_a_step_gets_the_type_of_highest_probability():
    chooser = StepChooser(SPEECH_OR_TRANSLATION, word_vectors)
    assert chooser.tasks_for_steps(["read it aloud", "translate it into french"], TASKS) == [
        "text-to-speech",
        "translation",
    ]


def test_below_the_confidence_asked_for_no_type_is_chosen():
    chooser = StepChooser(weights_for({"aloud": "text-to-speech", "french": "translation"}, strength=1.0), word_vectors)
    assert chooser.tasks_for_steps(["read it aloud"], TASKS, majority=0.9) == [None]
    assert chooser.tasks_for_steps(["read it aloud"], TASKS, majority=0.0) == ["text-to-speech"]


def test_only_types_the_planner_may_use_are_chosen():
    chooser = StepChooser(SPEECH_OR_TRANSLATION, word_vectors)
    allowed = {name: TASKS[name] for name in ("translation", "image-to-text")}
    # Without text-to-speech, the probability is shared among the others: none is confident.
    assert chooser.tasks_for_steps(["read it aloud"], allowed) == [None]
    assert chooser.tasks_for_steps(["read it aloud"], {"summarization": TASKS["summarization"]}) == [None]


def test_file_names_and_quotes_are_taken_out_of_a_step_as_the_vote_does():
    chooser = StepChooser(SPEECH_OR_TRANSLATION, word_vectors)
    assert chooser.tasks_for_steps(["read caption.txt 'caption caption' aloud"], TASKS) == ["text-to-speech"]


def test_weights_read_back_as_saved(tmp_path: Path):
    path = tmp_path / "chooser.npz"
    SPEECH_OR_TRANSLATION.save(path)
    read = ChooserWeights.read(path.read_bytes())
    assert read.classes == SPEECH_OR_TRANSLATION.classes
    assert np.allclose(read.weights, SPEECH_OR_TRANSLATION.weights)
    assert read.weights.dtype == np.float32


def test_without_weights_or_an_embedder_there_is_no_chooser(monkeypatch: pytest.MonkeyPatch):
    with_words = bank(SPEAK)
    assert trained_chooser(DemoBank([SPEAK], lambda: None), SPEECH_OR_TRANSLATION) is None
    assert trained_chooser(with_words, SPEECH_OR_TRANSLATION) is not None
    monkeypatch.setattr(step_chooser, "shipped_weights", lambda: None)
    assert trained_chooser(with_words) is None


def test_the_shipped_weights_are_in_the_package():
    weights = shipped_weights()
    assert weights is not None
    assert {"text-to-speech", "visual-question-answering", "summarization"} <= set(weights.classes)
    assert weights.weights.shape == (384, len(weights.classes))


@pytest.mark.slow
def test_the_shipped_chooser_names_the_task_a_step_describes():
    if minilm_embedder() is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    chooser = trained_chooser(default_demo_bank())
    assert chooser is not None
    steps = {
        "read the translated summary out loud": "text-to-speech",
        "translate the answer into Spanish": "translation",
        "ask of park.jpg: how many people are on the bench?": "visual-question-answering",
        "transcribe the recording meeting.wav": "automatic-speech-recognition",
        "answer the question about the article": "question-answering",
    }
    assert chooser.tasks_for_steps(list(steps), TASKS) == list(steps.values())


@pytest.mark.slow
def test_the_shipped_chooser_mends_the_demos_summary_step():
    if minilm_embedder() is None:
        pytest.skip("MiniLM is not installed: hugginggraph models install-offline")
    # hugginggraph demo's controller names text-classification for its summary step.
    plan = [{"step": "summarize what it asks for", "task": "text-classification", "id": 0, "dep": [-1], "args": {}}]
    chooser = trained_chooser(default_demo_bank())
    assert chooser is not None
    assert retype_by_steps(plan, chooser, TASKS)[0][0]["task"] == "summarization"
