import json
from pathlib import Path

from hugginggraph.tools.sentence_folder import SentenceFolder


def write(path: Path, content: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))


def test_a_folder_without_sentence_transformers_files_is_mean_pooled_over_all_positions(tmp_path: Path):
    write(tmp_path / "config.json", {"max_position_embeddings": 512})
    folder = SentenceFolder.read(tmp_path)
    assert folder.mean_pooled
    assert folder.pooling_modes == []
    assert folder.max_length == 512


def test_the_recipe_and_the_token_limit_are_read_from_their_own_files(tmp_path: Path):
    write(tmp_path / "config.json", {"max_position_embeddings": 512})
    write(tmp_path / "1_Pooling" / "config.json", {"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    write(tmp_path / "sentence_bert_config.json", {"max_seq_length": 256})
    folder = SentenceFolder.read(tmp_path)
    assert not folder.mean_pooled
    assert folder.pooling_modes == ["pooling_mode_cls_token"]
    assert folder.max_length == 256


def test_a_recipe_that_names_no_mode_pools_by_the_mean_as_sentence_transformers_does(tmp_path: Path):
    write(tmp_path / "1_Pooling" / "config.json", {"word_embedding_dimension": 384})
    assert SentenceFolder.read(tmp_path).mean_pooled
