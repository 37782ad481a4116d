"""The names docs/design.md gives point at the code that has them.

A ``Type::name`` in backticks names a function of ``Type`` (in an ``impl``
or ``trait`` block of the core); a free function named in a row of the map
of ``sim/`` files is defined in that row's file, unless the row says which
file has it (``run_traced`` in ``sim/mod.rs``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "crates" / "nicsim" / "src"
DESIGN = ROOT / "docs" / "design.md"

#: An ``impl`` or ``trait`` block at the top of a file, up to its closing brace.
BLOCK = re.compile(
    r"^(?:pub(?:\([\w:]+\))?\s+)?(?:impl(?:<[^>]*>)?\s+(?:[\w:<>, ']+\s+for\s+)?|trait\s+)"
    r"(?:\w+::)*(\w+)[^{]*\{(.*?)^\}",
    re.M | re.S,
)
FREE_FN = re.compile(r"^(?:pub(?:\([\w:]+\))?\s+)?fn\s+(\w+)", re.M)


def sources() -> dict[str, str]:
    """The core's source files by path under src/, test modules left out."""
    return {
        p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8")
        for p in SRC.rglob("*.rs")
        if p.name != "tests.rs" and "tests" not in p.relative_to(SRC).parts
    }


def test_every_type_function_named_in_the_design_notes_exists() -> None:
    functions: dict[str, set[str]] = {}
    for text in sources().values():
        for block in BLOCK.finditer(text):
            functions.setdefault(block[1], set()).update(re.findall(r"\bfn\s+(\w+)", block[2]))
    named = set(re.findall(r"`([A-Z]\w*)::([a-z_]\w*)`", DESIGN.read_text(encoding="utf-8")))
    missing = sorted(f"{ty}::{name}" for ty, name in named if name not in functions.get(ty, ()))
    assert not missing, f"docs/design.md names functions the core does not have: {missing}"


def test_each_free_function_in_the_map_is_in_the_file_its_row_names() -> None:
    files = sources()
    defined: dict[str, set[str]] = {}
    for path, text in files.items():
        for name in FREE_FN.findall(text):
            defined.setdefault(name, set()).add(path)
    wrong = []
    for line in DESIGN.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\| `([\w/]+\.rs)` \| (.*)", line)
        if row is None:
            continue
        for name in re.finditer(r"`(\w+)`(?:,? in `([\w/]+\.rs)`)?", row[2]):
            file = name[2] or row[1]
            if name[1] in defined and file not in defined[name[1]]:
                wrong.append(f"{name[1]} (row {row[1]}; it is in {sorted(defined[name[1]])})")
    assert not wrong, f"docs/design.md puts functions in the wrong file: {wrong}"
