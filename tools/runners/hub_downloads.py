"""Hub models into the Hugging Face cache before a local runner loads them: only the files a load reads, with
progress bars, and never past a disk budget.

JARVIS users filled their disks: `from_pretrained` on a Hub id fetches what a model needs with no bound and no
warning. So a Hub model is fetched here first, explicitly:
1. `HfApi.model_info(files_metadata=True)`: the repo's files and their sizes, in one request;
2. `files_to_fetch`: the files a transformers or diffusers load reads (configs, tokenizers, processors, and the
   weights as safetensors where a folder has them, else as PyTorch `.bin`) and the model card, not the ONNX,
   TensorFlow, Flax or half-precision copies beside them;
3. the ones not yet in the cache, added to what the cache holds (`scan_cache_dir`), must fit in the budget, else
   `DiskBudgetExceeded` says by how much and what to do, and nothing is written;
4. `snapshot_download` fetches them into the cache with huggingface_hub's progress bars on stderr (in a terminal;
   `HF_HUB_DISABLE_PROGRESS_BARS=1` hides them), and the runner loads the snapshot's folder.

Downloads through one `HubDownloads` run one at a time, so two loads cannot both pass the check on the same free
space. Offline (`HF_HUB_OFFLINE`) nothing can be fetched: the Hub id is handed on unchanged, and transformers finds
the model in the cache or says it is not there.

huggingface_hub is imported at the first download: the settings, read at every start, import this module.
"""

from __future__ import annotations

import math
import posixpath
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugginggraph.tools.runners.base import ModelLoadError

if TYPE_CHECKING:
    from huggingface_hub.hf_api import ModelInfo, RepoSibling

DEFAULT_BUDGET_GB = 20.0
"""Room for a handful of the base-size models a CPU runs, well short of a small disk."""

SUPPORT_FILES = ["*.json", "*.txt", "*.model", "*.spm", "*.tiktoken", "README.md"]
"""Configs, tokenizers, processors and diffusers' pipeline index: vocabularies come as JSON or text (`vocab.txt`,
`merges.txt`), SentencePiece (`*.model`, Marian's `*.spm`) or tiktoken files. No code: remote code is refused. And
the model card, whose task and library the Hugging Face cache's catalog reads (`HFCacheCatalog`) in later runs."""

WEIGHTS = (".safetensors", ".bin")
"""The weights transformers and diffusers load; a folder with safetensors gets no `.bin` (see `files_to_fetch`)."""

VARIANTS = ["*.fp16.*", "*.bf16.*", "*.non_ema.*", "*.ema.*"]
"""Other copies of the weights (half precision, EMA) that a load without `variant=` never reads."""

HUB_TIMEOUT_S = 15.0
"""How long the Hub may take to list a repo's files before the load fails (the download itself has no bound)."""


class DiskBudgetExceeded(ModelLoadError):
    """A download would take the Hugging Face cache past the disk budget; the message says how to make room."""


def files_to_fetch(files: list[RepoSibling]) -> list[RepoSibling]:
    """The files a load reads (see `SUPPORT_FILES`, `WEIGHTS`, `VARIANTS`), safetensors preferred: a folder that
    has them (the root, or a diffusers component such as `unet/`) gets none of its `.bin` files."""
    from huggingface_hub.utils import filter_repo_objects

    weights = [f"*{suffix}" for suffix in WEIGHTS]
    chosen = list(
        filter_repo_objects(
            files, allow_patterns=SUPPORT_FILES + weights, ignore_patterns=VARIANTS, key=lambda file: file.rfilename
        )
    )
    with_safetensors = {_folder(file) for file in chosen if file.rfilename.endswith(".safetensors")}
    return [file for file in chosen if not (file.rfilename.endswith(".bin") and _folder(file) in with_safetensors)]


class HubDownloads:
    """Fetches Hub models into the Hugging Face cache within `budget_gb` (see the module docstring).

    `cache_dir` and `endpoint` default to huggingface_hub's (`HF_HUB_CACHE`, `HF_ENDPOINT`); the budget bounds the
    whole cache, not only what HuggingGraph put there, since it is the disk that fills.
    """

    def __init__(
        self, budget_gb: float = DEFAULT_BUDGET_GB, *, cache_dir: Path | str | None = None, endpoint: str | None = None
    ) -> None:
        self.budget_gb = budget_gb
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        self.endpoint = endpoint
        self._one_at_a_time = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        """Picklable, for runners built in a child process (`SubprocessRunner`); a lock is not, so each gets its own."""
        return {key: value for key, value in vars(self).items() if key != "_one_at_a_time"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._one_at_a_time = threading.Lock()

    def fetch(self, model_id: str) -> str:
        """The cache folder holding what a load of `model_id` reads, downloading what is missing; `model_id` itself
        when offline. Raises `DiskBudgetExceeded`, or `ModelLoadError` when the Hub cannot list or send the files."""
        from hugginggraph.tools.hub_catalog import offline_by_environment

        if offline_by_environment():
            return model_id
        with self._one_at_a_time:
            info = self._model_info(model_id)
            files = files_to_fetch(info.siblings or [])
            if not any(file.rfilename.endswith(WEIGHTS) for file in files):
                raise ModelLoadError(
                    f"could not load {model_id}: the Hub has no weights of it as safetensors or PyTorch .bin files, "
                    "the formats a local load reads"
                )
            self._check_budget(model_id, self._missing_bytes(info, files))
            return self._download(model_id, [file.rfilename for file in files])

    # --- the steps ------------------------------------------------------------------------------------------
    def _model_info(self, model_id: str) -> ModelInfo:
        import httpx2
        from huggingface_hub import HfApi

        api = HfApi(endpoint=self.endpoint, library_name="hugginggraph")
        try:
            return api.model_info(model_id, files_metadata=True, timeout=HUB_TIMEOUT_S)
        except httpx2.HTTPError as error:  # huggingface_hub's own errors (no such repo, gated) among them
            raise ModelLoadError(f"could not list the files of {model_id} on the Hub: {_reason(error)}") from error

    def _missing_bytes(self, info: ModelInfo, files: list[RepoSibling]) -> int:
        """The size of the files not yet in the cache at the revision the Hub described."""
        from huggingface_hub import try_to_load_from_cache

        def cached(file: RepoSibling) -> bool:
            found = try_to_load_from_cache(info.id, file.rfilename, cache_dir=self.cache_dir, revision=info.sha)
            return isinstance(found, str)

        return sum(_size(file) for file in files if not cached(file))

    def _check_budget(self, model_id: str, needed: int) -> None:
        if not needed:
            return
        held = self._cache_bytes()
        budget = int(self.budget_gb * 1e9)
        if held + needed <= budget:
            return
        enough = math.ceil((held + needed) / 1e8) / 10
        raise DiskBudgetExceeded(
            f"not downloading {model_id}: its files need {_text(needed)}, the Hugging Face cache "
            f"({self._cache_path()}) holds {_text(held)}, and together they pass the disk budget of "
            f"{_text(budget)}. Raise the budget (HUGGINGGRAPH_HUB_DISK_BUDGET_GB={enough:g}, or hub_disk_budget_gb "
            "in the config file), or free space: `hf cache ls` lists the cached models, "
            "`hf cache rm model/OWNER/NAME` deletes one."
        )

    def _cache_bytes(self) -> int:
        from huggingface_hub import scan_cache_dir
        from huggingface_hub.errors import CacheNotFound

        try:
            return scan_cache_dir(self.cache_dir).size_on_disk
        except CacheNotFound:
            return 0

    def _cache_path(self) -> Path:
        from huggingface_hub import constants

        return self.cache_dir or Path(constants.HF_HUB_CACHE)

    def _download(self, model_id: str, names: list[str]) -> str:
        import httpx2
        from huggingface_hub import snapshot_download

        try:
            return snapshot_download(
                model_id,
                allow_patterns=names,
                cache_dir=self.cache_dir,
                endpoint=self.endpoint,
                library_name="hugginggraph",
            )
        except (httpx2.HTTPError, OSError) as error:  # OSError: the cache cannot be written, the disk is full
            raise ModelLoadError(f"could not download {model_id}: {_reason(error)}") from error


def _folder(file: RepoSibling) -> str:
    return posixpath.dirname(file.rfilename)


def _size(file: RepoSibling) -> int:
    """The file's own size; for a Git LFS file, the stored file's, not the pointer's."""
    return file.lfs.size if file.lfs is not None else file.size or 0


def _text(size: int) -> str:
    """Bytes in the decimal units the budget is set in: `91.2 MB`, `20.0 GB`."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def _reason(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"
