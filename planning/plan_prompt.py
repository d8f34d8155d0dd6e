"""The planning prompt: the system prompt with the task list, the few-shot demos as earlier turns, the chat so far,
then the request with its files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from hugginggraph.graph.context import StepsAid
from hugginggraph.planning.plan_schema import demo_reply
from hugginggraph.prompts import render
from hugginggraph.tools.demo_bank import Demo
from hugginggraph.tools.tasks import TASKS, TaskSpec


def task_list(tasks: Mapping[str, TaskSpec], modalities: bool = True) -> str:
    def kinds(spec: TaskSpec) -> str:
        return f" ({', '.join(spec.inputs)} -> {spec.output})" if modalities else ""

    return "\n".join(f"- {spec.id}{kinds(spec)}: {spec.description}" for spec in tasks.values())


STEPS_RULES: dict[StepsAid, str] = {
    "none": "",
    "inline": '- Each task starts with "step": the part of the request it does, in the request\'s words.\n',
    "first": '- First list "steps": each thing the request asks for, in order, a short phrase in the request\'s '
    'words; then give "tasks", one task per step.\n',
}


def _user_turn(request: str, files: Sequence[str]) -> HumanMessage:
    return HumanMessage(render("planning_request", request=request, files=", ".join(files) or "none"))


def planning_messages(
    request: str,
    files: Sequence[str],
    history: Sequence[BaseMessage],
    demos: Sequence[Demo] = (),
    tasks: Mapping[str, TaskSpec] = TASKS,
    modalities: bool = True,
    steps: StepsAid = "none",
) -> list[BaseMessage]:
    """System prompt, the few-shot demos as earlier turns, the chat so far, then the request."""
    system = render("planning_system", task_list=task_list(tasks, modalities), steps_rule=STEPS_RULES[steps])
    messages: list[BaseMessage] = [SystemMessage(system)]
    for demo in demos:
        messages.append(_user_turn(demo.request, demo.files))
        messages.append(AIMessage(demo_reply(demo.plan, steps)))
    messages.extend(history)
    messages.append(_user_turn(request, files))
    return messages
