"""`<GENERATED>-k`: how a plan's task names the output of task k, and the spellings planners use instead."""

from __future__ import annotations

import re
from collections.abc import Mapping

MAX_ID_DIGITS = 18
"""Task ids have at most this many digits: every id fits the 64-bit integers checkpoints store, and a longer
number after `<GENERATED>-` is text, not a reference."""
REFERENCE = re.compile(rf"<GENERATED>-([0-9]{{1,{MAX_ID_DIGITS}}})(?![0-9])")
# Other spellings planners use for the same thing (TaskBench writes `<node-k>`).
REFERENCE_VARIANTS = re.compile(r"<(?:GENERATED|generated|node)[->_ ]*(\d+)>?")


def references(args: Mapping[str, str]) -> set[int]:
    """Ids of the tasks whose outputs these arguments name."""
    return {int(k) for value in args.values() for k in REFERENCE.findall(value)}


def canonical_references(value: str) -> str:
    """`value` with every spelling of a reference written as `<GENERATED>-k`."""
    return REFERENCE_VARIANTS.sub(lambda match: f"<GENERATED>-{match.group(1)}", value)
