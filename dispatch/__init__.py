"""Task calls: what starts a planned task's model, shared by the execution stage and the early starts made while
the plan is still being written: resolving its inputs, the concurrency gate and deadline, the call journal, the
chosen model with its retries and fallbacks."""
