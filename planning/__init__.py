"""Planning: the plan as data and the planner that writes it. The plan's checks and references, the planner's
prompt and schema, and its aids (demos, the direct gate, the step vote, back references, task options, the fix
pass, the replacement after failures). It knows the graph's types and the tools, and no stage."""
