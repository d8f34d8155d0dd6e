"""The embedded controller: a LangChain chat model that runs a GGUF file in-process with llama-cpp-python.

It needs no key, no server and no network, so HuggingGraph has a controller on any machine. Small models plan
poorly but must never break the graph, so structured output is grammar-constrained: llama.cpp turns the JSON
schema into a grammar and samples only tokens that keep the reply inside it, and the reply parses by construction.

llama.cpp's default build compiles for the build machine's CPU, and on VMs that fault on AMX it crashes on the
first token. llama-cpp-python 0.3.36 does not expose `use_extra_bufts` (the load-time switch that avoids it), so
the fix is the build (`LLAMA_CPP_BUILD`: portable AVX2, and without OpenMP).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import AsyncIterator, Generator
from contextlib import closing, suppress
from functools import lru_cache
from importlib.util import find_spec
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, convert_to_openai_messages
from langchain_core.messages.ai import UsageMetadata
from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from pydantic import BaseModel, Field

from hugginggraph.tools.llama_cpp.gguf_weights import ControllerNotInstalled, gguf_path
from hugginggraph.tools.llama_cpp.loaded_model import LoadedModel

if TYPE_CHECKING:
    from llama_cpp import LlamaGrammar

LLAMA_CPP_REQUIREMENT = "llama-cpp-python==0.3.36"

LLAMA_CPP_BUILD = 'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_OPENMP=OFF"'
"""How llama-cpp-python is built (PyPI ships only its source). Portable: the native build crashes on VMs that
fault on AMX. Without OpenMP, on ggml's own threads: PyTorch brings its OpenMP runtime (libgomp) into the same
process, llama.cpp's build then shares it, and once PyTorch's worker threads and llama.cpp's together outnumber the
cores, libgomp stops spinning at its barriers and sleeps at each of the hundreds a token takes: decoding ran a
quarter slower beside the expert models and the demo retrieval (docs/speed.md, `benchmarks/llama_settings.py`)."""


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, which containers narrow), at least one."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _usage(usage: dict[str, int]) -> UsageMetadata:
    """llama.cpp's counts as LangChain reports usage; `cache_read` is the prompt's part restored, not evaluated."""
    return {
        "input_tokens": usage["prompt_tokens"],
        "output_tokens": usage["completion_tokens"],
        "total_tokens": usage["total_tokens"],
        "input_token_details": {"cache_read": usage["prompt_tokens_restored"]},
    }


@lru_cache(maxsize=64)
def _grammar(json_schema: str) -> LlamaGrammar:
    """The grammar of a JSON schema (given as JSON text, to be hashable), converted once per schema.

    Converted here rather than through `response_format`, whose handler silently falls back to a grammar of any
    JSON when the conversion fails: a schema the converter cannot handle must fail loudly, not parse loosely.
    """
    from llama_cpp import LlamaGrammar

    return LlamaGrammar.from_json_schema(json_schema, verbose=False)


class LocalLlamaChatModel(BaseChatModel):
    """A GGUF chat model run in this process; greedy by default, so the same request gets the same plan.

    The model loads on the first call, not at construction, so building a context costs nothing when another
    controller serves. Loaded models are kept in `loaded`, one per file and load settings, and shared by every
    instance that asks for the same: each holds hundreds of MB.
    """

    model_path: str
    """The GGUF file; its embedded chat template formats the messages."""
    n_ctx: int = 8192
    """Context window in tokens. The planning prompt (task list and demos) fills a small part of it
    (`benchmarks/controller.py` prints each plan's prompt tokens); the rest leaves room for the chat history the
    planner also sees, at 12-28 KB of memory a token."""
    n_threads: int = Field(default_factory=available_cores)
    """CPU threads for prompt evaluation and decoding: all cores, since calls run one at a time."""
    temperature: float = 0.0
    """0 decodes greedily: deterministic, and what small models plan best with."""
    max_tokens: int = 1024
    """Upper bound on the reply's tokens. A structured reply cut here is incomplete JSON, the one way it can fail
    to parse, so it is set far above the longest plan or model choice measured (`benchmarks/first_run.py` prints
    the tokens each stage decodes)."""
    seed: int = 0
    """Sampling seed, used only when `temperature` > 0."""
    prompt_cache_mb: int = 256
    """Memory for saved prompt states (0: none), about 12 KB a token for the 0.5B and 28 KB for the 1.5B. The
    graph alternates planning, model tasks, answer and chit-chat prompts; a saved state lets the next call restore
    what its prompt shares with an earlier one (the planning prompt's system part, the answer prompt's
    instructions) instead of evaluating it again. Room for the states of a few whole requests (docs/speed.md)."""

    prompt_states_dir: str | None = None
    """Where saved prompt states are kept for the next process (`prompt_states.py`); None: in memory only."""

    loaded: ClassVar[dict[tuple[str, int, int, int, str | None], LoadedModel]] = {}
    """The explicit cache of loaded models, by file and load settings; loading is guarded by `_loading`."""
    _loading: ClassVar[threading.Lock] = threading.Lock()

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def _model(self) -> LoadedModel:
        """The loaded model for these settings, loading it on first use (once, even when called concurrently)."""
        key = self._key()
        with self._loading:
            if key not in self.loaded:
                states_dir = Path(self.prompt_states_dir) if self.prompt_states_dir else None
                self.loaded[key] = LoadedModel.load(
                    key[0], self.n_ctx, self.n_threads, self.prompt_cache_mb, states_dir
                )
            return self.loaded[key]

    def loaded_model(self) -> LoadedModel | None:
        """The model if it is loaded, without loading it or waiting for a load under way: for reading its counters."""
        return self.loaded.get(self._key())

    def _key(self) -> tuple[str, int, int, int, str | None]:
        path = str(Path(self.model_path).resolve())
        return (path, self.n_ctx, self.n_threads, self.prompt_cache_mb, self.prompt_states_dir)

    def load_soon(self) -> None:
        """Start loading the model in a background thread, so that the first call finds it loaded or loading
        (`_model` waits for a load under way): a run's first call comes only after the process has started its
        graph and retrieved the planning demos, which the load then overlaps instead of following, and a resident
        process (the web app) is ready before its first request. A load that fails here fails again on that first
        call, which raises its error."""
        threading.Thread(target=self._load_quietly, name="controller-load", daemon=True).start()

    def _load_quietly(self) -> None:
        with suppress(Exception):
            self._model()

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        json_schema: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """One chat completion; with `json_schema` (bound by `with_structured_output`) the reply is constrained
        to it. Other keyword arguments go to `Llama.create_chat_completion` (`top_p`, `repeat_penalty`, ...)."""
        if json_schema is not None:
            kwargs["grammar"] = _grammar(json.dumps(json_schema))
        completion = self._model().complete(
            messages=convert_to_openai_messages(messages, text_format="string"),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            stop=stop,
            **kwargs,
        )
        choice = completion["choices"][0]
        message = AIMessage(
            choice["message"]["content"] or "",
            response_metadata={"finish_reason": choice["finish_reason"], "model_name": Path(self.model_path).name},
            usage_metadata=_usage(completion["usage"]),
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The blocking call in a worker thread, so the event loop (other graph branches) runs meanwhile."""
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        json_schema: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Generator[ChatGenerationChunk, None, None]:
        """The reply token by token, then its usage; LangChain streams when asked to (`astream`, LangGraph's
        "messages" mode). A structured call (`json_schema`) streams too, its tokens constrained to the schema: the
        planner reads each task of a plan as soon as it is written (dispatch/early_starts.py)."""
        if json_schema is not None:
            kwargs["grammar"] = _grammar(json.dumps(json_schema))
        kwargs.pop("stream", None)  # `invoke(..., stream=True)` passes it on; streaming is what this is
        chunks = self._model().stream(
            messages=convert_to_openai_messages(messages, text_format="string"),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            stop=stop,
            **kwargs,
        )
        with closing(chunks):  # an early exit releases the model
            for chunk in chunks:
                if not chunk["choices"]:
                    yield ChatGenerationChunk(message=AIMessageChunk(content="", usage_metadata=_usage(chunk["usage"])))
                    continue
                choice = chunk["choices"][0]
                text = choice["delta"].get("content") or ""
                finish_reason = choice.get("finish_reason")
                if text or finish_reason:
                    metadata = (
                        {"finish_reason": finish_reason, "model_name": Path(self.model_path).name}
                        if finish_reason
                        else {}
                    )
                    yield ChatGenerationChunk(message=AIMessageChunk(content=text, response_metadata=metadata))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """`_stream` run whole in one worker thread, its chunks handed to the event loop as they come.

        One thread for the whole reply, not one per chunk (LangChain's default): the thread holds the model's lock
        throughout, so callers waiting for it can never take every pool thread from the one that must finish.
        Leaving early (a cancelled run) stops the thread at the next token."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[ChatGenerationChunk | Exception | None] = asyncio.Queue()
        leaving = threading.Event()

        def hand(item: ChatGenerationChunk | Exception | None) -> None:
            with suppress(RuntimeError):  # the loop closed: nobody is waiting any more
                loop.call_soon_threadsafe(queue.put_nowait, item)

        def produce() -> None:
            try:
                with closing(self._stream(messages, stop, None, **kwargs)) as chunks:
                    for chunk in chunks:
                        if leaving.is_set():
                            break
                        hand(chunk)
            except Exception as error:
                hand(error)
            finally:
                hand(None)

        worker = asyncio.ensure_future(asyncio.to_thread(produce))
        try:
            while (item := await queue.get()) is not None:
                if isinstance(item, Exception):
                    raise item
                yield item
            await worker
        finally:
            leaving.set()

    def with_structured_output(
        self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """LangChain's structured-output contract, by grammar instead of tool calling.

        `schema` is a pydantic model (the reply is validated into it) or a JSON schema (the reply is a dict).
        With `include_raw`, the result is {"raw": AIMessage, "parsed": ..., "parsing_error": ...}, and a reply
        that does not parse (only one cut at `max_tokens` can) gives `parsed` None instead of raising.
        `method` and `strict` are accepted and ignored, as by `BaseChatModel`: there is one method, always strict.
        """
        kwargs.pop("method", None)
        kwargs.pop("strict", None)
        if kwargs:
            raise ValueError(f"unsupported arguments {kwargs}")
        parser: JsonOutputParser
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            json_schema = schema.model_json_schema()
            parser = PydanticOutputParser(pydantic_object=schema)
        elif isinstance(schema, dict):
            json_schema, parser = schema, JsonOutputParser()
        else:
            raise TypeError(f"schema must be a pydantic model class or a JSON schema dict, not {schema!r}")
        llm = self.bind(
            json_schema=json_schema,
            ls_structured_output_format={"kwargs": {"method": "json_schema"}, "schema": json_schema},
        )
        if not include_raw:
            return llm | parser
        parse = RunnablePassthrough.assign(parsed=itemgetter("raw") | parser, parsing_error=lambda _: None)
        no_parse = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=llm) | parse.with_fallbacks([no_parse], exception_key="parsing_error")


def local_chat_model(name: str, data_dir: Path | None = None, **options: Any) -> LocalLlamaChatModel:
    """The embedded controller `name` (see `gguf_weights.CONTROLLER_WEIGHTS`), its weights joined on first use.

    `options` set `LocalLlamaChatModel`'s fields (`n_ctx`, `n_threads`, `max_tokens`, ...); prompt states are
    kept for the next process beside the weights' folder unless `prompt_states_dir` says otherwise. Raises
    `ControllerNotInstalled` naming the pip command when llama-cpp-python or the weight packages are missing.
    """
    if find_spec("llama_cpp") is None:
        raise ControllerNotInstalled(
            "the local controller needs llama-cpp-python, which PyPI ships as source only; build it with: "
            f"{LLAMA_CPP_BUILD} pip install '{LLAMA_CPP_REQUIREMENT}' (about 15 minutes; the flags avoid a crash on "
            "CPUs whose AMX the VM does not allow, and a slower decoding beside PyTorch)"
        )
    weights = gguf_path(name, data_dir)
    options.setdefault("prompt_states_dir", str(weights.parent.parent / "prompt-states"))
    return LocalLlamaChatModel(model_path=str(weights), **options)
