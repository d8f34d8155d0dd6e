"""Plan TaskBench records with our planner and score the plans.

Planning goes through `Planner.draft` and `check_plan`, the code the graph runs, without executing anything.
Predictions are appended to a JSONL file as they are made, so an interrupted evaluation resumes where it stopped
(records already planned are not planned again). A plan that fails or does not parse is scored as an empty plan.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from rich.console import Console
from rich.progress import MofNCompleteColumn, Progress

from hugginggraph.planning.plan_check import check_plan
from hugginggraph.planning.planner import Planner
from hugginggraph.taskbench.metrics import PlanScores, plan_sets
from hugginggraph.taskbench.plans import raw_task_nodes, task_nodes
from hugginggraph.taskbench.records import PlanShape, TaskBenchRecord
from hugginggraph.tools.llm_json import ControllerUnavailable

SHAPES: tuple[PlanShape, ...] = ("single", "chain", "dag")


class Prediction(BaseModel):
    """One record's plan as we made it, and in TaskBench's form."""

    id: str
    type: PlanShape
    task_nodes: list[dict[str, Any]] = Field(default_factory=list)
    raw_plan: list[Any] = Field(default_factory=list)
    repairs: list[str] = Field(default_factory=list)
    error: str | None = None
    """Why there is no plan: the planner's reply did not parse, or planning raised."""
    fixed: bool = False
    retyped: int = 0
    rewired: int = 0
    seconds: float = 0.0
    prompt_key: str | None = None
    """The first planning call's `nodes.planning.prompt_key`, and the controller's reply to it, before any revision:
    what a later evaluation can replay (`Planner.saved_replies`)."""
    first_reply: list[Any] | None = None
    replayed: bool = False
    """The first reply was replayed from an earlier evaluation rather than asked."""


@contextmanager
def _workspace(record: TaskBenchRecord) -> Iterator[Path]:
    """A folder holding an empty file for each input file and text document the request names, as a user's
    workspace would: the planner's fix pass then sees the files it invents as missing, exactly as in a real run."""
    with tempfile.TemporaryDirectory(prefix="taskbench-") as folder:
        workspace = Path(folder)
        for name in [*record.files, *record.text_files]:
            path = workspace / name
            if not Path(name).is_absolute() and workspace in path.resolve().parents:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.touch()
        yield workspace


async def predict(planner: Planner, record: TaskBenchRecord, repair: bool = True) -> Prediction:
    """Plan one record. Raises ControllerUnavailable (no point going on); any other failure is a failed plan."""
    started = time.perf_counter()
    try:
        with _workspace(record) as workspace:
            draft = await replace(planner, workspace=workspace).draft(record.instruction, record.files)
    except ControllerUnavailable:
        raise
    except Exception as error:  # one record's failure is its score, not the end of the evaluation
        return Prediction(
            id=record.id,
            type=record.type,
            error=f"{type(error).__name__}: {error}",
            seconds=time.perf_counter() - started,
        )
    seconds = time.perf_counter() - started
    if repair:
        check = check_plan(draft.items, None, planner.tasks)
        nodes, repairs = task_nodes(check.tasks), check.repairs
    else:
        nodes, repairs = raw_task_nodes(draft.items), []
    return Prediction(
        id=record.id,
        type=record.type,
        task_nodes=nodes,
        raw_plan=draft.items,
        repairs=repairs,
        error=draft.error,
        fixed=draft.fixed,
        retyped=draft.retyped,
        rewired=draft.rewired,
        seconds=seconds,
        prompt_key=draft.prompt_key,
        first_reply=draft.first_reply,
        replayed=draft.replayed,
    )


def saved_replies(path: Path) -> dict[str, list[Any]]:
    """The first replies saved at `path` (a predictions file), by prompt key."""
    return {
        prediction.prompt_key: prediction.first_reply
        for prediction in read_predictions(path).values()
        if prediction.prompt_key is not None and prediction.first_reply is not None
    }


def read_predictions(path: Path) -> dict[str, Prediction]:
    """Predictions already saved at `path` (none when it does not exist); a torn last line is ignored."""
    if not path.is_file():
        return {}
    saved = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            prediction = Prediction.model_validate_json(line)
        except ValueError:
            continue
        saved[prediction.id] = prediction
    return saved


async def plan_records(
    planner: Planner, records: Sequence[TaskBenchRecord], path: Path, repair: bool = True, progress: bool = True
) -> dict[str, Prediction]:
    """Predictions for every record, planning only those `path` does not hold yet and appending each to it.

    The progress bar goes to stderr, leaving stdout to the report; records planned before count as done."""
    predictions = read_predictions(path)
    todo = [record for record in records if record.id not in predictions]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
        with path.open("a", encoding="utf-8") as torn:
            torn.write("\n")  # an interrupted write's fragment ends here, so the next prediction starts clean
    with (
        path.open("a", encoding="utf-8") as out,
        Progress(
            *Progress.get_default_columns(), MofNCompleteColumn(), console=Console(stderr=True), disable=not progress
        ) as bar,
    ):
        planning = bar.add_task("planning", total=len(records), completed=len(records) - len(todo))
        for record in todo:
            prediction = await predict(planner, record, repair)
            out.write(prediction.model_dump_json() + "\n")
            out.flush()
            predictions[record.id] = prediction
            bar.advance(planning)
    return predictions


def score(
    records: Sequence[TaskBenchRecord], predictions: Mapping[str, Prediction], output_types: Mapping[str, str]
) -> dict[str, PlanScores]:
    """Scores overall and per shape; a record without a prediction counts as an empty plan. `output_types` maps
    each tool of the benchmark to its output type (see `records.tool_output_types`)."""
    names = frozenset(output_types)
    scores = {group: PlanScores() for group in ("overall", *SHAPES)}
    for record in records:
        truth = plan_sets([node.model_dump() for node in record.task_nodes], output_types)
        prediction = predictions.get(record.id)
        predicted = plan_sets(prediction.task_nodes if prediction else [], output_types)
        scores["overall"].add(truth, predicted, names)
        scores[record.type].add(truth, predicted, names)
    return scores
