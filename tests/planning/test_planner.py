"""The planner: prompt built from data files, structured output where supported, tolerant parsing elsewhere, and
the vote of the demo bank's labelled steps on the task types it names."""

import json
from dataclasses import replace
from typing import Any

import pytest
from conftest import VotingBank, stepped, weights_for, word_vectors
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from hugginggraph.graph.context import PlanningAids
from hugginggraph.planning.plan_prompt import planning_messages
from hugginggraph.planning.plan_schema import demo_reply, plan_items, plan_schema, reply_plan
from hugginggraph.planning.planner import NO_TASK_FOR_FILE, Planner
from hugginggraph.testing import ScriptedChatModel
from hugginggraph.tools import step_chooser
from hugginggraph.tools.demo_bank import default_demo_bank
from hugginggraph.tools.tasks import TASKS


def test_prompt_lists_every_task_then_demos_history_and_request():
    history = [HumanMessage("earlier question"), AIMessage("earlier answer")]
    demos = default_demo_bank().static(3, TASKS)
    messages = planning_messages("caption cat.png", ["cat.png"], history, demos)
    system = messages[0].text
    assert all(f"- {task_id} (" in system for task_id in TASKS)
    assert messages[-3:-1] == history
    assert "caption cat.png" in messages[-1].text and "cat.png" in messages[-1].text
    demo_plans = [json.loads(m.text) for m in messages[1:-3] if isinstance(m, AIMessage)]
    assert demo_plans and all(isinstance(p, list) for p in demo_plans)
    assert all(step["task"] in TASKS for p in demo_plans for step in p)


def test_without_the_steps_aid_demos_and_schema_show_no_steps():
    demo = default_demo_bank().static(2, TASKS)[1]
    assert all("step" in task for task in demo.plan)  # the bank has them; they are shown only with the aid
    assert all(list(task) == ["task", "id", "dep", "args"] for task in json.loads(demo_reply(demo.plan)))
    schema = plan_schema(("summarization",)).model_json_schema()
    assert list(schema["properties"]) == ["tasks"]
    assert list(schema["$defs"]["PlannedTask"]["properties"]) == ["task", "id", "dep", "args"]
    assert '"step"' not in planning_messages("caption cat.png", ["cat.png"], [], [demo])[0].text


def test_steps_inline_come_first_in_each_task_and_are_required():
    demo = default_demo_bank().static(2, TASKS)[1]
    reply = json.loads(demo_reply(demo.plan, "inline"))
    assert [next(iter(task)) for task in reply] == ["step", "step"]
    assert [task["step"] for task in reply] == [task["step"] for task in demo.plan]
    task_schema = plan_schema(("summarization",), "inline").model_json_schema()["$defs"]["PlannedTask"]
    assert list(task_schema["properties"])[:2] == ["step", "task"] and "step" in task_schema["required"]
    system = planning_messages("caption cat.png", ["cat.png"], [], [demo], steps="inline")[0].text
    assert 'Each task starts with "step"' in system


def test_steps_first_are_listed_before_the_tasks():
    demo = default_demo_bank().static(2, TASKS)[1]
    reply = json.loads(demo_reply(demo.plan, "first"))
    assert list(reply) == ["steps", "tasks"] and reply["steps"] == [task["step"] for task in demo.plan]
    assert all("step" not in task for task in reply["tasks"])
    schema = plan_schema(None, "first").model_json_schema()
    assert list(schema["properties"]) == ["steps", "tasks"] and schema["required"] == ["steps", "tasks"]
    assert schema["$defs"]["PlannedTask"]["properties"]["task"] == {"title": "Task", "type": "string"}


STEP = '{"task": "summarization", "id": 0, "dep": [-1], "args": {"text": "x"}}'


@pytest.mark.parametrize(
    "reply",
    [
        f"[{STEP}]",
        f"Sure! Here is the plan:\n```json\n[{STEP}]\n```",
        f'{{"tasks": [{STEP}]}}',
        f"Plan: [{STEP}] Hope this helps.",
        STEP,
    ],
)
def test_plans_are_found_in_chatty_replies(reply):
    assert plan_items(reply) == [json.loads(STEP)]


@pytest.mark.parametrize("reply", ["no json here", '{"answer": 42}', "[1, 2", '"just a string"'])
def test_replies_without_a_plan_are_rejected_with_a_reason(reply):
    with pytest.raises(ValueError):
        plan_items(reply)


class StructuredChatModel(ScriptedChatModel):
    """A controller that supports structured output, as ChatOpenAI or the embedded model do."""

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any):
        task = {"step": "summarize it", "task": "summarization", "id": 0, "args": {"text": "from schema"}}
        parsed = schema.model_validate({"tasks": [task]})
        return RunnableLambda(lambda _: {"parsed": parsed, "raw": AIMessage(""), "parsing_error": None})


async def test_structured_output_is_used_when_the_model_has_it(make_context, run_graph):
    from conftest import echo

    llm = StructuredChatModel(plan="this text must not be needed")
    context = make_context([], {"sum": ("summarization", echo())}, llm=llm)
    out = await run_graph(context)
    assert [t.args for t in out["plan"]] == [{"text": "from schema"}]
    assert out["results"][0].text == "sum(from schema)"
    assert "plan" not in llm.calls  # the plain-text path was never taken


ASK = "what colour is the car in car.jpg?"


@pytest.mark.parametrize(
    ("aids", "retyped"), [({}, 1), ({"step_vote": False}, 0), ({"steps": "none"}, 0), ({"demos": "static"}, 0)]
)
async def test_the_planner_votes_on_task_types_only_with_steps_retrieval_and_the_vote_on(aids, retyped):
    plan = [stepped(ASK, "image-to-text", 0, image="car.jpg")]
    llm = ScriptedChatModel(plan=plan)
    bank = VotingBank({ASK: "visual-question-answering"})
    draft = await Planner(llm, TASKS, PlanningAids(**aids), bank).draft(ASK, ["car.jpg"])
    assert draft.retyped == retyped
    assert draft.items[0]["task"] == ("visual-question-answering" if retyped else "image-to-text")


class VotingBankWithWords(VotingBank):
    """A voting table whose embedder counts words, so a trained chooser can judge the steps instead."""

    def embedder(self) -> Any:
        return word_vectors


@pytest.mark.parametrize(
    ("aids", "weights", "task"),
    [
        ({}, weights_for({"caption": "image-to-text"}), "image-to-text"),
        ({"step_chooser": "neighbours"}, weights_for({"caption": "image-to-text"}), "visual-question-answering"),
        ({}, None, "visual-question-answering"),  # no weights shipped with this bank's embedder: the bank votes
    ],
)
async def test_the_trained_chooser_judges_the_steps_unless_told_otherwise(aids, weights, task, monkeypatch):
    monkeypatch.setattr(step_chooser, "shipped_weights", lambda: None)
    plan = [stepped("caption the photo", "image-classification", 0, image="car.jpg")]
    bank = VotingBankWithWords({"caption the photo": "visual-question-answering"})
    planner = Planner(ScriptedChatModel(plan=plan), TASKS, PlanningAids(**aids), bank, chooser_weights=weights)
    draft = await planner.draft("caption the photo car.jpg", ["car.jpg"])
    assert draft.items[0]["task"] == task


async def test_steps_listed_first_go_into_their_tasks_and_are_voted_on():
    task = {"task": "image-to-text", "id": 0, "dep": [-1], "args": {"image": "car.jpg"}}
    llm = ScriptedChatModel(plan=json.dumps({"steps": [ASK], "tasks": [task]}))
    bank = VotingBank({ASK: "visual-question-answering"})
    draft = await Planner(llm, TASKS, PlanningAids(steps="first"), bank).draft(ASK, ["car.jpg"])
    assert draft.first_reply == [{"step": ASK, **task}]
    assert draft.retyped == 1 and draft.items[0]["task"] == "visual-question-answering"


def test_listed_steps_go_into_the_tasks_only_when_there_is_one_step_per_task():
    tasks = [{"task": "image-to-text", "id": 0}, {"task": "text-to-speech", "id": 1}]
    assert reply_plan({"steps": ["caption it", "read it"], "tasks": tasks}) == [
        {"step": "caption it", **tasks[0]},
        {"step": "read it", **tasks[1]},
    ]
    assert reply_plan({"steps": ["caption it and read it"], "tasks": tasks}) == tasks  # which task is which: unknown


@pytest.mark.parametrize(("aids", "rewired"), [({}, 1), ({"back_references": False}, 0)])
async def test_the_planner_wires_text_naming_an_earlier_result_unless_told_not_to(aids, rewired):
    plan = [
        stepped("caption car.jpg", "image-to-text", 0, image="car.jpg"),
        stepped("read the caption aloud", "text-to-speech", 1, text="the caption"),
    ]
    draft = await Planner(ScriptedChatModel(plan=plan), TASKS, PlanningAids(**aids), VotingBank({})).draft(
        "caption car.jpg and read the caption aloud", ["car.jpg"]
    )
    assert draft.rewired == rewired
    assert draft.items[1]["args"] == {"text": "<GENERATED>-0" if rewired else "the caption"}


async def test_files_earlier_answers_made_are_shown_from_the_threads_folder(tmp_path):
    """The same conversation on another thread is the same prompt, and a later turn's prompt is shorter."""
    seen = []

    def plan(messages) -> str:
        seen.append(messages)
        return "[]"

    made = tmp_path / "artifacts" / "3f2a9c" / "turn-1" / "task-0-text-to-speech.wav"
    history = [HumanMessage("read hello aloud"), AIMessage(f"- I read \u201chello\u201d aloud: {made}")]
    planner = Planner(ScriptedChatModel(plan=plan), TASKS, PlanningAids(demos="static"), VotingBank({}))
    await replace(planner, thread=tmp_path / "artifacts" / "3f2a9c").draft("and goodbye", [], history)
    await planner.draft("and goodbye", [], history)  # no thread known: the chat as it is
    shown, as_is = (next(m for m in reversed(messages) if isinstance(m, AIMessage)) for messages in seen)
    assert shown.text == "- I read \u201chello\u201d aloud: turn-1/task-0-text-to-speech.wav"
    assert as_is.text == history[1].text


@pytest.mark.parametrize(("votes", "asked"), [({"caption the picture": "image-to-text"}, ["plan"]), ({}, ["plan"] * 2)])
async def test_the_fix_pass_is_asked_only_about_what_the_vote_and_wiring_leave(votes, asked):
    # Read as its one text input, the picture reaches summarization as text: a problem the vote's type mends.
    plan = [
        stepped("draw a red fox", "text-to-image", 0, text="a red fox"),
        stepped("caption the picture", "summarization", 1, image="<GENERATED>-0"),
    ]
    llm = ScriptedChatModel(plan=plan)
    draft = await Planner(llm, TASKS, PlanningAids(), VotingBank(votes)).draft("draw a red fox and caption it", [])
    assert llm.calls == asked
    assert draft.items[1]["task"] == ("image-to-text" if votes else "summarization")


async def test_a_saved_reply_to_the_same_prompt_answers_the_first_call_and_the_reply_is_kept():
    plan = [stepped("caption car.jpg", "image-to-text", 0, image="car.jpg")]
    aids = PlanningAids(demos="static")
    asked = await Planner(ScriptedChatModel(plan=plan), TASKS, aids, VotingBank({})).draft("caption car.jpg", [])
    assert asked.first_reply == plan and asked.prompt_key and not asked.replayed

    llm = ScriptedChatModel(plan=plan)
    saved = {asked.prompt_key: plan}
    replayed = await Planner(llm, TASKS, aids, VotingBank({}), saved_replies=saved).draft("caption car.jpg", [])
    assert llm.calls == [] and replayed.replayed
    assert (replayed.items, replayed.first_reply, replayed.prompt_key) == (plan, plan, asked.prompt_key)

    other = await Planner(llm, TASKS, aids, VotingBank({}), saved_replies=saved).draft("caption bus.jpg", [])
    assert llm.calls == ["plan"] and not other.replayed and other.prompt_key != asked.prompt_key


@pytest.mark.parametrize(
    ("request_text", "asked"), [("Read the text on sign.png.", ["plan"] * 2), ("Tell me a joke.", ["plan"])]
)
async def test_an_empty_plan_for_a_request_naming_a_file_gets_the_fix_pass(request_text, asked):
    """A small controller sometimes plans nothing for "Read the text on sign.png"; the run would then say it can do
    that and do nothing. Asked again with the problem, it plans the task; a request naming no file may need none."""
    plan = [stepped("read the text on sign.png", "image-to-text", 0, image="sign.png")]

    def first_empty(messages) -> str:
        return json.dumps({"tasks": plan if "the plan has no task" in messages[-1].text else []})

    llm = ScriptedChatModel(plan=first_empty)
    draft = await Planner(llm, TASKS, PlanningAids(demos="static"), VotingBank({})).draft(request_text, [])

    assert llm.calls == asked
    assert (draft.items, draft.fixed) == ((plan, True) if len(asked) == 2 else ([], False))
    assert draft.error is None


@pytest.mark.parametrize(
    ("request_text", "files", "asked"),
    [
        ("What is said in memo.wav? Read it back to me.", ["memo.wav"], ["plan"] * 2),
        ("What is said in memo.wav? Read it back to me.", [], ["plan"]),
        ("Read the transcript back to me.", ["memo.wav"], ["plan"]),  # given for another turn (chat --file)
    ],
)
async def test_a_given_file_the_request_names_and_no_task_reads_gets_the_fix_pass(request_text, files, asked):
    """The 1.5B planned "What is said in memo.wav? Read it back to me." as text-to-speech of its own output; told
    only that, its fix pass planned the same; told that no task reads memo.wav, it planned the transcription."""
    speak = stepped("read the transcript back to me", "text-to-speech", 0, text="the transcript")
    transcribe = stepped("transcribe memo.wav", "automatic-speech-recognition", 0, audio="memo.wav")
    fixed = [transcribe, {**speak, "id": 1, "dep": [0], "args": {"text": "<GENERATED>-0"}}]

    def unread_until_told(messages) -> str:
        return json.dumps({"tasks": fixed if "no task reads memo.wav" in messages[-1].text else [speak]})

    llm = ScriptedChatModel(plan=unread_until_told)
    aids = PlanningAids(demos="static")
    draft = await Planner(llm, TASKS, aids, VotingBank({})).draft(request_text, files)

    assert llm.calls == asked
    assert draft.items == (fixed if len(asked) == 2 else [speak])


async def test_an_empty_plan_for_a_request_naming_a_file_is_a_failed_plan_when_the_fix_pass_plans_none_either():
    """The 1.5B once planned nothing for "What does the sign in sign.png say?", fix pass included: the run must not
    answer as if no model were needed (a chat answer then read the sign from imagination, "STOP")."""
    llm = ScriptedChatModel(plan=[])
    planner = Planner(llm, TASKS, PlanningAids(demos="static"), VotingBank({}))

    named = await planner.draft("What does the sign in sign.png say?", [])
    chat = await planner.draft("Tell me a joke.", [])

    assert (named.items, named.error) == ([], NO_TASK_FOR_FILE)
    assert (chat.items, chat.error) == ([], None)


async def test_an_input_file_outside_the_workspace_is_refused_before_any_planning(make_context, run_graph, tmp_path):
    context = make_context([{"task": "automatic-speech-recognition", "id": 0, "args": {"audio": "x.wav"}}], {})
    out = await run_graph(context, request="transcribe it", files=["../elsewhere/memo.wav"])
    assert out["plan_error"].startswith("input file '../elsewhere/memo.wav' is outside the workspace")
    assert context.llm.calls == [] and out["plan"] == []
    assert out["answer"].startswith("I could not carry out this request: input file '../elsewhere/memo.wav' is outside")


class EmptyUnlessRequired(ScriptedChatModel):
    """The embedded 1.5B on "What does the sign in sign.png say? Then read it aloud.": no task when the schema allows
    none, and, when it requires one, the right tasks on the file of a demo it was shown."""

    def with_structured_output(self, schema: Any, *, include_raw: bool = False, **kwargs: Any):
        required = schema.model_json_schema()["properties"]["tasks"].get("minItems", 0)
        tasks = [
            {"step": "what does the sign say", "task": "image-to-text", "id": 0, "args": {"image": "flyer.png"}},
            {"step": "read it aloud", "task": "text-to-speech", "id": 1, "args": {"text": "<GENERATED>-0"}},
        ][: 2 * required]
        self.calls.append(f"tasks>={required}")
        parsed = schema.model_validate({"tasks": tasks})
        return RunnableLambda(lambda _: {"parsed": parsed, "raw": AIMessage(""), "parsing_error": None})


async def test_the_fix_pass_for_an_empty_plan_requires_a_task_and_a_demos_file_becomes_the_requests(tmp_path):
    (tmp_path / "sign.png").write_bytes(b"png")
    llm = EmptyUnlessRequired(plan="unused")
    planner = Planner(llm, TASKS, PlanningAids(demos="static"), VotingBank({}), workspace=tmp_path)

    draft = await planner.draft("What does the sign in sign.png say? Then read it aloud.", ["sign.png"])

    assert llm.calls == ["tasks>=0", "tasks>=1"]
    assert draft.fixed and draft.error is None
    assert [(item["task"], item["args"]) for item in draft.items] == [
        ("image-to-text", {"image": "sign.png"}),
        ("text-to-speech", {"text": "<GENERATED>-0"}),
    ]


def test_a_fix_pass_schema_may_rule_out_the_empty_plan():
    assert "minItems" not in plan_schema(tuple(TASKS), "inline").model_json_schema()["properties"]["tasks"]
    assert plan_schema(tuple(TASKS), "inline", 1).model_json_schema()["properties"]["tasks"]["minItems"] == 1
    assert plan_schema(None, "none", 1).model_json_schema()["properties"]["tasks"]["minItems"] == 1
