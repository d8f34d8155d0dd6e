"""Pictures of a run for notebooks and reports: the plan drawn as its task graph.

Drawn with matplotlib alone (the `eval` extra), since Mermaid and Graphviz renderers need a web service or a
system binary, and notebooks must run offline. Tasks stand in columns by dependency depth, so the picture reads
left to right in the order the executor can start them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hugginggraph.graph.state import Task, TaskResult, TaskStatus

if TYPE_CHECKING:
    from matplotlib.figure import Figure

STATUS_COLOURS: dict[TaskStatus | None, str] = {
    "ok": "#b7e4c7",
    "failed": "#f4a6a6",
    "skipped": "#d9d9d9",
    None: "#dbe9f6",  # not run (yet)
}


def plan_layers(plan: Sequence[Task]) -> list[list[Task]]:
    """The tasks by dependency depth: layer 0 needs nothing, layer n needs a task of layer n-1.

    Depths are taken in plan order, the dependency order validation leaves, so a dependency that is missing or
    comes later counts as none: any plan draws, even one validation refused."""
    depth: dict[int, int] = {}
    for task in plan:
        depth[task.id] = 1 + max((depth[dep] for dep in task.dep if dep in depth), default=-1)
    layers: list[list[Task]] = [[] for _ in range(max(depth.values(), default=-1) + 1)]
    for task in plan:
        layers[depth[task.id]].append(task)
    return layers


def plan_figure(plan: Sequence[Task], results: Mapping[int, TaskResult] | None = None) -> Figure:
    """The plan as boxes (task id, type, and status once `results` has one) with an arrow from each dependency.

    A plain matplotlib `Figure`, outside pyplot's global state: show it in a notebook, or `savefig` it."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plan_figure needs matplotlib: pip install 'hugginggraph[eval]'") from None

    layers = plan_layers(plan)
    columns, rows = max(len(layers), 1), max((len(layer) for layer in layers), default=1)
    figure = Figure(figsize=(3.2 * columns, 0.4 + 1.0 * rows))
    axes = figure.add_subplot()
    axes.set_axis_off()
    axes.set_xlim(-0.5, columns - 0.5)
    axes.set_ylim(-rows / 2, rows / 2)
    boxes = {}
    for column, layer in enumerate(layers):
        for row, task in enumerate(layer):
            status = results[task.id].status if results and task.id in results else None
            boxes[task.id] = axes.annotate(
                f"{task.id}: {task.task}\n{status or 'not run'}",
                xy=(column, (len(layer) - 1) / 2 - row),
                ha="center",
                va="center",
                fontsize=9,
                bbox={"boxstyle": "round,pad=0.5", "facecolor": STATUS_COLOURS[status], "edgecolor": "#555555"},
            )
    # Drawn after the boxes, so each arrow is clipped to box outlines that are already placed.
    for task in plan:
        for dep in task.dep:
            if dep in boxes:
                axes.annotate(
                    "",
                    xy=boxes[task.id].xy,
                    xytext=boxes[dep].xy,
                    arrowprops={
                        "arrowstyle": "-|>",
                        "color": "#555555",
                        "patchA": boxes[dep].get_bbox_patch(),
                        "patchB": boxes[task.id].get_bbox_patch(),
                    },
                )
    return figure
