"""Shared fixtures. If the compiled core is missing, the pure-Python layers are
tested against ``_fake_core`` and every test marked ``core`` is skipped."""

from __future__ import annotations

import signal
import sys

import pytest
from hypothesis import settings

import _fake_core

# No example database: nothing written into the repository, runs repeatable.
settings.register_profile("nicsim", database=None, derandomize=True)
settings.load_profile("nicsim")

# A background job of a non-interactive shell starts with SIGINT ignored, and
# so would every command the tests start, which the interrupt tests stop with
# SIGINT as a terminal's Ctrl-C would: give them the default disposition.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

try:
    import nicsim._core  # noqa: F401

    REAL_CORE = True
except ImportError:
    REAL_CORE = False
    sys.modules["nicsim._core"] = _fake_core  # type: ignore[assignment]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if REAL_CORE:
        return
    skip = pytest.mark.skip(reason="nicsim._core not built (run `maturin develop --release`)")
    for item in items:
        if "core" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def fake_run() -> object:
    """The fake core's ``run`` (a module-level function, so it pickles)."""
    return _fake_core.run
