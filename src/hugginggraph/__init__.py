"""HuggingGraph: HuggingGPT as a LangGraph graph — an LLM plans, picks Hugging Face models, runs them, answers.

from hugginggraph import build_graph, HuggingGraphContext
graph = build_graph()                      # a LangChain Runnable
await graph.ainvoke({"request": "..."}, context=HuggingGraphContext(llm=..., catalog=..., runners=[...]))
"""

from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.checkpoint import (
    NothingSaved,
    default_checkpoint_path,
    list_threads,
    open_checkpointer,
    sqlite_checkpointer,
)
from hugginggraph.graph.context import HuggingGraphContext, Limits
from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.nodes.approval import ApprovalDecision, ApprovalRequest
from hugginggraph.runs import aapprove, ahistory, aresume, arun, athreads, pending_approval, run

__all__ = [
    "ApprovalDecision",
    "ApprovalRequest",
    "HuggingGraphContext",
    "Limits",
    "ModelChoice",
    "NothingSaved",
    "Task",
    "TaskResult",
    "aapprove",
    "ahistory",
    "aresume",
    "arun",
    "athreads",
    "build_graph",
    "default_checkpoint_path",
    "list_threads",
    "open_checkpointer",
    "pending_approval",
    "run",
    "sqlite_checkpointer",
]
