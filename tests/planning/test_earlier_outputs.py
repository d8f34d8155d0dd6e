from pathlib import Path

from hugginggraph.planning.earlier_outputs import put_earlier_outputs


def asr(task_id: int, audio: str) -> dict:
    return {"task": "automatic-speech-recognition", "id": task_id, "args": {"audio": audio}}


def test_a_result_no_task_of_the_plan_makes_is_the_file_the_last_turn_made(tmp_path: Path):
    """ "Transcribe the recording you just made": the 1.5B's plan read it as the output of a task 0 of its own."""
    (tmp_path / "turn-1").mkdir()
    (tmp_path / "turn-1" / "task-0-text-to-speech.wav").write_bytes(b"RIFF")
    (tmp_path / "turn-1" / "calls").mkdir()
    plan = [asr(0, "<GENERATED>-0"), {"task": "translation", "id": 1, "args": {"text": "<GENERATED>-0"}}]
    fitted = put_earlier_outputs(plan, tmp_path, 1)
    assert fitted == [asr(0, "turn-1/task-0-text-to-speech.wav"), plan[1]]  # text references stay the plan's own


def test_a_reference_to_another_task_of_the_plan_stays_even_one_written_later(tmp_path: Path):
    (tmp_path / "turn-1").mkdir()
    (tmp_path / "turn-1" / "task-0-text-to-speech.wav").write_bytes(b"RIFF")
    speak = {"task": "text-to-speech", "id": 0, "args": {"text": "hi"}}
    assert put_earlier_outputs([speak, asr(1, "<GENERATED>-0")], tmp_path, 1) == [speak, asr(1, "<GENERATED>-0")]
    assert put_earlier_outputs([asr(1, "<GENERATED>-0"), speak], tmp_path, 1) == [asr(1, "<GENERATED>-0"), speak]


def test_with_no_file_or_several_of_the_kind_the_plan_stays(tmp_path: Path):
    plan = [asr(0, "<GENERATED>-0")]
    assert put_earlier_outputs(plan, tmp_path, 1) == plan  # no such turn
    (tmp_path / "turn-1").mkdir()
    for name in ("task-0-a.wav", "task-1-b.wav", "task-2-c.png"):
        (tmp_path / "turn-1" / name).write_bytes(b"x")
    assert put_earlier_outputs(plan, tmp_path, 1) == plan
    image = [{"task": "image-to-text", "id": 0, "args": {"image": "<GENERATED>-0"}}]
    assert put_earlier_outputs(image, tmp_path, 1)[0]["args"]["image"] == "turn-1/task-2-c.png"
