"""Open MPI's ob1 PML over the MX BTL (`library.mpi_path = "btl"`), end to end.

Open MPI 1.2.6 and 1.3.0 take this path over MX by default
(`mca_pml_cm_component_init` backs the cm PML's priority down to 1 for any
MTL but PSM; ob1's is 20). A message within the BTL's eager limit is one MX
message; a larger one waits for ob1's RNDV/PUT exchange before its data
goes, and its receive completes at the FIN (`library/ob1.rs`).
"""

from __future__ import annotations

import pytest

import nicsim

pytestmark = pytest.mark.core


def _latency(path: str, size: int) -> float:
    scenario = {
        "preset": "omx2009",
        "platform": {"library": {"mpi_path": path}},
        "workload": {"kind": "pingpong", "size_bytes": size, "iterations": 20, "warmup": 2},
    }
    latency = nicsim.run(scenario)["latency_us"]
    assert isinstance(latency, float)
    return latency


def test_a_message_above_the_eager_limit_waits_for_the_rndv_and_put_round_trip() -> None:
    # 1.3.0's eager data is 4096 - 72 = 4024 B. Under the 75 us coalescing
    # timer each one-way step costs about one timer: below the limit both
    # paths send one MX message; above it ob1 adds the RNDV and the PUT
    # before the data (the FIN follows the data in the same interrupt).
    below = {path: _latency(path, 4000) for path in ("mtl", "btl")}
    above = {path: _latency(path, 4100) for path in ("mtl", "btl")}
    assert below["btl"] == pytest.approx(below["mtl"], rel=0.02)
    assert above["mtl"] == pytest.approx(below["mtl"], rel=0.05)
    # Two more one-way trips of at least the timer each.
    assert above["btl"] - above["mtl"] >= 2 * 60.0, (below, above)
