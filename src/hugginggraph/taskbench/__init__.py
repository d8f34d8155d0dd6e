"""TaskBench (arXiv 2311.18760) in HuggingGraph: read its records, plan them with our planner, score the plans
with its metrics, and report. The benchmark's data is never shipped: the evaluator reads files it is given."""
