"""The call journal: a recorded value reads back as the checkpoint would give it back, under its own key only, and
a record is found whole or not at all, whether a kill or a power cut interrupts its writing."""

from pathlib import Path

import pytest

from hugginggraph.graph.checkpoint import checkpoint_serializer
from hugginggraph.graph.state import TaskResult
from hugginggraph.tools.artifacts import Artifact
from hugginggraph.tools.call_journal import CallJournal

KEY = {"task_id": 2, "task": "object-detection", "inputs": {"image": "/w/street.png"}, "model_ids": ["a", "b"]}
RESULT = TaskResult(
    task_id=2,
    task="object-detection",
    status="ok",
    text="2 cars",
    # what a runner may leave in `data` that JSON would not keep: int keys, tuples, floats at the edges
    data={"boxes": [(0, 1.5, 2e-308, 1e308)], 7: {"label": "car", "score": 0.1 + 0.2}, "none": None},
    artifacts=[Artifact(kind="image", path="/runs/t/task-2-boxes.png")],
    model_id="a",
    attempts=["b: timed out after 30 s"],
    started_at=1764460800.123456,
    finished_at=1764460801.654321,
)


@pytest.fixture
def journal(tmp_path: Path) -> CallJournal:
    return CallJournal(tmp_path / "calls" / "step", checkpoint_serializer())


def test_a_recorded_value_reads_back_as_the_checkpoint_gives_it_back(journal: CallJournal):
    serde = checkpoint_serializer()
    journal.sync(journal.record(KEY, RESULT))
    recorded = journal.recorded(KEY)
    assert isinstance(recorded, TaskResult)
    assert recorded == serde.loads_typed(serde.dumps_typed(RESULT))
    assert recorded.data[7] == RESULT.data[7] and recorded.started_at == RESULT.started_at


def test_a_record_is_found_under_its_own_key_only_in_any_key_order(journal: CallJournal):
    journal.record(KEY, RESULT)
    assert journal.recorded(dict(reversed(KEY.items()))) == journal.recorded(KEY)
    assert journal.recorded({**KEY, "model_ids": ["b", "a"]}) is None
    assert journal.recorded({**KEY, "inputs": {"image": "/w/other.png"}}) is None


def test_a_key_never_steers_the_file_out_of_the_folder(journal: CallJournal):
    journal.record({"task": "../../escaped"}, RESULT)
    (record,) = journal.folder.iterdir()
    assert record.parent == journal.folder and len(record.name) < 50


def test_a_write_killed_before_its_rename_leaves_no_record(journal: CallJournal, monkeypatch):
    journal.record(KEY, RESULT)
    changed = RESULT.model_copy(update={"text": "3 cars"})

    def killed(source, target):
        raise SystemExit("killed")  # the process dies between writing the temporary file and renaming it

    monkeypatch.setattr("os.replace", killed)
    with pytest.raises(SystemExit):
        journal.record({**KEY, "task_id": 3}, changed)
    with pytest.raises(SystemExit):
        journal.record(KEY, changed)
    monkeypatch.undo()
    assert journal.recorded({**KEY, "task_id": 3}) is None
    assert journal.recorded(KEY).text == "2 cars"  # the earlier record, whole


@pytest.mark.parametrize("cut", [0, 1, 60, -1], ids=["empty", "one byte", "header only", "last byte lost"])
def test_a_record_a_power_cut_left_incomplete_reads_as_no_record(journal: CallJournal, cut: int):
    path = journal.record(KEY, RESULT)  # renamed into place, but not yet synced when the power went
    path.write_bytes(path.read_bytes()[:cut])
    assert journal.recorded(KEY) is None


def test_recording_again_replaces_the_record(journal: CallJournal):
    journal.record(KEY, RESULT)
    journal.record(KEY, RESULT.model_copy(update={"text": "3 cars"}))
    assert journal.recorded(KEY).text == "3 cars"
    assert len([path for path in journal.folder.iterdir() if path.suffix == ".call"]) == 1
