"""How the direct-answer gate (planning/direct_gate.py) routes requests: to the answer without a model, or to planning.

Two figures, with the gate as the graph runs it (the project's demo bank and MiniLM):
- on our labelled set (benchmarks/data/direct_gate.json: requests that need no model, and everyday asks over
  images, audio and text that do, written apart from the gate's own labelled requests), how many of each kind are
  routed right;
- on TaskBench's tune part (every request there needs models), how many are sent to the direct answer.

`--sweep` shows how the rule's two numbers were chosen, on tune data only: each labelled request of the gate voted
on by the others (leave one out) and the TaskBench tune part, for a grid of neighbour counts and vote shares. The
labelled set above takes no part in it.

Prints the misrouted requests, then, last,
`direct_gate: no_model_right=<n>/<N> needs_model_right=<n>/<N> tune_sent_direct=<n>/<N> neighbours=<k> share=<s>`.
Run: python benchmarks/direct_gate.py [--taskbench ../shared/taskbench/hf_dev.jsonl] [--sweep]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from harness import ROOT

from hugginggraph.planning.direct_gate import DirectGate, gate_for, vote_shares
from hugginggraph.taskbench.eval_command import EvalOptions
from hugginggraph.taskbench.records import TaskBenchRecord, load_records, split
from hugginggraph.tools.demo_bank import default_demo_bank, names_file, step_words

LABELLED = ROOT / "benchmarks" / "data" / "direct_gate.json"
TASKBENCH = ROOT.parent / "shared" / "taskbench" / "hf_dev.jsonl"


def tune_part(data: Path) -> list[TaskBenchRecord]:
    """The records the evaluator tunes on: all but its held-out test part (same size and seed)."""
    defaults = EvalOptions.model_fields
    _, tune = split(load_records(data), defaults["test_size"].default, defaults["split_seed"].default)
    return tune


def labelled_routing(gate: DirectGate) -> dict[bool, list[tuple[str, bool]]]:
    """needs_model → [(request, routed right)] over the labelled set."""
    routed: dict[bool, list[tuple[str, bool]]] = {False: [], True: []}
    for item in json.loads(LABELLED.read_text(encoding="utf-8")):
        direct = gate.answers_directly(item["request"], item["files"])
        routed[item["needs_model"]].append((item["request"], direct != item["needs_model"]))
    return routed


def sweep(gate: DirectGate, tune: list[TaskBenchRecord]) -> None:
    """Leave-one-out routing of the gate's labelled requests and tune requests sent direct, per rule setting."""
    labelled = gate.labelled()
    assert labelled is not None
    left_out = labelled.vectors @ labelled.vectors.T
    np.fill_diagonal(left_out, -np.inf)  # a request does not vote on itself
    fileless = [record.instruction for record in tune if not (record.files or names_file(record.instruction))]
    asked = np.asarray(labelled.embed([step_words(text) for text in fileless])) @ labelled.vectors.T
    direct = labelled.direct.astype(bool)
    print(f"sweep: {direct.sum()} labelled without a model, {(~direct).sum()} with; {len(tune)} tune requests")
    for neighbours in (5, 7, 9, 11):
        for share in (0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7):
            shares = vote_shares(left_out, labelled.direct, neighbours)
            # Demos naming a file go to planning before any vote, as in the graph.
            said_direct = (shares >= share) & ~np.array([names_file(request) for request in labelled.requests])
            sent = int((vote_shares(asked, labelled.direct, neighbours) >= share).sum())
            print(
                f"  neighbours={neighbours:2d} share={share:.2f}  leave-one-out: no model "
                f"{said_direct[direct].mean():.3f}, needs model {(~said_direct[~direct]).mean():.3f};  "
                f"tune sent direct {sent}/{len(tune)}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--taskbench", type=Path, default=TASKBENCH, help="TaskBench's hf_dev.jsonl")
    parser.add_argument("--sweep", action="store_true", help="also show the tuning grid (tune data only)")
    args = parser.parse_args()

    gate = gate_for(default_demo_bank())
    if gate.labelled() is None:
        raise SystemExit("MiniLM is not installed: run `hugginggraph models install-offline` first")
    tune = tune_part(args.taskbench)
    if args.sweep:
        sweep(gate, tune)

    routed = labelled_routing(gate)
    for needs_model, kind in ((False, "needs no model"), (True, "needs a model")):
        right = sum(ok for _, ok in routed[needs_model])
        print(f"labelled, {kind}: routed right {right}/{len(routed[needs_model])}")
        for request, ok in routed[needs_model]:
            if not ok:
                print(f"  misrouted: {request}")
    sent = [record for record in tune if gate.answers_directly(record.instruction, record.files)]
    print(f"TaskBench tune part: sent to the direct answer {len(sent)}/{len(tune)}")
    for record in sent:
        print(f"  sent direct ({', '.join(node.task for node in record.task_nodes)}): {record.instruction[:110]}")
    print(
        f"direct_gate: no_model_right={sum(ok for _, ok in routed[False])}/{len(routed[False])} "
        f"needs_model_right={sum(ok for _, ok in routed[True])}/{len(routed[True])} "
        f"tune_sent_direct={len(sent)}/{len(tune)} neighbours={gate.neighbours} share={gate.share}"
    )


if __name__ == "__main__":
    main()
