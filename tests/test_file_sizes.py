"""No source file over 700 lines: a file is split by what each part owns first.

Every ``.rs`` and ``.py`` file of the repository counts (the core, the
binding, the Python package, the tests, the examples and scripts); build
output, the virtual environment and caches do not. :data:`ALLOWED` names the
files that are being split while issue 45's components are built, each with
why; an entry for a file that is back within the limit (or gone) fails the
test too, so the list only shrinks.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 700
#: Directories that hold no source of the project's own.
SKIP = {".git", ".venv", "target", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"}
#: Files allowed over the limit, each with why (none: every file is within
#: it); an entry for a file within the limit fails the test.
ALLOWED: dict[str, str] = {}


def _sources() -> list[Path]:
    found = []
    for where, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIP]
        found += [Path(where) / f for f in files if f.endswith((".rs", ".py"))]
    return sorted(found)


def _lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def test_no_source_file_is_over_the_limit() -> None:
    sources = _sources()
    names = {path.relative_to(ROOT).as_posix() for path in sources}
    # The walk sees every kind of source the limit is for.
    assert {"crates/nicsim/src/lib.rs", "python/nicsim/__init__.py", "tests/conftest.py"} <= names
    over = {
        path.relative_to(ROOT).as_posix(): _lines(path) for path in sources if _lines(path) > LIMIT
    }
    unexpected = {name: n for name, n in over.items() if name not in ALLOWED}
    assert not unexpected, f"over {LIMIT} lines (split by what each part owns): {unexpected}"
    stale = sorted(set(ALLOWED) - set(over))
    assert not stale, f"ALLOWED names files within {LIMIT} lines (or gone): remove {stale}"


def test_the_count_is_of_lines(tmp_path: Path) -> None:
    path = tmp_path / "x.py"
    path.write_text("a\n" * (LIMIT + 1))
    assert _lines(path) == LIMIT + 1
    path.write_text("a\nb")
    assert _lines(path) == 2
