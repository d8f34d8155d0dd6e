"""The HuggingGraph graph, wiring only: plan → validate → select (one branch per task) → execute → respond."""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.graph.state import GraphState, InputState, OutputState, SelectionInput
from hugginggraph.nodes.execution import execute
from hugginggraph.nodes.planning import plan
from hugginggraph.nodes.response import respond
from hugginggraph.nodes.selection import select
from hugginggraph.nodes.validation import validate


def fan_out_selection(state: GraphState) -> str | list[Send]:
    """One selection branch per task that can still run; straight to the answer when there is nothing to run."""
    if state.get("plan_error") or not state.get("plan"):
        return "respond"
    doomed = state.get("results", {})
    branches = [
        Send("select", {"request": state.get("request", ""), "task": task})
        for task in state["plan"]
        if task.id not in doomed
    ]
    return branches or "execute"


HuggingGraph = CompiledStateGraph[GraphState, HuggingGraphContext, InputState, OutputState]


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> HuggingGraph:
    """The compiled graph (a LangChain Runnable). Run it with `context=HuggingGraphContext(...)`."""
    builder = StateGraph(
        GraphState, context_schema=HuggingGraphContext, input_schema=InputState, output_schema=OutputState
    )
    builder.add_node("plan", plan)
    builder.add_node("validate", validate)
    # langgraph's overloads cannot infer a branch input type other than the state: checked by the tests instead.
    builder.add_node("select", select, input_schema=SelectionInput)  # type: ignore[call-overload]
    builder.add_node("execute", execute)
    builder.add_node("respond", respond)

    builder.add_edge(START, "plan")
    builder.add_edge("plan", "validate")
    builder.add_conditional_edges("validate", fan_out_selection, ["select", "execute", "respond"])
    builder.add_edge("select", "execute")
    builder.add_edge("execute", "respond")
    builder.add_edge("respond", END)
    return builder.compile(checkpointer=checkpointer, name="hugginggraph")
