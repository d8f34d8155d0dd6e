"""Makespan of uneven DAGs through the real graph, against each DAG's critical path.

LangGraph's super-steps would make every wave wait for its slowest task (1.43x on the first DAG below);
HuggingGraph's executor should finish at the critical path. Prints one line per DAG: the whole run (plan, validate,
select, approve, execute, respond, each step saved before the next) against the critical path; then, from another
run of the DAG, the execution stage's own span against it (tasks that read no earlier output may start while the
plan is written, so it can be shorter) and the milliseconds of every other stage. Last, `makespan_ratio=<worst
whole-run ratio>` (target <= 1.05). Run: python benchmarks/dag_makespan.py
"""

from __future__ import annotations

import asyncio

from harness import critical_path, sleep_plan, stage_seconds, time_plan

DAGS: dict[str, tuple[dict[int, float], dict[int, list[int]]]] = {
    # A(1.0) ‖ B(0.2) → C(0.2) → D(0.2): waves would take 1.0 + 0.2 + 0.2 = 1.4 s.
    "parallel-with-chain": ({0: 1.0, 1: 0.2, 2: 0.2, 3: 0.2}, {2: [1], 3: [2]}),
    # A(0.3) → B(0.8) and A → C(0.1) → E(0.2); B, E → F(0.2).
    "uneven-diamond": ({0: 0.3, 1: 0.8, 2: 0.1, 3: 0.2, 4: 0.2}, {1: [0], 2: [0], 3: [2], 4: [1, 3]}),
    # Six pairs root → child where each wave's slowest task sits on a different pair, then one sink.
    "crossed-pairs": (
        {
            **{i: (0.6 if i == 0 else 0.1) for i in range(6)},
            **{6 + i: (0.6 if i == 1 else 0.1) for i in range(6)},
            12: 0.1,
        },
        {**{6 + i: [i] for i in range(6)}, 12: list(range(6, 12))},
    ),
}


OTHER_STAGES = ("plan", "validate", "select", "approve", "respond")
"""The graph's stages besides execution (the tasks stream also names each task inside it)."""


async def main() -> None:
    worst = 0.0
    for name, (durations, deps) in DAGS.items():
        ideal = critical_path(durations, deps)
        makespan = min([await time_plan(sleep_plan(durations, deps)) for _ in range(3)])
        ratio = makespan / ideal
        worst = max(worst, ratio)
        print(f"{name}: tasks={len(durations)} critical_path={ideal:.2f}s makespan={makespan:.3f}s ratio={ratio:.3f}")
        stages = await stage_seconds(sleep_plan(durations, deps))
        others = " ".join(f"{name}={seconds * 1000:.0f}ms" for name, seconds in stages.items() if name in OTHER_STAGES)
        print(f"    execute={stages['execute']:.3f}s ratio={stages['execute'] / ideal:.3f}; {others}")
    print(f"makespan_ratio={worst:.3f}")


if __name__ == "__main__":
    asyncio.run(main())
