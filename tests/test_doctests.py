"""Run the numpydoc examples of every module (the core-backed ones need the core)."""

from __future__ import annotations

import doctest
import importlib

import pytest

from conftest import REAL_CORE

PURE = [
    "nicsim.scenario",
    "nicsim.keys",
    "nicsim.studies.exp_base",
    "nicsim.studies.experiments",
    "nicsim.runner",
    "nicsim.studies.report",
    "nicsim.studies.seeds",
    "nicsim.store",
    "nicsim.outputs",
    "nicsim.executor",
    "nicsim.bench",
]
NEEDS_CORE = [
    "nicsim",
    "nicsim.capture",
    "nicsim.model",
    "nicsim.policy",
    "nicsim.sweeps",
    "nicsim.cli.replay",
]


@pytest.mark.parametrize("name", PURE + NEEDS_CORE)
def test_doctests(name: str) -> None:
    if name in NEEDS_CORE and not REAL_CORE:
        pytest.skip("nicsim._core not built")
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
