"""TaskBench's plan metrics on hand-made plans, each expected number worked out by hand in the comments.

F1 = 2·TP / (2·TP + FP + FN), counted on sets per record and summed over records (micro-averaging), as
TaskBench's evaluator (taskbench/evaluate.py in microsoft/JARVIS) does.
"""

from __future__ import annotations

from typing import Any

import pytest

from hugginggraph.taskbench.metrics import Counts, PlanScores, PlanSets, content_type, plan_sets

# A small benchmark's tools (Hub-style ids, as `records.tool_output_types` keys them) and their output types.
OUTPUT_TYPES = {
    "image-to-text": "text",
    "text-to-image": "image",
    "translation": "text",
    "text-to-speech": "audio",
    "sentence-similarity": "none",  # outputs nothing TaskBench names
}
TOOLS = frozenset(OUTPUT_TYPES)


def node(task: str, *arguments: Any) -> dict[str, Any]:
    return {"task": task, "arguments": list(arguments)}


def sets(*nodes: dict[str, Any]) -> PlanSets:
    return plan_sets(list(nodes), OUTPUT_TYPES)


def scores(*records: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> dict[str, float | None]:
    """n-F1, e-F1, t-F1, v-F1 in percent over (truth, prediction) pairs."""
    total = PlanScores()
    for truth, predicted in records:
        total.add(plan_sets(truth, OUTPUT_TYPES), plan_sets(predicted, OUTPUT_TYPES), TOOLS)
    return total.as_percent()


CAPTION_THEN_TRANSLATE = [node("Image-to-Text", "photo.jpg"), node("Translation", "<node-0>")]


def test_a_plan_becomes_the_sets_taskbench_compares():
    assert sets(*CAPTION_THEN_TRANSLATE) == PlanSets(
        nodes=frozenset({"image-to-text", "translation"}),  # names read as Hub ids: "Image-to-Text" → image-to-text
        links=frozenset({("image-to-text", "translation")}),
        # photo.jpg is a literal: its extension makes it an image; <node-0> names image-to-text, which outputs text.
        arg_names=frozenset({"image-to-text-image", "translation-text"}),
        arg_values=frozenset({"image-to-text-image-photo.jpg", "translation-text-image-to-text"}),
    )


def test_a_perfect_plan_scores_100_on_every_metric():
    assert scores((CAPTION_THEN_TRANSLATE, CAPTION_THEN_TRANSLATE)) == {
        "n-F1": 100.0,
        "e-F1": 100.0,
        "t-F1": 100.0,
        "v-F1": 100.0,
    }


def test_an_empty_prediction_scores_0():
    # Every set of the truth is missed: TP = 0, so F1 = 0 / (0 + 0 + FN) = 0 on each metric.
    assert scores((CAPTION_THEN_TRANSLATE, [])) == {"n-F1": 0.0, "e-F1": 0.0, "t-F1": 0.0, "v-F1": 0.0}


def test_links_are_not_scored_where_neither_side_has_any():
    single = [node("Translation", "hello")]
    # e-F1: TP = FP = FN = 0, nothing to score (None, not 0 or 100); the rest match exactly.
    assert scores((single, single)) == {"n-F1": 100.0, "e-F1": None, "t-F1": 100.0, "v-F1": 100.0}
    # An empty prediction of a single-task record: still no links on either side.
    assert scores((single, [])) == {"n-F1": 0.0, "e-F1": None, "t-F1": 0.0, "v-F1": 0.0}


def test_counts_with_nothing_to_score_have_no_f1():
    assert Counts().f1 is None
    assert PlanScores().as_percent() == {"n-F1": None, "e-F1": None, "t-F1": None, "v-F1": None}


@pytest.mark.parametrize("side", ["truth", "prediction"])
def test_a_tool_used_twice_counts_once(side):
    once = [node("Translation", "hello")]
    twice = [node("Translation", "hello"), node("Translation", "hello")]
    truth, predicted = (twice, once) if side == "truth" else (once, twice)
    # Sets on both sides: {translation} vs {translation}, TP = 1, FP = FN = 0.
    assert scores((truth, predicted)) == {"n-F1": 100.0, "e-F1": None, "t-F1": 100.0, "v-F1": 100.0}
    total = PlanScores()
    total.add(plan_sets(truth, OUTPUT_TYPES), plan_sets(predicted, OUTPUT_TYPES), TOOLS)
    assert (total.nodes.tp, total.nodes.fp, total.nodes.fn) == (1, 0, 0)


def test_an_unknown_tool_in_the_prediction_does_not_lower_node_precision():
    truth = [node("Translation", "hello")]
    predicted = [node("Translation", "hello"), node("Magic Wand", "hello")]
    result = scores((truth, predicted))
    # n-F1: "magic-wand" is no tool of the benchmark, so it counts on neither side: TP = 1, FP = 0 → 100.
    assert result["n-F1"] == 100.0
    # Argument names are not filtered (TaskBench's evaluator filters node names only): "magic-wand-text" is a
    # false positive. t-F1 = 2·1 / (2·1 + 1 + 0) = 2/3; v-F1 likewise ("magic-wand-text-hello").
    assert result["t-F1"] == pytest.approx(200 / 3)
    assert result["v-F1"] == pytest.approx(200 / 3)


def test_an_unknown_tool_in_the_truth_does_not_lower_node_recall():
    truth = [node("Translation", "hello"), node("Crystal Ball", "hello")]
    predicted = [node("Translation", "hello")]
    # n-F1: "crystal-ball" counts on neither side: TP = 1, FN = 0 → 100.
    assert scores((truth, predicted))["n-F1"] == 100.0


def test_a_link_the_wrong_way_round_scores_no_link():
    truth = [node("Text-to-Image", "a cat"), node("Image-to-Text", "<node-0>")]
    predicted = [node("Image-to-Text", "photo.jpg"), node("Text-to-Image", "<node-0>")]
    # Links: truth {(text-to-image, image-to-text)}, prediction {(image-to-text, text-to-image)}: TP 0, FP 1, FN 1.
    # Argument names happen to agree: truth {text-to-image-text (literal), image-to-text-image (text-to-image
    # outputs an image)}, prediction {image-to-text-image (photo.jpg), text-to-image-text (image-to-text outputs
    # text)}. Values do not: 0 of 2 on each side.
    assert scores((truth, predicted)) == {"n-F1": 100.0, "e-F1": 0.0, "t-F1": 100.0, "v-F1": 0.0}


def test_a_node_referring_to_itself_is_ignored():
    looped = sets(node("Translation", "<node-0>", "hello"))
    assert looped == sets(node("Translation", "hello"))  # no link, no argument for "<node-0>"
    assert looped.links == frozenset()
    assert sets(node("Translation", "<node-0>")).arg_names == frozenset()


def test_a_reference_to_a_node_that_does_not_exist_links_nothing_and_is_named_other():
    # TaskBench's script would drop such a record (IndexError); we score it: no link, an argument named "other".
    assert sets(node("Text-to-Speech", "<node-9>")) == PlanSets(
        nodes=frozenset({"text-to-speech"}),
        links=frozenset(),
        arg_names=frozenset({"text-to-speech-other"}),
        arg_values=frozenset({"text-to-speech-other-<node-9>"}),
    )


def test_an_argument_referring_to_a_node_is_named_by_that_tools_output_type():
    similarity_then_translate = sets(node("Sentence Similarity", "a", "b"), node("Translation", "<node-0>"))
    assert "translation-none" in similarity_then_translate.arg_names  # a tool with output-type [] outputs "none"
    unknown_then_translate = sets(node("Magic Wand", "x"), node("Translation", "<node-0>"))
    assert "translation-other" in unknown_then_translate.arg_names  # an unknown tool's output is "other"
    assert unknown_then_translate.links == frozenset({("magic-wand", "translation")})  # links are not filtered
    # Only an argument's first reference counts, as in TaskBench's script.
    assert sets(node("A", "x"), node("B", "y"), node("Translation", "<node-0> and <node-1>")).links == frozenset(
        {("a", "translation")}
    )


def test_dict_and_list_arguments_are_read_as_taskbench_reads_them():
    # A dict argument is its first value; a list argument is its items joined with spaces.
    assert sets(node("Translation", {"text": "hello"})).arg_values == frozenset({"translation-text-hello"})
    assert sets(node("Image-to-Text", ["a.jpg", "b"])).arg_values == frozenset({"image-to-text-image-a.jpg b"})


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("photo.jpg", "image"),
        ("photo.jpeg", "image"),
        ("'photo.png'", "image"),  # single quotes around it are stripped
        ("https://example.com/a.gif", "image"),
        ("song.wav", "audio"),
        ("song.flac", "audio"),
        ("clip.mp4", "video"),
        ("clip.mpeg", "video"),
        ("a cat on a mat", "text"),
        ("", "text"),
        # TaskBench matches lower-case ".ext" anywhere in the text, case-sensitively; so do we.
        ("photo.PNG", "text"),
        ("clip.MP4", "text"),
        ("photo.pngs", "image"),
        ("my.audio notes", "audio"),  # ".au" is in there
    ],
)
def test_a_literal_is_named_by_its_content_type_as_taskbench_guesses_it(value, kind):
    assert content_type(value) == kind


def test_micro_averaging_over_records_is_not_the_mean_of_their_f1s():
    record_a = ([node("Translation", "hello")], [node("Translation", "hello")])
    record_b = (
        [node("Text-to-Image", "a cat"), node("Image-to-Text", "<node-0>"), node("Text-to-Speech", "<node-1>")],
        [node("Text-to-Image", "a cat")],
    )
    # Nodes: A has TP 1 (F1 = 1); B has TP 1, FN 2 (F1 = 2/(2+2) = 0.5). Their mean would be 75.
    assert scores(record_a)["n-F1"] == 100.0
    assert scores(record_b)["n-F1"] == 50.0
    # Summed: TP 2, FP 0, FN 2 → 2·2 / (2·2 + 0 + 2) = 4/6 = 66.7.
    assert scores(record_a, record_b)["n-F1"] == pytest.approx(400 / 6)
    total = PlanScores()
    for truth, predicted in (record_a, record_b):
        total.add(plan_sets(truth, OUTPUT_TYPES), plan_sets(predicted, OUTPUT_TYPES), TOOLS)
    assert (total.nodes.tp, total.nodes.fp, total.nodes.fn, total.records) == (2, 0, 2, 2)


def test_task_types_missed_and_planned_where_the_truth_has_none_are_counted_per_record():
    total = PlanScores()
    truth = [node("Image-to-Text", "photo.jpg"), node("Translation", "<node-0>"), node("Crystal Ball", "x")]
    for predicted in ([node("Image-to-Text", "photo.jpg"), node("Text-to-Speech", "<node-0>")], []):
        total.add(sets(*truth), sets(*predicted), TOOLS)
    # Unknown tools ("crystal-ball") count on neither side, as for n-F1; a type counts once per record.
    assert total.missed_tasks == {"translation": 2, "image-to-text": 1}
    assert total.extra_tasks == {"text-to-speech": 1}
    assert (total.nodes.as_list(), total.links.as_list()) == ([1, 1, 3], [0, 1, 2])


def test_links_missed_between_task_types_the_plan_has_are_counted_apart_from_those_missing_a_task():
    total = PlanScores()
    truth = [node("Image-to-Text", "photo.jpg"), node("Translation", "<node-0>"), node("Text-to-Speech", "<node-1>")]
    # Both links missed: translation → text-to-speech lacks a task; image-to-text → translation has both its types.
    predicted = [node("Image-to-Text", "photo.jpg"), node("Translation", "Bonjour")]
    total.add(sets(*truth), sets(*predicted), TOOLS)
    assert total.links.as_list() == [0, 0, 2]
    assert total.links_missed_between_planned == 1
