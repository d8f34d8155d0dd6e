"""Whether the Hugging Face Hub answers, asked once per process and endpoint.

The Hub is worth listing only when it is there: on a machine without it, every catalog query would wait for its
timeout before the local catalogs answer. So `Settings.hub = "auto"` asks first, with one short request (a
listing of one model, `GET {endpoint}/api/models?limit=1`) bounded by `PROBE_TIMEOUT_S` from the first byte to the
last, name resolution included. The answer is kept for the life of the process: a CLI run, a server or a notebook
probes each endpoint once, and a Hub that comes back later is seen by the next process.

`HF_HUB_OFFLINE` (and `TRANSFORMERS_OFFLINE`), read as huggingface_hub reads them, means unreachable without any
request, at every call: offline mode switched on after a probe still wins.
"""

from __future__ import annotations

import functools

import httpx2
from huggingface_hub.utils import build_hf_headers, get_session

from hugginggraph.tools.hub_catalog import offline_by_environment, within_seconds

PROBE_TIMEOUT_S = 2.0
"""Long enough for the Hub to answer across a continent, short enough that a missing Hub costs a start-up little."""


def hub_reachable(endpoint: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether the Hub at `endpoint` answered the probe; False at once, without a request, in offline mode."""
    if offline_by_environment():
        return False
    return _answers(endpoint.rstrip("/"), timeout_s)


@functools.cache
def _answers(endpoint: str, timeout_s: float) -> bool:
    """One probe per endpoint and process (see the module docstring). Only the Hub's own answer counts, a JSON list
    of models: a proxy or a captive portal answering for a Hub it cannot reach (a sandbox's 404, a login page) does
    not. The request carries the token huggingface_hub would send, so a mirror that wants one answers too."""

    def probe() -> httpx2.Response:
        url = f"{endpoint}/api/models"
        return get_session().get(url, params={"limit": 1}, headers=build_hf_headers(), timeout=timeout_s)

    try:
        # The whole call under one clock: httpx's timeouts do not cover name resolution, which can hang far longer.
        response = within_seconds(timeout_s, probe)
        return response.status_code == 200 and isinstance(response.json(), list)
    except (TimeoutError, httpx2.HTTPError, ValueError):  # ValueError: a body that is not JSON
        return False
