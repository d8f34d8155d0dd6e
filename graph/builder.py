"""The HuggingGraph graph, wiring only: plan → validate → select (one branch per task) → approve → execute →
respond, and once per turn, when tasks failed, execute → replan → validate again for the replacement. The routes
below end a run early: after validation in mode "tasks", before the answer in mode "results", and at the answer
whenever the run stopped (`stopped`: a budget, the user's rejection)."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from hugginggraph.graph.context import ContextOptions, HuggingGraphContext, given_context
from hugginggraph.graph.state import GraphState, InputState, OutputState, SelectionInput
from hugginggraph.nodes.approval import approve
from hugginggraph.nodes.execution import execute
from hugginggraph.nodes.planning import plan
from hugginggraph.nodes.replanning import replan
from hugginggraph.nodes.response import respond
from hugginggraph.nodes.selection import select
from hugginggraph.nodes.validation import validate
from hugginggraph.planning.replacement import may_replan


def answer_or_end(state: GraphState) -> str:
    """The answer, unless the run was asked for results only."""
    return END if state.get("mode") == "results" else "respond"


def after_execution(state: GraphState) -> str:
    """The replan stage when tasks failed and it has not run this turn; otherwise the answer (or the end)."""
    return "replan" if may_replan(state) else answer_or_end(state)


def after_replan(state: GraphState) -> str:
    """Validation of the plan with its replacement tasks; the answer when there are none."""
    return "validate" if state.get("replanned") else answer_or_end(state)


def selection_branches(state: GraphState) -> list[Send]:
    """One selection branch per task that can still run and has no model yet."""
    done, chosen = state.get("results", {}), state.get("choices", {})
    tasks = [task for task in state.get("plan", []) if task.id not in done and task.id not in chosen]
    usage = state.get("llm_usage")
    return [
        Send(
            "select",
            SelectionInput(request=state.get("request", ""), task=task, llm_usage=usage, branch=i, branches=len(tasks)),
        )
        for i, task in enumerate(tasks)
    ]


def after_validation(state: GraphState) -> str | list[Send]:
    """Models chosen for the plan; the end in mode "tasks"; the answer when there is nothing to run."""
    if state.get("mode") == "tasks":
        return END
    if state.get("plan_error") or state.get("stopped") or not state.get("plan"):
        return answer_or_end(state)
    return selection_branches(state) or "approve"


def after_approval(state: GraphState) -> str | list[Send]:
    """Execution; selection again for the tasks an edit added or changed; the answer when the run stopped."""
    if state.get("stopped"):
        return answer_or_end(state)
    return selection_branches(state) or "execute"


HuggingGraph = CompiledStateGraph[GraphState, HuggingGraphContext, InputState, OutputState]


def build_graph(
    checkpointer: BaseCheckpointSaver | None = None, *, options_schema: type[ContextOptions] | None = None
) -> HuggingGraph:
    """The compiled graph (a LangChain Runnable). Run it with `context=HuggingGraphContext(...)`; or, for callers
    that can only send JSON, as the server does, give the `options_schema` its runs' contexts are read into, and
    each node gets the context the options build (`given_context`)."""
    # Typed for what nodes see, whatever the schema: `given_context` makes it a HuggingGraphContext.
    context_schema: type[Any] = options_schema or HuggingGraphContext
    builder: StateGraph[GraphState, HuggingGraphContext, InputState, OutputState] = StateGraph(
        GraphState, context_schema=context_schema, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("plan", given_context(plan))
    builder.add_node("validate", given_context(validate))
    # langgraph's overloads cannot infer a branch input type other than the state: checked by the tests instead.
    builder.add_node("select", given_context(select), input_schema=SelectionInput)  # type: ignore[call-overload]
    builder.add_node("approve", given_context(approve))
    builder.add_node("execute", given_context(execute))
    builder.add_node("replan", given_context(replan))
    builder.add_node("respond", given_context(respond))

    builder.add_edge(START, "plan")
    builder.add_edge("plan", "validate")
    builder.add_conditional_edges("validate", after_validation, ["select", "approve", "respond", END])
    builder.add_edge("select", "approve")
    builder.add_conditional_edges("approve", after_approval, ["select", "execute", "respond", END])
    builder.add_conditional_edges("execute", after_execution, ["replan", "respond", END])
    builder.add_conditional_edges("replan", after_replan, ["validate", "respond", END])
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="hugginggraph")
