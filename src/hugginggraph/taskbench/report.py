"""An evaluation's results as a file people read: a Markdown summary and a bar chart with published scores."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

METRICS = ("n-F1", "e-F1", "t-F1", "v-F1")

PUBLISHED: dict[str, dict[str, float]] = {
    # TaskBench (arXiv 2311.18760), Hugging Face tools domain, overall.
    "GPT-4": {"n-F1": 81.54, "e-F1": 54.70, "t-F1": 77.31, "v-F1": 60.86},
    "GPT-3.5-turbo": {"n-F1": 69.49, "e-F1": 33.36, "t-F1": 55.88, "v-F1": 36.32},
    "best 13B open model": {"n-F1": 53.0, "e-F1": 14.6},
}


class EvalReport(BaseModel):
    """What one evaluation measured."""

    title: str
    model: str
    records: int
    sample: str
    """Which records: the file, the sample size and seed."""
    skipped: dict[str, int] = {}
    """Over the whole file, reason (`records.SkipReason`) → lines left out as malformed: in no part and no score."""
    aids: dict[str, object]
    scores: dict[str, dict[str, float | None]]
    """Group ("overall", "single", "chain", "dag") → metric → percent (None: nothing to score)."""
    group_sizes: dict[str, int]
    parse_failures: int
    fixed_plans: int
    retyped_tasks: int = 0
    """Tasks whose type the step vote changed (`PlanningAids.step_vote`)."""
    rewired_tasks: int = 0
    """Tasks whose literal text was wired to an earlier result (`PlanningAids.back_references`)."""
    replayed_replies: int = 0
    """Records whose first controller reply was replayed from an earlier evaluation (`--replies-from`)."""
    seconds_per_request: float
    counts: dict[str, dict[str, list[int]]] = {}
    """Group → "tasks" and "links" → [right, drawn where the truth has none, in the truth but not drawn]: the
    micro-averaged counts behind n-F1 and e-F1 (task types and links counted once per record)."""
    missed_tasks: dict[str, int] = {}
    """Over all records, task type → records whose truth has it and whose plan does not; most first."""
    extra_tasks: dict[str, int] = {}
    """Over all records, task type → records whose plan has it and whose truth does not; most first."""
    links_missed_between_planned: int = 0
    """Over all records, links the truth has and the plans lack between two task types the plan has."""


_LISTED_TYPES = 8
"""How many of the most missed and most wrongly planned task types the summary names."""


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}"


def markdown(report: EvalReport) -> str:
    lines = [
        f"# {report.title}",
        "",
        f"Controller `{report.model}`, {report.records} records ({report.sample}).",
        _skipped_line(report.skipped),
        f"Planning aids: {', '.join(f'{k}={v}' for k, v in report.aids.items())}.",
        "",
        "| group | records | " + " | ".join(METRICS) + " |",
        "|---|---:|" + "---:|" * len(METRICS),
    ]
    for group, scores in report.scores.items():
        cells = " | ".join(_cell(scores.get(metric)) for metric in METRICS)
        lines.append(f"| {group} | {report.group_sizes.get(group, 0)} | {cells} |")
    for name, published in PUBLISHED.items():
        cells = " | ".join(_cell(published.get(metric)) for metric in METRICS)
        lines.append(f"| *{name} (published)* | | {cells} |")
    failure_rate = 100 * report.parse_failures / report.records if report.records else 0.0
    lines += [
        "",
        f"Parse failures: {report.parse_failures} ({failure_rate:.1f}%), scored as empty plans. "
        f"Plans fixed by a second pass: {report.fixed_plans}. Tasks re-typed by the step vote: {report.retyped_tasks}. "
        f"Tasks wired to an earlier result: {report.rewired_tasks}. "
        f"First replies replayed from an earlier evaluation: {report.replayed_replies}. "
        f"Seconds per request: {report.seconds_per_request:.1f}.",
        "",
        *_differences(report),
    ]
    return "\n".join(lines)


def _skipped_line(skipped: dict[str, int]) -> str:
    """How many malformed lines of the file were left out, and why: said even when none were, so that a reader
    knows the scores cover every record of the file's part."""
    reasons = ", ".join(f"{reason}: {count}" for reason, count in skipped.items())
    return f"Malformed records skipped: {sum(skipped.values())}" + (f" ({reasons})." if reasons else ".")


def _differences(report: EvalReport) -> list[str]:
    """Where the plans differ from the truth: the counts behind n-F1 and e-F1, and the task types missed or planned
    wrongly most often."""
    if not report.counts:
        return []
    lines = [
        "## Where the plans differ from the truth",
        "",
        "Task types and links counted once per record.",
        "",
        "| group | task types in truth | planned | right | links in truth | drawn | right |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for group, counts in report.counts.items():
        (task_tp, task_fp, task_fn), (link_tp, link_fp, link_fn) = counts["tasks"], counts["links"]
        lines.append(
            f"| {group} | {task_tp + task_fn} | {task_tp + task_fp} | {task_tp} "
            f"| {link_tp + link_fn} | {link_tp + link_fp} | {link_tp} |"
        )
    link_fn = report.counts.get("overall", {}).get("links", [0, 0, 0])[2]
    lines += [
        "",
        f"Links the truth has and the plans lack: {link_fn}, of which {report.links_missed_between_planned} join two "
        "task types the plan has (the rest lack a task).",
        f"Task types the truth has and the plans lack, most often: {_most(report.missed_tasks)}.",
        f"Task types the plans name where the truth has none, most often: {_most(report.extra_tasks)}.",
        "",
    ]
    return lines


def _most(counts: dict[str, int]) -> str:
    listed = sorted(counts.items(), key=lambda item: -item[1])[:_LISTED_TYPES]
    return ", ".join(f"{task} ({count})" for task, count in listed) or "none"


def plot(report: EvalReport, path: Path) -> Path:
    """Per-group F1 bars for each metric, with the published overall scores as dashed lines."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on servers and in CI
    import matplotlib.pyplot as plt

    groups = list(report.scores)
    width = 0.8 / len(groups)
    figure, axes = plt.subplots(figsize=(9, 4.5))
    for g, group in enumerate(groups):
        values = [report.scores[group].get(metric) or 0.0 for metric in METRICS]
        positions = [m + (g - (len(groups) - 1) / 2) * width for m in range(len(METRICS))]
        axes.bar(positions, values, width, label=f"{group} ({report.group_sizes.get(group, 0)})")
    styles = {"GPT-4": "k", "GPT-3.5-turbo": "tab:gray", "best 13B open model": "tab:red"}
    for name, scores in PUBLISHED.items():
        for m, metric in enumerate(METRICS):
            if metric in scores:
                label = name if m == 0 else "_nolegend_"
                axes.hlines(scores[metric], m - 0.45, m + 0.45, colors=styles[name], linestyles="--", label=label)
    axes.set_xticks(range(len(METRICS)), METRICS)
    axes.set_ylim(0, 100)
    axes.set_ylabel("F1 (%)")
    axes.set_title(f"{report.title}: {report.model}")
    axes.legend(fontsize="small", ncols=2, loc="upper right")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
