"""The command line's exit codes, so a script can tell a request that failed from a setup to fix.

0 done (an answer was written, even if some tasks failed: it says which), 1 the request could not be carried out in
full or the command failed (the message says why: a plan error, a budget in `Limits` that stopped the run, a rejected
plan, no answer to the approval question), 2 bad usage (argparse's own), 3 bad configuration (no model installed,
key missing, unknown model name).
"""

EXIT_FAILED, EXIT_CONFIG = 1, 3
