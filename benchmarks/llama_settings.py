"""The embedded controller's raw speed under the llama.cpp settings worth choosing between: threads, batch size and
flash attention. Each setting loads the model afresh, evaluates one prompt of `--prompt-tokens` tokens in one call
(batched, as a prompt is), then decodes `--decode-tokens` tokens one at a time, and prints tokens per second for
both. No sampling and no grammar: this is the model's arithmetic on this machine, the floor under every call.
The last setting is the first again with idle PyTorch threads alive beside it, as the graph's worker threads are
once the demo retrieval and the expert models have run: an OpenMP build of llama.cpp shares PyTorch's OpenMP
runtime, whose threads then outnumber the cores (`LLAMA_CPP_BUILD` in tools/llama_cpp/local_llama.py).

Prints whether this build uses OpenMP, then one line per setting, then what one forward pass costs for 1 to 16
tokens with every row's logits (as verifying a draft asks: tools/llama_cpp/drafts.py), after a 600-token prompt, on
the default setting; run on an idle machine (another busy process stalls llama.cpp's threads).
Run: python benchmarks/llama_settings.py [--model qwen2.5-coder-1.5b]
"""

from __future__ import annotations

import argparse
import subprocess
import threading
import time
from pathlib import Path

import llama_cpp

from hugginggraph.settings import DEFAULT_MODEL
from hugginggraph.tools.llama_cpp.gguf_weights import gguf_path
from hugginggraph.tools.llama_cpp.local_llama import available_cores

TEXT = b"Transcribe memo.wav, summarize the transcript and read the summary aloud. " * 200


def measure(path: str, threads: int, n_batch: int, flash_attn: bool, prompt: int, decode: int) -> tuple[float, float]:
    llama = llama_cpp.Llama(
        model_path=path,
        n_ctx=4096,
        n_batch=n_batch,
        n_ubatch=n_batch,
        n_threads=threads,
        n_threads_batch=threads,
        flash_attn=flash_attn,
        verbose=False,
    )
    tokens = llama.tokenize(TEXT)[:prompt]
    started = time.perf_counter()
    llama.eval(tokens)
    prompt_s = time.perf_counter() - started
    started = time.perf_counter()
    for token in tokens[:decode]:
        llama.eval([token])
    decode_s = time.perf_counter() - started
    return len(tokens) / prompt_s, decode / decode_s


PASS_ROWS = (1, 2, 4, 8, 16)


def pass_milliseconds(path: str, threads: int, prompt: int) -> dict[int, float]:
    """The fastest of three forward passes over `rows` tokens after the prompt, each row's logits asked for."""
    llama = llama_cpp.Llama(model_path=path, n_ctx=4096, n_batch=64, n_threads=threads, verbose=False)
    tokens = llama.tokenize(TEXT)
    llama.eval(tokens[:prompt])
    after = llama.n_tokens
    costs = {}
    for rows in PASS_ROWS:
        times = []
        for _ in range(3):
            llama._ctx.kv_cache_seq_rm(-1, after, -1)
            llama._batch.set_batch(batch=tokens[prompt : prompt + rows], n_past=after, logits_all=True)
            started = time.perf_counter()
            llama._ctx.decode(llama._batch)
            times.append(time.perf_counter() - started)
        costs[rows] = min(times) * 1000
    return costs


PYTORCH_THREADS = 3
"""Idle threads that ran one PyTorch operation on every core: the demo retrieval, the step vote and an expert model
or two, each from a worker thread of the event loop's pool."""


def start_pytorch_threads(count: int) -> None:
    import torch

    def work() -> None:
        torch.ones(4_000_000).exp()  # large enough for PyTorch to split it over its threads
        time.sleep(3600)

    for _ in range(count):
        threading.Thread(target=work, daemon=True).start()
    time.sleep(1)


def openmp_build() -> bool:
    """Whether this llama-cpp-python's CPU backend links OpenMP's runtime (built without GGML_OPENMP=OFF)."""
    library = next((Path(llama_cpp.__file__).parent / "lib").glob("libggml-cpu.so*"))
    return "libgomp" in subprocess.run(["ldd", str(library)], capture_output=True, text=True, check=True).stdout


def report(path: str, setting: tuple[int, int, bool, int], prompt_tokens: int, decode_tokens: int) -> None:
    threads, n_batch, flash_attn, beside = setting
    if beside:
        start_pytorch_threads(beside)
    prompt, decode = measure(path, threads, n_batch, flash_attn, prompt_tokens, decode_tokens)
    print(
        f"threads={threads} n_batch={n_batch} flash_attn={flash_attn} pytorch_threads_beside={beside}"
        f" prompt_tok_s={prompt:.1f} decode_tok_s={decode:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=DEFAULT_MODEL.partition(":")[2], help="an embedded controller's name")
    parser.add_argument("--prompt-tokens", type=int, default=600)
    parser.add_argument("--decode-tokens", type=int, default=30)
    args = parser.parse_args()
    path = str(gguf_path(args.model))
    cores = available_cores()
    print(f"openmp={'yes' if openmp_build() else 'no'}", flush=True)
    settings = [
        (cores, 64, False, 0),
        (cores, 512, False, 0),
        (cores, 64, True, 0),
        (1, 64, False, 0),
    ]
    for setting in settings:
        report(path, setting, args.prompt_tokens, args.decode_tokens)
    costs = pass_milliseconds(path, cores, args.prompt_tokens)
    print("pass_ms " + " ".join(f"rows={rows}:{ms:.0f}" for rows, ms in costs.items()), flush=True)
    report(path, (cores, 64, False, PYTORCH_THREADS), args.prompt_tokens, args.decode_tokens)  # last: threads stay


if __name__ == "__main__":
    main()
