"""Run models remotely with huggingface_hub's `AsyncInferenceClient`: on the Hub's inference providers by model id,
or on the inference servers an operator configured (`ExpertEndpoint`: TGI, TEI, vLLM, Inference Endpoints) by URL.

How each task's inputs and outputs travel is `endpoint_tasks`' job, one table per protocol.

Failures: 429, 5xx and dropped connections are retried by tenacity with exponential backoff (`EndpointRetries`); any
other HTTP error (404: no such model; 400/422: inputs it refuses; 401/403: the token) is final, and so is an attempt
that takes longer than `timeout_s`. All end as an `EndpointError`, a `ModelLoadError`: calling the same model again at
once is pointless, so the executor moves on to its next candidate instead of multiplying these retries by its own.

The token is the endpoint's own, else `token=`, else whatever huggingface_hub finds for each request (`HF_TOKEN`,
then the `hf auth login` token). It goes to the Hub's providers and to the endpoint URLs configured here, and never
into logs or messages.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

import httpx2
from huggingface_hub import AsyncInferenceClient
from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled
from pydantic import BaseModel, ConfigDict, Field, SecretStr
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential

from hugginggraph.tools.artifacts import ArtifactStore
from hugginggraph.tools.catalog import CatalogEntry
from hugginggraph.tools.expert_endpoints import ExpertEndpoint
from hugginggraph.tools.runners.base import ModelLoadError, RunnerOutput
from hugginggraph.tools.runners.endpoint_tasks import HUB_TASKS, PROTOCOL_TASKS
from hugginggraph.tools.runners.model_sources import check_hub_id

logger = logging.getLogger(__name__)


class EndpointError(ModelLoadError):
    """A remote model call failed for good (refused, timed out, or still failing after the retries)."""


class EndpointRetries(BaseModel):
    """How a remote call's transient failures (429, 5xx, dropped connections) are retried, waiting twice as long each
    time. Not LangGraph's `RetryPolicy`, which retries a whole node: these retries stay inside one model call."""

    model_config = ConfigDict(frozen=True)

    max_attempts: int = Field(default=4, ge=1)
    """Calls in all, the first included."""
    base_delay_s: float = Field(default=1.0, ge=0)
    """The wait after the first failure; tests make it tiny."""
    max_delay_s: float = Field(default=20.0, ge=0)
    """The longest wait between two attempts, however many failed before."""

    def wait(self) -> wait_exponential:
        """The wait after attempt n: `base_delay_s` * 2**(n - 1), at most `max_delay_s`."""
        return wait_exponential(multiplier=self.base_delay_s, max=self.max_delay_s)


class InferenceEndpointRunner:
    """Sends cards to remote inference: those of the configured `endpoints` to their server, those whose `source`
    is in `hub_sources` to the Hub's inference providers by model id."""

    def __init__(
        self,
        *,
        endpoints: Sequence[ExpertEndpoint] = (),
        hub_sources: Collection[str] = ("hub",),
        provider: str | None = None,
        token: str | None = None,
        timeout_s: float = 120.0,
        retry: EndpointRetries | None = None,
    ) -> None:
        """
        Args:
            endpoints: the inference servers an operator runs, by the name their cards carry (`ExpertEndpoint.name`).
            hub_sources: card sources to send to the Hub's providers by id; empty to use `endpoints` only.
            provider: the Hub inference provider; None lets huggingface_hub pick (`auto`). Unused for endpoints.
            token: sent as the bearer token where an endpoint has none of its own; None lets huggingface_hub find
                one (`HF_TOKEN`, saved login).
            timeout_s: the longest one attempt may take.
            retry: how transient failures are retried.
        """
        self.endpoints = {endpoint.name: endpoint for endpoint in endpoints}
        self.hub_sources = frozenset(hub_sources)
        self.provider = provider
        self.timeout_s = timeout_s
        self.retry = retry or EndpointRetries()
        self._token = SecretStr(token) if token is not None else None

    def can_run(self, card: CatalogEntry) -> bool:
        endpoint = self.endpoints.get(card.id)
        if endpoint is not None:
            return card.task in endpoint.tasks
        return card.task in HUB_TASKS and card.source in self.hub_sources

    async def run(
        self, card: CatalogEntry, task: str, inputs: dict[str, str], artifacts: ArtifactStore
    ) -> RunnerOutput:
        endpoint = self.endpoints.get(card.id)
        tasks = PROTOCOL_TASKS[endpoint.protocol] if endpoint else HUB_TASKS
        hub_task = tasks.get(task)
        if hub_task is None or (endpoint is not None and task not in endpoint.tasks):
            raise EndpointError(f"{task} is not a task this runner sends to {_name(card, endpoint)}")
        arguments = await asyncio.to_thread(hub_task.arguments, inputs)
        if endpoint is not None and endpoint.protocol == "openai":
            arguments["model"] = endpoint.model  # the served model's name, which vLLM and Ollama check
        token = endpoint.token if endpoint and endpoint.token else self._token
        async with AsyncInferenceClient(
            model=endpoint.url if endpoint else check_hub_id(card.id),  # an id goes into the providers' URLs
            provider=None if endpoint else self.provider,  # type: ignore[arg-type]  # huggingface_hub checks it
            token=token.get_secret_value() if token else None,
        ) as client:
            method = getattr(client, hub_task.method)
            raw = await self._with_retries(_name(card, endpoint), lambda: method(**arguments))
        return await asyncio.to_thread(hub_task.result, raw, artifacts, task=task, inputs=inputs)

    async def _with_retries(self, name: str, call: Callable[[], Awaitable[Any]]) -> Any:
        attempts = self.retry.max_attempts

        def log_retry(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome else None
            reason = _reason(error) if error else "failed"
            logger.warning("%s: %s; retrying (attempt %d of %d)", name, reason, state.attempt_number, attempts)

        retrying = AsyncRetrying(
            stop=stop_after_attempt(attempts),
            wait=self.retry.wait(),
            retry=retry_if_exception(_is_transient),
            before_sleep=log_retry,
            reraise=True,
        )
        try:
            return await retrying(self._attempt, call)
        except TimeoutError as error:
            raise EndpointError(
                f"{name} did not answer within {self.timeout_s:g} s; give slow models a larger timeout_s, "
                "or use another model"
            ) from error
        except OfflineModeIsEnabled as error:
            raise EndpointError(
                f"{name} was not called: HF_HUB_OFFLINE=1 makes huggingface_hub refuse every request, to inference "
                "servers of one's own too; to keep the Hub out instead, set HUGGINGGRAPH_HUB=false"
            ) from error
        except httpx2.HTTPError as error:  # HTTP statuses and transport failures alike
            if not _is_transient(error):
                raise EndpointError(
                    f"{name} failed ({_reason(error)}) and retrying will not help: check the model id, the inputs "
                    "and HF_TOKEN"
                ) from error
            raise EndpointError(
                f"{name} still failing after {attempts} attempts ({_reason(error)}); the service may be "
                "down or overloaded: try later or another model"
            ) from error

    async def _attempt(self, call: Callable[[], Awaitable[Any]]) -> Any:
        """One call, bounded by `timeout_s` (a TimeoutError, which is never retried)."""
        async with asyncio.timeout(self.timeout_s):
            return await call()


def _http_status(error: BaseException) -> int | None:
    """The HTTP status behind `error`; TGI's typed errors (`OverloadedError`, ...) keep it on their cause."""
    for candidate in (error, error.__cause__):
        if isinstance(candidate, HfHubHTTPError):
            return candidate.response.status_code
    return None


def _is_transient(error: BaseException) -> bool:
    """Whether calling again may succeed: a 429, a 5xx or a dropped connection; never a timeout of our own."""
    if not isinstance(error, httpx2.HTTPError):
        return False
    status = _http_status(error)
    if status is not None:
        return status == 429 or status >= 500
    return isinstance(error, httpx2.NetworkError | httpx2.RemoteProtocolError)


def _reason(error: BaseException) -> str:
    status = _http_status(error)
    if status is None:
        return f"{type(error).__name__}: {error}"
    message = error.server_message if isinstance(error, HfHubHTTPError) else str(error)
    return f"HTTP {status}: {message}" if message else f"HTTP {status}"


def _name(card: CatalogEntry, endpoint: ExpertEndpoint | None) -> str:
    return f"{card.id} at {endpoint.url}" if endpoint else card.id
