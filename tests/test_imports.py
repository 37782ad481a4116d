"""No import cycles between nicsim's modules, and each imports alone in a fresh interpreter."""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from conftest import REAL_CORE

PACKAGE = Path(__file__).resolve().parents[1] / "python" / "nicsim"
MODULES = sorted(
    "nicsim" if path.stem == "__init__" else f"nicsim.{path.stem}"
    for path in PACKAGE.glob("*.py")
    if path.stem != "__main__"
)


def _imports(path: Path) -> set[str]:
    """The nicsim modules a file imports, anywhere in it (lazy imports count too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("nicsim")}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("nicsim"):
            module = str(node.module)
            for alias in node.names:
                # `from nicsim import runner` imports the module nicsim.runner
                # (`_core` is the compiled extension, described by `_core.pyi`).
                sub = f"{module}.{alias.name}"
                is_module = sub in MODULES or (PACKAGE / f"{alias.name}.pyi").exists()
                found.add(sub if is_module else module)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    graph = {}
    for module in MODULES:
        name = "__init__" if module == "nicsim" else module.removeprefix("nicsim.")
        graph[module] = _imports(PACKAGE / f"{name}.py") - {module}
    assert graph["nicsim.experiments"] >= {"nicsim.exp_coal", "nicsim.exp_lci"}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as err:
        pytest.fail(f"import cycle: {' -> '.join(err.args[1])}")


def test_a_cycle_would_be_found() -> None:
    with pytest.raises(CycleError):
        tuple(TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())


@pytest.mark.skipif(not REAL_CORE, reason="importing nicsim needs the compiled core")
@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(PACKAGE.parent), "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
