"""The answer is written from real results and may only name files that exist."""

from dataclasses import replace
from pathlib import Path

from hugginggraph.nodes.response import confine_paths
from hugginggraph.planning.planner import NO_TASK_FOR_FILE
from hugginggraph.tools.runners.base import RunnerOutput


def test_real_paths_stay_bare_names_are_completed_invented_ones_are_marked(tmp_path: Path):
    real = tmp_path / "artifacts" / "t" / "task-1-depth.png"
    answer = f"See {real}, also task-1-depth.png, and /tmp/made_up.png or ./cat.jpg."
    confined = confine_paths(answer, {str(real)})
    assert confined.count(str(real)) == 2
    assert "[no such file: /tmp/made_up.png]" in confined
    assert "[no such file: ./cat.jpg]" in confined


def test_a_given_file_keeps_the_name_the_answer_gives_it(tmp_path: Path):
    """The streamed lead said "sign.png"; completing it to a full path made the kept answer differ from the one
    shown, and the CLI printed the lead a second time under "Final answer:"."""
    given, made = tmp_path / "sign.png", tmp_path / "artifacts" / "task-0-speech.wav"
    answer = "sign.png says hello; I read it aloud in task-0-speech.wav, not in sign.wav."
    assert confine_paths(answer, {str(made)}, {str(given)}) == (
        f"sign.png says hello; I read it aloud in {made}, not in [no such file: sign.wav]."
    )


def test_text_without_paths_is_untouched():
    text = "The picture shows 3 people (score 0.91); version 2.0 of the model. e.g. done."
    assert confine_paths(text, set()) == text


async def test_the_answer_sees_results_and_keeps_only_real_artifact_paths(make_context, run_graph, tmp_path: Path):
    from PIL import Image

    Image.new("RGB", (4, 4)).save(tmp_path / "street.png")

    async def detect(card, task, inputs, artifacts):
        artifact = artifacts.save_image(Image.new("RGB", (4, 4)), "boxes")
        return RunnerOutput(text=f"a cat (0.9), boxed in {artifact.path}", artifacts=[artifact])

    seen = []

    def answer(messages):
        seen.append(messages[0].text)
        real = next(line.split("files: ")[1] for line in messages[0].text.splitlines() if "files: " in line)
        return f"I found a cat, boxed in {real}, and also saved /home/me/extra.png."

    plan = [{"task": "object-detection", "id": 0, "args": {"image": "street.png"}}]
    context = make_context(plan, {"d": ("object-detection", detect)})
    context.llm.respond = answer
    out = await run_graph(context)
    path = out["results"][0].artifacts[0].path
    # Names, not paths, in the prompt (output and files): the lead gets the path back.
    assert Path(path).is_file() and "boxed in task-0-boxes.png\n  files: task-0-boxes.png" in seen[0]
    lead, report = out["answer"].split("\n\n")
    assert lead == f"I found a cat, boxed in {path}, and also saved [no such file: /home/me/extra.png]."
    assert report == f"- Objects found in street.png: a cat (0.9), boxed in {path} (files: {path})"


async def test_results_that_are_only_made_files_are_answered_by_the_report_alone(make_context, run_graph):
    """The lead could only describe the files the report names: asked about a recording it made, the 1.5B wrote
    "The recording shows a clear, clear, clear, ..."."""

    async def speak(card, task, inputs, artifacts):
        audio = artifacts.save_bytes(b"RIFF", ".wav", "audio", "speech")
        return RunnerOutput(text=f"a recording, saved as {audio.path}", artifacts=[audio])

    plan = [{"task": "text-to-speech", "id": 0, "args": {"text": "good night"}}]
    context = make_context(plan, {"voice": ("text-to-speech", speak)})
    context.llm.respond = "The recording shows a clear voice."
    out = await run_graph(context)
    path = out["results"][0].artifacts[0].path
    assert out["answer"] == f"- I read \u201cgood night\u201d aloud: {path}"


async def test_a_file_the_request_names_in_words_is_real_in_the_answer(make_context, run_graph, tmp_path: Path):
    """ "Read the text on sign.png" gives no file, but the plan reads the sign: the answer may name it."""
    from conftest import echo
    from PIL import Image

    Image.new("RGB", (4, 4)).save(tmp_path / "sign.png")
    plan = [{"task": "image-to-text", "id": 0, "args": {"image": "sign.png"}}]
    context = make_context(plan, {"ocr": ("image-to-text", echo())})
    context.llm.respond = "The text on sign.png says hello; photo.png was never read."

    out = await run_graph(context)

    lead = out["answer"].split("\n\n")[0]
    assert lead == "The text on sign.png says hello; [no such file: photo.png] was never read."


async def test_an_empty_plan_for_a_request_naming_a_file_is_said_not_answered_from_imagination(make_context, run_graph):
    """The 1.5B once planned nothing for "What does the sign in sign.png say? Then read it aloud." (the plan and
    its fix pass both empty), and the chat answer read the sign as "STOP"."""
    context = make_context([], {})
    out = await run_graph(context, request="What does the sign in sign.png say?")
    assert out["answer"] == f"I could not carry out this request: {NO_TASK_FOR_FILE}."
    chatted = await run_graph(context, request="What can you do?", thread_id="chat")
    assert chatted["plan_error"] is None and not chatted["answer"].startswith("I could not")  # chat, as before


async def test_a_failing_controller_still_leaves_a_truthful_answer(make_context, run_graph):
    from conftest import echo

    plan = [
        {"task": "summarization", "id": 0, "args": {"text": "long"}},
        {"task": "text-classification", "id": 1, "args": {"text": "x"}},
    ]
    context = make_context(plan, {"s": ("summarization", echo()), "c": ("text-classification", echo())})

    def down(messages):
        raise ConnectionError("server went away")

    context.llm.respond = down
    out = await run_graph(context)
    assert out["answer"].splitlines() == [
        "The controller LLM could not write the answer (ConnectionError: server went away). "
        "The tasks ended as follows:",
        '- Summary of \u201clong\u201d: "s(long)"',
        "- \u201cx\u201d is labelled c(x)",
    ]


async def test_a_partly_failed_plan_gets_the_report_alone_with_no_lead_to_invent_the_rest(make_context, run_graph):
    from conftest import echo

    plan = [
        {"task": "summarization", "id": 0, "args": {"text": "long"}},
        {"task": "question-answering", "id": 1, "args": {"text": "When?", "context": "notes"}},
    ]
    context = make_context(
        plan, {"s": ("summarization", echo()), "qa": ("question-answering", echo(fail=ValueError("bad")))}
    )
    out = await run_graph(context)
    assert "respond" not in context.llm.calls
    assert out["answer"].splitlines() == [
        '- Summary of \u201clong\u201d: "s(long)"',
        "- I could not answer the question from \u201cWhen?\u201d: every model failed; last: qa: ValueError: bad.",
    ]


async def test_random_weights_get_no_lead_and_are_labelled_noise(make_context, run_graph):
    from conftest import echo

    from hugginggraph.tools.catalog import CatalogEntry, InMemoryCatalog

    plan = [{"task": "text-classification", "id": 0, "args": {"text": "what a fine day"}}]
    context = make_context(plan, {"tiny": ("text-classification", echo())})
    context = replace(
        context, catalog=InMemoryCatalog([CatalogEntry(id="tiny", task="text-classification", random_weights=True)])
    )
    out = await run_graph(context)
    assert out["results"][0].random_weights
    assert out["answer"] == (
        "- \u201cwhat a fine day\u201d is labelled tiny(what a fine day) "
        "(made by a model with random weights: this is noise, not a result)"
    )
    assert context.llm.calls == ["plan"]  # the controller was not asked to write about noise


def test_each_task_is_told_in_the_users_terms_with_its_files_and_failures():
    from hugginggraph.graph.state import Artifact, Task, TaskResult
    from hugginggraph.nodes.response import task_sentence

    plan = {
        0: Task(id=0, task="automatic-speech-recognition", args={"audio": "inbox/memo.wav"}),
        1: Task(id=1, task="summarization", dep=[0], args={"text": "<GENERATED>-0"}),
        2: Task(id=2, task="text-to-speech", dep=[1], args={"text": "<GENERATED>-1"}),
        3: Task(id=3, task="object-detection", args={"image": "street.png"}),
    }
    speech = Artifact(kind="audio", path="/runs/t/task-2-speech.wav")
    results = {
        0: TaskResult(task_id=0, task=plan[0].task, status="ok", text="Call Anna  at noon."),
        1: TaskResult(task_id=1, task=plan[1].task, status="ok", text="x" * 400),
        2: TaskResult(task_id=2, task=plan[2].task, status="ok", text=speech.path, artifacts=[speech]),
        3: TaskResult(task_id=3, task=plan[3].task, status="failed", error="no model available"),
    }
    told = [task_sentence(plan[i], results[i], plan) for i in range(4)]
    assert told[0] == 'memo.wav says: "Call Anna at noon."'
    assert told[1] == f'Summary of the transcript: "{"x" * 300}\u2026"'
    assert told[2] == "I read the summary aloud: /runs/t/task-2-speech.wav"
    assert told[3] == "I could not detect the objects in street.png: no model available."


def test_a_question_about_a_passage_is_told_as_the_question_and_where_it_was_asked():
    from hugginggraph.graph.state import Task, TaskResult
    from hugginggraph.nodes.response import task_sentence

    plan = {
        0: Task(id=0, task="question-answering", args={"text": "notes.txt Question: At what time does it start?"}),
        1: Task(id=1, task="automatic-speech-recognition", args={"audio": "memo.wav"}),
        2: Task(id=2, task="question-answering", dep=[1], args={"text": "<GENERATED>-1 question: Who is invited?"}),
        3: Task(id=3, task="question-answering", args={"text": "notes.txt"}),
    }
    results = {
        0: TaskResult(task_id=0, task=plan[0].task, status="ok", text="10:30"),
        2: TaskResult(task_id=2, task=plan[2].task, status="ok", text="Anna"),
        3: TaskResult(task_id=3, task=plan[3].task, status="failed", error="no answer in the passage"),
    }
    assert task_sentence(plan[0], results[0], plan) == (
        'The answer to \u201cAt what time does it start?\u201d in notes.txt: "10:30"'
    )
    assert (
        task_sentence(plan[2], results[2], plan)
        == 'The answer to \u201cWho is invited?\u201d in the transcript: "Anna"'
    )
    assert task_sentence(plan[3], results[3], plan) == (
        "I could not answer the question from \u201cnotes.txt\u201d: no answer in the passage."
    )


def test_results_reach_the_controller_as_labelled_lines_not_json():
    from hugginggraph.graph.state import Artifact, TaskResult
    from hugginggraph.nodes.response import results_for_prompt

    results = [
        TaskResult(task_id=0, task="image-to-text", status="ok", model_id="m/caption", text="a cat on a mat"),
        TaskResult(
            task_id=1,
            task="text-to-speech",
            status="ok",
            model_id="m/tts",
            text="/runs/t/task-1-speech.wav",
            artifacts=[Artifact(kind="audio", path="/runs/t/task-1-speech.wav")],
        ),
        TaskResult(task_id=2, task="translation", status="skipped", error="task 1 failed"),
        TaskResult(
            task_id=3,
            task="text-to-speech",
            status="ok",
            model_id="m/piper",
            text="a recording of the words read aloud, 2.0 seconds long, saved as /runs/t/task-3-speech.wav",
            artifacts=[Artifact(kind="audio", path="/runs/t/task-3-speech.wav")],
        ),
    ]
    assert results_for_prompt(results).splitlines() == [
        "Task 0 (image-to-text): ok",
        "  output: a cat on a mat",
        "Task 1 (text-to-speech): ok",
        "  files: task-1-speech.wav",
        "Task 2 (translation): skipped",
        "  why: task 1 failed",
        "Task 3 (text-to-speech): ok",
        "  output: a recording of the words read aloud, 2.0 seconds long, saved as task-3-speech.wav",
        "  files: task-3-speech.wav",
    ]
