"""`hugginggraph eval`: measure the configured controller's plans on TaskBench-format records.

Writes, under `--out`: `predictions.jsonl` (resumable), `scores.json`, `summary.md` and `scores.png`. The tool set
planned over is the benchmark's own (`tool_desc.json` beside the data, or `--tools`), as TaskBench prompts every
model with its tools; without one, HuggingGraph's Hub task types are used.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Literal, get_args

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict

from hugginggraph.graph.context import PlanningAids, StepChooserAid, StepsAid
from hugginggraph.planning.planner import Planner
from hugginggraph.taskbench.predictions import plan_records, saved_replies, score
from hugginggraph.taskbench.records import (
    TaskBenchRecord,
    read_records,
    sample,
    split,
    tool_output_types,
    tool_registry,
)
from hugginggraph.taskbench.report import EvalReport, markdown, plot
from hugginggraph.tools.demo_bank import default_demo_bank
from hugginggraph.tools.folder_digest import file_sha256
from hugginggraph.tools.step_chooser import ChooserWeights
from hugginggraph.tools.tasks import TASKS


class EvalOptions(BaseModel):
    """One evaluation: which records, which aids, where the results go."""

    model_config = ConfigDict(frozen=True)

    data: Path
    out: Path
    part: Literal["all", "test", "tune"] = "all"
    """`test`: the seeded random sample of `test_size` records we report on; `tune`: the other records."""
    test_size: int = 200
    sample: int | None = None
    """A seeded random sample of this many records of the part (None: all of them)."""
    seed: int = 0
    """The seed of `sample` only: another seed draws other tune records, never held-out ones."""
    split_seed: int = 0
    """The seed that picks the test part. Fixed, so that every report is on the same held-out records."""
    limit: int | None = None
    """The first N records (of the sample): for quick looks."""
    tools: Path | None = None
    demos: Literal["none", "static", "retrieved"] = PlanningAids.demos
    demo_count: int = PlanningAids.demo_count
    modalities: bool = PlanningAids.modalities
    constrained: bool = PlanningAids.constrained
    fix_pass: bool = PlanningAids.fix_pass
    steps: StepsAid = PlanningAids.steps
    step_vote: bool = PlanningAids.step_vote
    step_chooser: StepChooserAid = PlanningAids.step_chooser
    back_references: bool = PlanningAids.back_references
    direct_gate: bool = PlanningAids.direct_gate
    chooser_weights: Path | None = None
    """Weights for the step chooser (`hugginggraph train-step-chooser`), e.g. trained without the records planned
    here; None: the shipped ones."""
    repair: bool = True
    """Score validated, repaired plans (what the graph runs) rather than the planner's raw output."""
    replies_from: Path | None = None
    """An earlier evaluation's folder, made with the same controller: a first planning call whose prompt it saved a
    reply to is answered with that reply (greedy decoding would give the same), so changes after the controller's
    first reply are measured in minutes. Plans do not depend on it, so it may differ between resumed runs."""

    @property
    def aids(self) -> PlanningAids:
        """The planning aids as set here; those an evaluation has no option for keep their defaults."""
        return PlanningAids(**{name: getattr(self, name) for name in _AIDS})

    def tool_desc(self) -> Path | None:
        beside = self.data.parent / "tool_desc.json"
        return self.tools or (beside if beside.is_file() else None)


def _part(options: EvalOptions, records: list[TaskBenchRecord]) -> list[TaskBenchRecord]:
    if options.part == "all":
        return records
    test, tune = split(records, options.test_size, options.split_seed)
    return test if options.part == "test" else tune


class EvalMismatch(ValueError):
    """The output folder holds predictions made with other options: resuming would mix two evaluations."""


_AIDS = tuple(aid.name for aid in fields(PlanningAids) if aid.name in EvalOptions.model_fields)
"""The planning aids an evaluation sets. Not replanning: it acts on tasks that ran, and an evaluation runs none."""

_PLANNING_OPTIONS = {"tools", "repair", "chooser_weights", *_AIDS}
"""What a saved prediction depends on (with the model); which records are scored does not matter."""


_OPTIONS_FILE = "options.json"
"""In an evaluation's folder: the model and planning options its predictions were made with."""


def _saved_options(folder: Path) -> dict[str, Any] | None:
    saved = folder / _OPTIONS_FILE
    return json.loads(saved.read_text(encoding="utf-8")) if saved.is_file() else None


def _planning_options(options: EvalOptions, model: str) -> dict[str, Any]:
    """What the predictions depend on, files by their content: the same weights or tools moved or copied elsewhere
    make the same plans."""
    planning = json.loads(options.model_dump_json(include=_PLANNING_OPTIONS))
    files = {"tools": options.tool_desc(), "chooser_weights": options.chooser_weights}
    digests = {name: None if path is None else f"sha256:{file_sha256(path)}" for name, path in files.items()}
    return {"model": model, **planning, **digests}


def _check_resumable(options: EvalOptions, model: str) -> None:
    saved = options.out / _OPTIONS_FILE
    current = _planning_options(options, model)
    if _saved_options(options.out) not in (None, current):
        raise EvalMismatch(f"{options.out} holds predictions made with other options ({saved}): use another --out")
    options.out.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(current, indent=1), encoding="utf-8")


async def evaluate(options: EvalOptions, llm: BaseChatModel, model: str, progress: bool = True) -> EvalReport:
    """Plan every selected record (skipping those already planned in `options.out`), score, write the report."""
    _check_resumable(options, model)
    data = read_records(options.data)
    records = sample(_part(options, data.records), options.sample, options.seed)[: options.limit]
    tool_desc = options.tool_desc()
    tasks = tool_registry(tool_desc) if tool_desc else TASKS
    output_types = tool_output_types(tool_desc) if tool_desc else {t: spec.output for t, spec in TASKS.items()}
    weights = ChooserWeights.read(options.chooser_weights.read_bytes()) if options.chooser_weights else None
    planner = Planner(
        llm, tasks, options.aids, default_demo_bank(), saved_replies=_replies(options, model), chooser_weights=weights
    )
    predictions = await plan_records(planner, records, options.out / "predictions.jsonl", options.repair, progress)
    made = [predictions[record.id] for record in records]
    scores = score(records, predictions, output_types)
    report = EvalReport(
        title=f"TaskBench planning: {options.data.name}",
        model=model,
        records=len(records),
        sample=_describe_sample(options),
        skipped=dict(data.skipped.most_common()),
        aids={name: getattr(options, name) for name in (*_AIDS, "repair")},
        scores={group: counts.as_percent() for group, counts in scores.items()},
        group_sizes={group: counts.records for group, counts in scores.items()},
        parse_failures=sum(prediction.error is not None for prediction in made),
        fixed_plans=sum(prediction.fixed for prediction in made),
        retyped_tasks=sum(prediction.retyped for prediction in made),
        rewired_tasks=sum(prediction.rewired for prediction in made),
        replayed_replies=sum(prediction.replayed for prediction in made),
        seconds_per_request=sum(prediction.seconds for prediction in made) / max(len(made), 1),
        counts={
            group: {"tasks": counts.nodes.as_list(), "links": counts.links.as_list()}
            for group, counts in scores.items()
        },
        missed_tasks=dict(scores["overall"].missed_tasks.most_common()),
        extra_tasks=dict(scores["overall"].extra_tasks.most_common()),
        links_missed_between_planned=scores["overall"].links_missed_between_planned,
    )
    (options.out / "scores.json").write_text(report.model_dump_json(indent=1), encoding="utf-8")
    (options.out / "summary.md").write_text(markdown(report), encoding="utf-8")
    plot(report, options.out / "scores.png")
    return report


def _replies(options: EvalOptions, model: str) -> dict[str, list[Any]]:
    """The first replies saved in `options.replies_from`, refused if another controller made them."""
    if options.replies_from is None:
        return {}
    made_by = (_saved_options(options.replies_from) or {}).get("model")
    if made_by != model:
        raise EvalMismatch(f"{options.replies_from} holds replies of {made_by or 'an unknown controller'}, not {model}")
    return saved_replies(options.replies_from / "predictions.jsonl")


def _describe_sample(options: EvalOptions) -> str:
    words = [str(options.data)]
    if options.part != "all":
        words.append(f"{options.part} part of a {options.test_size}-record split with seed {options.split_seed}")
    if options.sample:
        words.append(f"{options.sample} sampled with seed {options.seed}")
    if options.limit:
        words.append(f"first {options.limit}")
    return ", ".join(words)


def add_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--data", type=Path, required=True, help="TaskBench-format records (JSONL)")
    command.add_argument("--out", type=Path, help="results folder (default: eval-<data name>)")
    command.add_argument(
        "--part", choices=("all", "test", "tune"), default="all", help="test: a seeded held-out sample; tune: the rest"
    )
    command.add_argument("--test-size", type=int, default=200, help="records in the test part (default 200)")
    command.add_argument("--sample", type=int, help="a seeded random sample of N records of the part")
    command.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0); the split keeps its own")
    command.add_argument(
        "--split-seed", type=int, default=0, help="the seed that picks the test part (default 0: the reported one)"
    )
    command.add_argument("--limit", type=int, help="only the first N records (of the sample)")
    command.add_argument("--tools", type=Path, help="the benchmark's tool_desc.json (default: beside --data)")
    command.add_argument(
        "--replies-from",
        type=Path,
        help="an earlier evaluation's folder (same controller): first planning calls it answered are replayed",
    )
    command.add_argument(
        "--demos", choices=("none", "static", "retrieved"), default=PlanningAids.demos, help="few-shot demos to show"
    )
    command.add_argument("--demo-count", type=int, default=PlanningAids.demo_count, help="how many demos")
    command.add_argument(
        "--steps",
        choices=get_args(StepsAid),
        default=PlanningAids.steps,
        help="have the planner say each step in words: inline in each task, or listed first",
    )
    command.add_argument("--chooser-weights", type=Path, help="the step chooser's weights (default: the shipped ones)")
    command.add_argument(
        "--step-chooser",
        choices=get_args(StepChooserAid),
        default=PlanningAids.step_chooser,
        help="what judges each step's task type for the vote: the trained chooser or the demo bank's neighbours",
    )
    for flag, about in [
        ("--no-modalities", "list task types without their input and output kinds"),
        ("--no-constrained", "let the output schema take any task name"),
        ("--no-fix-pass", "never ask for a second plan"),
        ("--no-step-vote", "keep the task types the controller names, whatever their steps say"),
        ("--no-back-references", 'keep literal text that stands for an earlier result ("the summary")'),
        ("--no-direct-gate", "plan every request, even one that looks like it needs no model"),
        ("--no-repair", "score the planner's raw plans, not the validated and repaired ones"),
    ]:
        command.add_argument(flag, dest=flag[5:].replace("-", "_"), action="store_false", help=about)


def run_command(args: argparse.Namespace, llm: BaseChatModel, model: str) -> int:
    options = EvalOptions(
        data=args.data,
        out=args.out or Path(f"eval-{args.data.stem}"),
        **{key: getattr(args, key) for key in EvalOptions.model_fields if key not in ("data", "out")},
    )
    report = asyncio.run(evaluate(options, llm, model))
    print(markdown(report))
    print(f"results in {options.out}/ (predictions.jsonl, summary.md, scores.json, scores.png)")
    return 0
