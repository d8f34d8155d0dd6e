"""The embedded controller as the expert for text tasks (`LLMRunner`): accuracy per task and seconds per call, on
small hand-written sets (benchmarks/data/llm_experts.json; sentences written for this benchmark).

- sentiment: `text-classification` with the default labels; right when the label is the expected one.
- zero-shot: `zero-shot-classification` with each item's labels; right when the label is the expected one.
- ner: `token-classification`; micro F1 over (entity words, type) pairs, words compared case-blind.
- qa: `question-answering` with the passage as `context`; right when the answer, case and punctuation aside,
  is one of the item's accepted answers.
- translation: `translation` into the item's language; right when the runner accepts the output and the language
  detector's likeliest language for it is the one asked for.

A task the runner rejects (unusable reply, answer not in the passage, wrong language) counts as wrong. Each call
is timed whole (prompt, decoding, parsing and checks); the first call of the run also loads the model, which is
done before timing starts. Prints one line per item, then, last,
`sentiment_acc=.. zero_shot_acc=.. ner_f1=.. qa_acc=.. translation_lang_acc=.. seconds_per_call=..`.
Run: python benchmarks/llm_experts.py [--model local:qwen2.5-coder-1.5b] [--limit N] [--threads N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hugginggraph.settings import DEFAULT_MODEL
from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.languages import detect, language_name
from hugginggraph.tools.llama_cpp.local_llama import local_chat_model
from hugginggraph.tools.runners.base import RunnerOutput
from hugginggraph.tools.runners.llm_runner import LLMRunner

DATA = Path(__file__).parent / "data" / "llm_experts.json"


@dataclass
class Score:
    """Right answers (or, for entities, true and false positives and false negatives) and seconds of one task."""

    right: int = 0
    total: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    seconds: list[float] = field(default_factory=list)

    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0

    def f1(self) -> float:
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn) if self.tp else 0.0


def normalized(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def entity_pairs(pairs: list[Any]) -> set[tuple[str, str]]:
    return {(normalized(words), label) for words, label in pairs}


@dataclass(frozen=True)
class Case:
    """How one labelled set is run and judged."""

    task: str
    inputs: Callable[[dict[str, Any]], dict[str, str]]
    judge: Callable[[dict[str, Any], RunnerOutput | None, Score], None]
    """Adds the item's outcome (None: the runner rejected it) to the score."""


def _count(right: bool, score: Score) -> None:
    score.right += right


def _judge_entities(item: dict[str, Any], out: RunnerOutput | None, score: Score) -> None:
    expected = entity_pairs(item["entities"])
    found = entity_pairs([(e["word"], e["entity_group"]) for e in out.data]) if out else set()
    score.tp += len(expected & found)
    score.fp += len(found - expected)
    score.fn += len(expected - found)
    score.right += expected == found


def _likeliest_language(text: str) -> str | None:
    """The code the detector finds likeliest for `text`, as a name: "fr" -> "French"."""
    found = detect(text).probabilities
    return language_name(found[0][0]) if found else None


CASES = {
    "sentiment": Case(
        "text-classification",
        lambda item: {"text": item["text"]},
        lambda item, out, score: _count(out is not None and out.text == item["label"], score),
    ),
    "zero_shot": Case(
        "zero-shot-classification",
        lambda item: {"text": item["text"], "labels": item["labels"]},
        lambda item, out, score: _count(out is not None and out.text == item["label"], score),
    ),
    "ner": Case("token-classification", lambda item: {"text": item["text"]}, _judge_entities),
    "qa": Case(
        "question-answering",
        lambda item: {"text": item["question"], "context": item["context"]},
        lambda item, out, score: _count(
            out is not None and normalized(out.text) in {normalized(a) for a in item["answers"]}, score
        ),
    ),
    "translation": Case(
        "translation",
        lambda item: {"text": item["text"], "language": item["language"]},
        lambda item, out, score: _count(out is not None and _likeliest_language(out.text) == item["language"], score),
    ),
}


async def main(model: str, limit: int | None, threads: int | None) -> None:
    options = {"n_threads": threads} if threads else {}
    llm = local_chat_model(model, **options)
    started = time.perf_counter()
    llm._model()
    print(f"model={model} threads={llm.n_threads} load_s={time.perf_counter() - started:.2f}", flush=True)
    runner = LLMRunner(llm)
    cards = {card.task: card for card in runner.cards()}
    data = json.loads(DATA.read_text(encoding="utf-8"))
    scores = {name: Score() for name in CASES}
    with tempfile.TemporaryDirectory() as folder:
        for name, case in CASES.items():
            for index, item in enumerate(data[name][:limit]):
                started = time.perf_counter()
                try:
                    out: RunnerOutput | None = await runner.run(
                        cards[case.task], case.task, case.inputs(item), ArtifactStore(Path(folder), index)
                    )
                    shown = out.text if out else ""
                except ValueError as error:  # ReplyRejected, or arguments the task cannot read
                    out, shown = None, f"REJECTED {error}"
                score = scores[name]
                score.seconds.append(time.perf_counter() - started)
                right_before = score.right
                score.total += 1
                case.judge(item, out, score)
                mark = "ok" if score.right > right_before else "--"
                print(f"{name}[{index:2d}] {score.seconds[-1]:5.2f}s {mark} {shown[:90]!r}", flush=True)

    for name, score in scores.items():
        metric = f"f1={score.f1():.3f} exact={score.accuracy():.3f}" if name == "ner" else f"acc={score.accuracy():.3f}"
        print(f"{name}: n={score.total} {metric} seconds_per_call={sum(score.seconds) / len(score.seconds):.2f}")
    calls = [s for score in scores.values() for s in score.seconds]
    print(
        f"sentiment_acc={scores['sentiment'].accuracy():.3f} zero_shot_acc={scores['zero_shot'].accuracy():.3f} "
        f"ner_f1={scores['ner'].f1():.3f} qa_acc={scores['qa'].accuracy():.3f} "
        f"translation_lang_acc={scores['translation'].accuracy():.3f} seconds_per_call={sum(calls) / len(calls):.2f}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL, help=f"local:<name> (default: {DEFAULT_MODEL})")
    parser.add_argument("--limit", type=int, help="only the first N items of each set (smoke runs)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (default: the controller's, every core)")
    args = parser.parse_args()
    provider, _, model_name = args.model.partition(":")
    if provider != "local" or not model_name:
        parser.error("--model must be local:<name>: this benchmark runs the embedded controller")
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    asyncio.run(main(model_name, args.limit, args.threads))
