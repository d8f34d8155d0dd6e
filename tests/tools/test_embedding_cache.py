"""Fixed text lists are embedded once across processes; a short list's texts once while they are recent."""

from pathlib import Path

import numpy as np

from hugginggraph.tools.embedding_cache import MIN_SAVED_TEXTS, RECENT_TEXTS, cached_embedder


class CountingEmbed:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [[float(len(text)), 1.0] for text in texts]


def test_a_long_list_is_read_back_from_disk_by_a_later_embedder(tmp_path: Path):
    texts = [f"request {i}" for i in range(MIN_SAVED_TEXTS)]
    first, later = CountingEmbed(), CountingEmbed()
    vectors = cached_embedder(first, tmp_path, "model-a")(texts)
    again = cached_embedder(later, tmp_path, "model-a")(texts)  # as a new process would
    assert first.calls == [MIN_SAVED_TEXTS] and later.calls == []
    assert np.array_equal(vectors, again) and isinstance(again, np.ndarray)
    assert [p.name.startswith(".") for p in tmp_path.iterdir()] == [False]  # no staging file left behind


def test_another_model_or_other_texts_or_a_short_list_in_a_new_process_are_embedded_afresh(tmp_path: Path):
    texts = [f"request {i}" for i in range(MIN_SAVED_TEXTS)]
    embed = CountingEmbed()
    cached_embedder(embed, tmp_path, "model-a")(texts)
    cached_embedder(embed, tmp_path, "model-b")(texts)
    cached_embedder(embed, tmp_path, "model-a")([*texts[:-1], "changed"])
    cached_embedder(embed, tmp_path, "model-a")(["one request"])
    cached_embedder(embed, tmp_path, "model-a")(["one request"])
    assert embed.calls == [MIN_SAVED_TEXTS, MIN_SAVED_TEXTS, MIN_SAVED_TEXTS, 1, 1]
    assert [p.suffix for p in tmp_path.iterdir()] == [".npy"] * 3  # short lists are not saved


def test_a_short_lists_texts_are_embedded_once_while_recent(tmp_path: Path):
    embed = CountingEmbed()
    cached = cached_embedder(embed, tmp_path, "m")
    first = cached(["a request", "a step"])
    again = cached(["a step", "another step", "a step", "a request"])
    assert embed.calls == [2, 1]  # only "another step" was new
    assert np.array_equal(again, [[6.0, 1.0], [12.0, 1.0], [6.0, 1.0], [9.0, 1.0]])
    assert np.array_equal(again[3], first[0])
    for i in range(RECENT_TEXTS):  # as many new texts as are remembered
        cached([f"text {i}"])
    cached(["a request"])
    assert embed.calls == [2, 1, *[1] * RECENT_TEXTS, 1]  # the oldest were let go
    assert cached([]).shape == (0,)


def test_a_damaged_file_is_embedded_and_written_again(tmp_path: Path):
    texts = [f"request {i}" for i in range(MIN_SAVED_TEXTS)]
    embed = CountingEmbed()
    cached_embedder(embed, tmp_path, "m")(texts)
    (saved,) = tmp_path.iterdir()
    saved.write_bytes(b"not numpy")
    assert np.asarray(cached_embedder(embed, tmp_path, "m")(texts)).shape == (MIN_SAVED_TEXTS, 2)
    assert embed.calls == [MIN_SAVED_TEXTS, MIN_SAVED_TEXTS]
    assert np.load(saved).shape == (MIN_SAVED_TEXTS, 2)
