"""Fixed text lists are embedded once across processes; short lists every time."""

from pathlib import Path

import numpy as np

from hugginggraph.tools.embedding_cache import MIN_SAVED_TEXTS, disk_cached


class CountingEmbed:
    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(len(texts))
        return [[float(len(text)), 1.0] for text in texts]


def test_a_long_list_is_read_back_from_disk_by_a_later_embedder(tmp_path: Path):
    texts = [f"request {i}" for i in range(MIN_SAVED_TEXTS)]
    first, later = CountingEmbed(), CountingEmbed()
    vectors = disk_cached(first, tmp_path, "model-a")(texts)
    again = disk_cached(later, tmp_path, "model-a")(texts)  # as a new process would
    assert first.calls == [MIN_SAVED_TEXTS] and later.calls == []
    assert np.array_equal(vectors, again) and isinstance(again, np.ndarray)
    assert [p.name.startswith(".") for p in tmp_path.iterdir()] == [False]  # no staging file left behind


def test_another_model_or_other_texts_or_a_short_list_are_embedded_afresh(tmp_path: Path):
    texts = [f"request {i}" for i in range(MIN_SAVED_TEXTS)]
    embed = CountingEmbed()
    disk_cached(embed, tmp_path, "model-a")(texts)
    disk_cached(embed, tmp_path, "model-b")(texts)
    disk_cached(embed, tmp_path, "model-a")([*texts[:-1], "changed"])
    disk_cached(embed, tmp_path, "model-a")(["one request"])
    disk_cached(embed, tmp_path, "model-a")(["one request"])
    assert embed.calls == [MIN_SAVED_TEXTS, MIN_SAVED_TEXTS, MIN_SAVED_TEXTS, 1, 1]


def test_a_damaged_file_is_embedded_and_written_again(tmp_path: Path):
    texts = [f"request {i}" for i in range(MIN_SAVED_TEXTS)]
    embed = CountingEmbed()
    disk_cached(embed, tmp_path, "m")(texts)
    (saved,) = tmp_path.iterdir()
    saved.write_bytes(b"not numpy")
    assert np.asarray(disk_cached(embed, tmp_path, "m")(texts)).shape == (MIN_SAVED_TEXTS, 2)
    assert embed.calls == [MIN_SAVED_TEXTS, MIN_SAVED_TEXTS]
    assert np.load(saved).shape == (MIN_SAVED_TEXTS, 2)
