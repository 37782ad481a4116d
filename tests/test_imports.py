"""No import circle between nicsim's modules, the library below its CLI and studies, and
each module importing alone in a fresh interpreter.

The import graph is read from the source with :mod:`ast`. Its nodes are the
modules of ``python/nicsim`` and its subpackages (a package is its
``__init__``; ``nicsim._core`` is the compiled extension, described by
``_core.pyi``). Every ``import`` statement of a file is an edge, wherever it
is written:

* at module level;
* inside a function (a lazy import): it defers the import, it does not
  remove the need. Two modules that import each other lazily still need each
  other to work, and hoisting either import turns the pair into a crash at
  import time;
* under ``if TYPE_CHECKING:``: mypy reads both modules as one to check
  either, and the annotation names a type the other module owns.

``from nicsim.x import y`` is an edge to ``nicsim.x.y`` when that is a
module, else to ``nicsim.x``. Not an edge: the import of a module's parent
packages that Python makes before it (``nicsim.cli.run`` runs
``nicsim/cli/__init__.py`` first). Counting it would put every package that
imports one of its submodules in a circle with it, though neither names
anything of the other's.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from conftest import REAL_CORE

SOURCE = Path(__file__).resolve().parents[1] / "python"
PACKAGE = SOURCE / "nicsim"


def _name(path: Path) -> str:
    """The dotted module name of a file under ``python/``."""
    parts = list(path.relative_to(SOURCE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


FILES = {
    _name(path): path
    for path in sorted(PACKAGE.rglob("*.py"))
    if path.stem != "__main__" and "__pycache__" not in path.parts
}
MODULES = sorted(FILES)
KNOWN = set(MODULES) | {_name(path) for path in PACKAGE.rglob("*.pyi")}
#: The packages above the library: it may load them only inside a function.
ABOVE_LIBRARY = ("nicsim.cli", "nicsim.studies")


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module a ``from ... import`` statement reads from."""
    if not node.level:
        return str(node.module)
    package = module if FILES[module].stem == "__init__" else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def _when_imported(node: ast.AST) -> Iterator[ast.AST]:
    """The statements that run when the module is imported: not those in a
    function, nor those under ``if TYPE_CHECKING:``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for stmt in child.orelse:
                yield stmt
                yield from _when_imported(stmt)
            continue
        yield child
        yield from _when_imported(child)


def _imports(module: str, top_level_only: bool = False) -> set[str]:
    """The nicsim modules a module imports (see the module docstring for what counts)."""
    tree = ast.parse(FILES[module].read_text(encoding="utf-8"))
    nodes = list(_when_imported(tree)) if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("nicsim")}
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(module, node)
            if not source.startswith("nicsim"):
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                found.add(sub if sub in KNOWN else source)
    return found - {module}


def _graph() -> dict[str, set[str]]:
    return {module: _imports(module) for module in MODULES}


def test_the_graph_reads_every_kind_of_import() -> None:
    graph = _graph()
    assert graph["nicsim.studies.experiments"] >= {
        "nicsim.studies.exp_coal",
        "nicsim.studies.exp_lci",
    }
    # Inside a function: nicsim.run_experiment loads the experiments when called.
    assert "nicsim.studies.experiments" in graph["nicsim"]
    # Under TYPE_CHECKING: the runner names the experiments' types.
    assert "nicsim.studies.experiments" in graph["nicsim.runner"]
    # `from nicsim import _core` is the compiled module, not the package.
    assert "nicsim._core" in graph["nicsim.scenario"]
    assert "nicsim" not in graph["nicsim.scenario"]


def test_the_import_graph_has_no_circle() -> None:
    try:
        tuple(TopologicalSorter(_graph()).static_order())
    except CycleError as err:
        pytest.fail(f"import circle: {' -> '.join(err.args[1])}")


def test_a_circle_would_be_found() -> None:
    with pytest.raises(CycleError):
        tuple(TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())


def test_the_library_loads_its_cli_and_studies_only_when_called() -> None:
    """The library (the modules of ``nicsim`` itself) is below the CLI and the
    studies: importing it never imports them, only a call that needs one does."""
    library = [m for m in MODULES if not m.startswith(ABOVE_LIBRARY)]
    assert "nicsim.runner" in library
    assert "nicsim.cli" not in library
    above = {
        module: sorted(
            m for m in _imports(module, top_level_only=True) if m.startswith(ABOVE_LIBRARY)
        )
        for module in library
    }
    assert not {m: found for m, found in above.items() if found}
    # The studies do not use the command line either.
    studies = [m for m in MODULES if m.startswith("nicsim.studies")]
    assert not {m for m in studies if any(i.startswith("nicsim.cli") for i in _imports(m))}


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
