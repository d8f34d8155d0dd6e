"""Each turn of a thread writes its outputs to its own folder: files are named after their task, and a later turn's
task 0 must not overwrite the recording an earlier answer, still in the chat, names. A later turn may read them."""

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


async def test_a_later_turn_reads_what_an_earlier_turn_made(make_context, run_graph):
    """ "Read this aloud", then "transcribe the recording you just made": the planner is shown the recording from
    the thread's folder, and the plan that names it so runs."""

    async def hear(card, task, inputs, artifacts) -> RunnerOutput:
        return RunnerOutput(text=f"heard {Path(inputs['audio']).read_bytes().decode()}")

    models = {"voice": ("text-to-speech", speak), "ears": ("automatic-speech-recognition", hear)}
    await run_graph(make_context([{**PLAN[0], "args": {"text": "good morning"}}], models), request="say it")
    shown = []

    def transcribe(messages) -> str:
        shown.append(messages[-2].text)  # the chat's last answer, just before this request
        return '[{"task": "automatic-speech-recognition", "id": 0, "args": {"audio": "turn-1/task-0-speech.wav"}}]'

    out = await run_graph(make_context(transcribe, models), request="transcribe the recording you just made")
    assert shown == ["- I read \u201cgood morning\u201d aloud: turn-1/task-0-speech.wav"]
    assert out["results"][0].status == "ok" and out["results"][0].text == "heard good morning"
