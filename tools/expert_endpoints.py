"""Inference servers an operator runs for some task types (TGI, TEI, vLLM, Inference Endpoints), configured by
`Settings.endpoints`, and the catalog that offers them.

A deployment puts its heavy experts on GPU servers and the graph on CPU workers; the operator's choice is the first
candidate of each task it names, ahead of everything on this machine, and the executor falls back to the next
candidate when the server fails. A server that does not answer a short probe is left out of the candidates until it
answers again, so a run on a machine whose server is down plans with what it has instead of waiting for retries.

The calls go through huggingface_hub, which refuses every request, to a server of one's own too, under
`HF_HUB_OFFLINE=1`: then no server is offered (a deployment keeps the Hub out with `HUGGINGGRAPH_HUB=false`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

import httpx2
from huggingface_hub.utils import get_session
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.hub_catalog import offline_by_environment, within_seconds
from hugginggraph.tools.runners.endpoint_tasks import PROTOCOL_TASKS, EndpointProtocol

ENDPOINT_SOURCE = "endpoint"
"""The `source` of a configured server's cards: the selection takes the first of them without asking the controller."""
ENDPOINT_LIBRARY = "inference-endpoint"
"""The `library` of a configured server's cards, which no local runner claims."""
PROBE_TIMEOUT_S = 2.0
"""A server on the same network answers in milliseconds; one that takes seconds is not one to send work to."""
PROBE_TTL_S = 30.0
"""How long a probe's answer stands: a server that restarts is seen again within this, without a probe per task."""


class ExpertEndpoint(BaseModel):
    """One inference server and the task types it serves (a `[[endpoints]]` table of the config file, or one
    object of `HUGGINGGRAPH_ENDPOINTS`' JSON list)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    """Where it listens: TGI's, TEI's or an Inference Endpoint's URL for `hf`; vLLM's, llama.cpp's or Ollama's base
    URL (with or without `/v1`) for `openai`."""
    tasks: tuple[str, ...] = Field(min_length=1)
    """The Hub task ids it serves (`text-generation`, `feature-extraction`, ...)."""
    model: str | None = None
    """The name it is listed and chosen by (the served model's id, say); for `openai`, the model name each request
    carries, which vLLM and Ollama check. Default: the URL's host and port."""
    protocol: EndpointProtocol = "hf"
    """`hf`: Hugging Face's inference API (TGI, TEI, Inference Endpoints); `openai`: OpenAI's chat completions only
    (vLLM, llama.cpp's server, Ollama), for text generation."""
    token: SecretStr | None = None
    """Its bearer token; unset, huggingface_hub's own (`HF_TOKEN`, the saved login) is sent."""

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"an endpoint's url must be an http(s) URL, not {url!r}")
        return url.rstrip("/")

    @model_validator(mode="after")
    def _served(self) -> ExpertEndpoint:
        served = PROTOCOL_TASKS[self.protocol]
        unknown = [task for task in self.tasks if task not in served]
        if unknown:
            raise ValueError(
                f"{self.url} ({self.protocol}) cannot serve {', '.join(unknown)}; "
                f"the {self.protocol} protocol serves {', '.join(sorted(served))}"
            )
        if self.protocol == "openai" and not self.model:
            raise ValueError(f"{self.url}: an openai endpoint needs `model`, the model name its server serves")
        return self

    @property
    def name(self) -> str:
        """The id of its cards."""
        return self.model or urlsplit(self.url).netloc

    def card(self, task: str) -> CatalogEntry:
        return CatalogEntry(
            id=self.name,
            task=task,
            description=f"{self.protocol} inference server at {self.url}",
            library=ENDPOINT_LIBRARY,
            source=ENDPOINT_SOURCE,
        )


def server_answers(url: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool:
    """Whether a server listens at `url`: any answer of `GET {url}/health` below 500 counts (TGI, TEI and vLLM serve
    that route; a 401 or 404 is still a server that is up), a refused connection, a timeout or a 5xx does not."""

    def probe() -> httpx2.Response:
        return get_session().get(f"{url}/health", timeout=timeout_s)

    try:
        return within_seconds(timeout_s, probe).status_code < 500
    except (TimeoutError, httpx2.HTTPError):
        return False


class EndpointCatalog:
    """The configured servers as catalog cards: a task's candidates are the servers for it that answered the probe,
    in configuration order. `get` finds a server's card whether or not it answers (the runner then says why a call
    failed)."""

    def __init__(self, endpoints: Sequence[ExpertEndpoint], *, answers: Callable[[str], bool] = server_answers) -> None:
        self.endpoints = list(endpoints)
        self._answers = answers
        self._seen: dict[str, tuple[float, bool]] = {}
        self._lock = threading.Lock()

    def candidates(self, task: str) -> list[CatalogEntry]:
        serving = [endpoint for endpoint in self.endpoints if task in endpoint.tasks]
        return [endpoint.card(task) for endpoint in serving if self.available(endpoint)]

    def get(self, model_id: str) -> CatalogEntry | None:
        endpoint = next((endpoint for endpoint in self.endpoints if endpoint.name == model_id), None)
        return endpoint.card(endpoint.tasks[0]) if endpoint else None

    def available(self, endpoint: ExpertEndpoint) -> bool:
        """Whether `endpoint` answered its last probe, probing again when that is older than `PROBE_TTL_S`; never in
        huggingface_hub's offline mode, which would refuse its calls."""
        if offline_by_environment():
            return False
        with self._lock:
            seen = self._seen.get(endpoint.url)
        if seen is not None and time.monotonic() - seen[0] < PROBE_TTL_S:
            return seen[1]
        answered = self._answers(endpoint.url)
        with self._lock:
            self._seen[endpoint.url] = (time.monotonic(), answered)
        return answered
