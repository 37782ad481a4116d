"""Scenario runners for tests that must run inside worker processes.

They are module-level functions (pickled by name), and this module imports
nothing heavy, so a worker that loads it shows what nicsim itself loads.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

#: Modules a lean worker must not load.
HEAVY = ("pandas", "pyarrow", "matplotlib")


def heavy_modules(scenario_toml: str) -> dict[str, float | int | str]:
    """Report which heavy modules this worker process has loaded."""
    return {"heavy": ",".join(m for m in HEAVY if m in sys.modules) or "-", "pid": os.getpid()}


def die_once(scenario_toml: str) -> dict[str, float | int | str]:
    """Kill this worker process the first time (marker file absent), else run the core."""
    marker = Path(os.environ["NICSIM_TEST_MARKER"])
    if not marker.exists():
        marker.touch()
        os._exit(3)
    from nicsim import _core

    return _core.run(scenario_toml)
