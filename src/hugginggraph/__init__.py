"""HuggingGraph: HuggingGPT as a LangGraph graph — an LLM plans, picks Hugging Face models, runs them, answers.

from hugginggraph import build_graph, HuggingGraphContext
graph = build_graph()                      # a LangChain Runnable
await graph.ainvoke({"request": "..."}, context=HuggingGraphContext(llm=..., catalog=..., runners=[...]))
"""

from hugginggraph.graph.builder import build_graph
from hugginggraph.graph.checkpoint import default_checkpoint_path, list_threads, sqlite_checkpointer
from hugginggraph.graph.context import HuggingGraphContext, Limits
from hugginggraph.graph.state import ModelChoice, Task, TaskResult
from hugginggraph.runs import ahistory, aresume, arun, athreads, run

__all__ = [
    "HuggingGraphContext",
    "Limits",
    "ModelChoice",
    "Task",
    "TaskResult",
    "ahistory",
    "aresume",
    "arun",
    "athreads",
    "build_graph",
    "default_checkpoint_path",
    "list_threads",
    "run",
    "sqlite_checkpointer",
]
