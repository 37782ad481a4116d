#!/usr/bin/env python3
"""Interleaved CPU-time A/B of builds of the core (docs/performance.md).

    scripts/ab_cpu.py bench KIND N ROUNDS EXT_DIR...
    scripts/ab_cpu.py toml ROUNDS FULL_DIR:SCENARIO.toml...

``bench``: process CPU time (``getrusage``) of ``_core.bench(KIND, N)``
(KIND ``pingpong`` or ``stream``) for each extension directory, a
directory holding ``nicsim/_core.abi3.so`` and an empty
``nicsim/__init__.py``; ``toml``: of ``_core.run`` of a scenario file, for
directories holding a whole ``nicsim`` package (its Python part reads the
metrics). Each round runs every build once, in rotating order, each in a
fresh interpreter; printed are the min and the median over the rounds and
their change against the first build. A build comes from ``maturin build
--release -o DIR`` and its wheel's ``nicsim/_core.abi3.so``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

BENCH = """
import resource, nicsim._core as c
c.bench({kind!r}, 2000)
r0 = resource.getrusage(resource.RUSAGE_SELF)
c.bench({kind!r}, {n})
r1 = resource.getrusage(resource.RUSAGE_SELF)
print((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime))
"""

RUN = """
import resource, sys, nicsim._core as c
text = open(sys.argv[1]).read()
r0 = resource.getrusage(resource.RUSAGE_SELF)
c.run(text, None)
r1 = resource.getrusage(resource.RUSAGE_SELF)
print((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime))
"""


def measure(rounds: int, jobs: list[tuple[str, list[str], str]]) -> None:
    """Run each ``(label, argv, PYTHONPATH)`` once a round, rotating; print the times."""
    times: dict[str, list[float]] = {label: [] for label, _, _ in jobs}
    for r in range(rounds):
        for label, argv, path in jobs[r % len(jobs) :] + jobs[: r % len(jobs)]:
            out = subprocess.run(argv, env={"PYTHONPATH": path}, capture_output=True, text=True)
            if out.returncode:
                sys.exit(f"{label}: {out.stderr.strip().splitlines()[-1]}")
            times[label].append(float(out.stdout))
    base_min, base_med = min(times[jobs[0][0]]), statistics.median(times[jobs[0][0]])
    for label, v in times.items():
        lo, med = min(v), statistics.median(v)
        print(
            f"{label:50} min {lo:.3f} s ({100 * (lo / base_min - 1):+.1f} %)"
            f"  median {med:.3f} s ({100 * (med / base_med - 1):+.1f} %)"
        )


def main(argv: list[str]) -> None:
    """Read the command line (see the module's documentation) and measure."""
    py = sys.executable
    if len(argv) >= 5 and argv[0] == "bench":
        kind, n, rounds = argv[1], int(argv[2]), int(argv[3])
        code = BENCH.format(kind=kind, n=n)
        measure(rounds, [(d, [py, "-c", code], d) for d in argv[4:]])
    elif len(argv) >= 3 and argv[0] == "toml":
        rounds = int(argv[1])
        jobs = []
        for spec in argv[2:]:
            path, _, toml = spec.partition(":")
            jobs.append((spec, [py, "-c", RUN, toml], path))
        measure(rounds, jobs)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
