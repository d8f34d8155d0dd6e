"""Our plans in TaskBench's form: tool names in order, arguments as a list, `<GENERATED>-k` as `<node-j>` where j
is the position of task k in the plan."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from hugginggraph.graph.state import Task
from hugginggraph.planning.references import REFERENCE


def _node_references(value: str, position: dict[int, int]) -> str:
    """`<GENERATED>-k` → `<node-j>`; a reference to a task the plan lacks is left as written (an odd literal)."""

    def replace(match: re.Match[str]) -> str:
        task_id = int(match.group(1))
        return f"<node-{position[task_id]}>" if task_id in position else match.group(0)

    return REFERENCE.sub(replace, value)


def task_nodes(tasks: Sequence[Task]) -> list[dict[str, Any]]:
    """A validated plan (dependencies first) as TaskBench `task_nodes`."""
    position = {task.id: index for index, task in enumerate(tasks)}
    return [
        {"task": task.task, "arguments": [_node_references(value, position) for value in task.args.values()]}
        for task in tasks
    ]


def raw_task_nodes(items: Sequence[Any]) -> list[dict[str, Any]]:
    """A raw plan, unvalidated and unrepaired, as TaskBench `task_nodes`: what the planner wrote, as far as it
    reads as tasks at all (measures what validation adds)."""
    tasks = [item for item in items if isinstance(item, dict) and isinstance(item.get("task"), str)]
    position = {item["id"]: index for index, item in enumerate(tasks) if isinstance(item.get("id"), int)}
    nodes = []
    for item in tasks:
        args = item.get("args")
        values = args.values() if isinstance(args, dict) else args if isinstance(args, list) else []
        nodes.append({"task": item["task"], "arguments": [_node_references(str(v), position) for v in values]})
    return nodes
