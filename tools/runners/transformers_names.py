"""transformers' names, looked up under one lock.

transformers imports its submodules on first attribute access, and that lazy import is not thread-safe: when
threads first reach for its names at once (concurrent runs loading models, the demo bank's MiniLM), all but one get
`ImportError: cannot import name 'AutoModel' from 'transformers'` (tests/tools/runners/test_transformers_names.py
shows it). Every lazy use of transformers in HuggingGraph goes through `transformers_names`, so those first lookups
take turns.
"""

from __future__ import annotations

import threading
from typing import Any

_lookup = threading.Lock()


def transformers_names(*names: str) -> tuple[Any, ...]:
    """`transformers.<name>` for each name, in order (an AttributeError names one it does not have)."""
    with _lookup:
        import transformers

        return tuple(getattr(transformers, name) for name in names)
