"""docs/architecture.md matches the code: every module and folder it names exists, and every module of the stages,
dispatch and planning layers is named in its row, so the page cannot fall behind a module added or moved."""

from __future__ import annotations

import configparser
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
FACE = ROOT / "src" / "hugginggraph"
NAMED = re.compile(r"`([\w./]+(?:\.py|\.md|/))`")


def _table_rows() -> dict[str, tuple[Path, set[str]]]:
    """The layer table: layer name → (its folder, the file and folder names its third column gives)."""
    rows = {}
    for line in PAGE.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[1].startswith("`") and not cells[0].startswith("---"):
            folder = cells[1].split("`")[1]
            rows[cells[0]] = (ROOT / folder, set(NAMED.findall(cells[2])))
    return rows


def _exists(name: str) -> bool:
    """A name as the page writes it: from the checkout's root, or from the face's folder."""
    return any((base / name).exists() for base in (ROOT, FACE))


def test_every_path_the_page_names_exists():
    paths = {name for name in NAMED.findall(PAGE) if "/" in name.rstrip("/")}  # bare names: the table's test
    missing = sorted(name for name in paths if not _exists(name))
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def test_the_layer_table_names_files_of_its_own_folder():
    rows = _table_rows()
    assert {"face", "wiring", "stages", "dispatch", "planning", "graph types", "tools", "leaves"} <= rows.keys()
    for layer, (folder, names) in rows.items():
        misplaced = [name for name in names if "/" not in name.rstrip("/") and not _exists(str(folder / name))]
        assert not misplaced, f"the {layer} row names files its folder {folder} lacks: {misplaced}"


@pytest.mark.parametrize("layer", ["stages", "dispatch", "planning"])
def test_every_module_of_a_layer_is_on_the_page(layer: str):
    folder, names = _table_rows()[layer]
    modules = {path.name for path in folder.glob("*.py") if path.name != "__init__.py"}
    assert modules == names, f"docs/architecture.md's {layer} row is not {folder}'s modules: {modules ^ names}"


def test_the_stages_are_the_builders_nodes():
    builder = (ROOT / "graph" / "builder.py").read_text(encoding="utf-8")
    stage_modules = set(re.findall(r"from hugginggraph\.nodes\.(\w+) import", builder))
    assert {f"{module}.py" for module in stage_modules} == _table_rows()["stages"][1]


def test_the_import_contract_has_the_pages_layers_in_order():
    contracts = configparser.ConfigParser()
    contracts.read(ROOT / ".importlinter", encoding="utf-8")
    layers = contracts["importlinter:contract:layers"]["layers"].splitlines()
    firsts = [line.split(":")[0].strip() for line in layers if line.strip()]
    # the first module of each layer, in the order of the page's table
    expected = ["__main__", "graph.builder", "nodes", "dispatch", "planning", "graph.state", "tools", "errors"]
    assert firsts == expected
