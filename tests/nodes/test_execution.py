"""Each turn of a thread writes its outputs to its own folder: files are named after their task, and a later turn's
task 0 must not overwrite the recording an earlier answer, still in the chat, names."""

from __future__ import annotations

from pathlib import Path

from hugginggraph.tools.runners.base import RunnerOutput

PLAN = [{"task": "text-to-speech", "id": 0, "dep": [-1], "args": {"text": "<the request>"}}]


async def speak(card, task, inputs, artifacts) -> RunnerOutput:
    """A voice whose recording holds the words it read."""
    audio = artifacts.save_bytes(inputs["text"].encode(), ".wav", "audio", "speech")
    return RunnerOutput(text="a recording", artifacts=[audio])


async def test_a_later_turn_keeps_the_earlier_turns_files(make_context, run_graph, tmp_path: Path):
    recordings = []
    for words in ("good morning", "good night"):
        plan = [{**PLAN[0], "args": {"text": words}}]
        out = await run_graph(make_context(plan, {"voice": ("text-to-speech", speak)}), request=f"say {words}")
        (recording,) = out["results"][0].artifacts
        recordings.append(Path(recording.path))
    first, second = recordings
    assert first != second and first.name == second.name  # the same task's file, in each turn's folder
    assert first.read_bytes() == b"good morning" and second.read_bytes() == b"good night"
    assert [path.parent for path in recordings] == [tmp_path / "artifacts" / "t" / f"turn-{n}" for n in (1, 2)]
