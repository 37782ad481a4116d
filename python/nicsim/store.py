"""The results store: finished jobs on disk, so a campaign can resume.

This module owns the key of a job (the canonical hash of its scenario, under
the build of nicsim that ran it) and the store's files: one small JSON file
per finished job, ``<root>/<build>/<key>.json``, each written whole under a
temporary name and renamed into place (POSIX ``rename`` is atomic), so a
killed campaign leaves only complete entries. It does not run jobs
(:mod:`nicsim.executor`) nor decide which jobs a campaign has
(:mod:`nicsim.runner`).

Keys are content hashes, so one store serves every campaign that writes
into the same ``--out``: a job that two experiments share runs once, and a
re-run skips every job already done. The build directory (nicsim version
plus a digest of the compiled core) keeps results of another build from
ever being reused: the version alone does not change between development
builds.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

from nicsim._core import NicsimError
from nicsim.metrics import Metrics
from nicsim.scenario import MAX_FILE_BYTES

__all__ = ["Metrics", "Store", "build_id", "job_key"]

#: Bumped when the meaning of a key or the entry format changes.
KEY_VERSION = "nicsim-job-v1"
#: Suffix of an entry being written; such a file is never read.
TEMP_SUFFIX = ".tmp"


@functools.cache
def build_id() -> str:
    """Return ``<version>-<digest>`` of the compiled core this process runs.

    The digest (12 hex digits of SHA-256) is of the core's shared library, so
    two builds of the same version never share results; Dask workers report
    it too, and a worker of another build is refused (see
    :mod:`nicsim.executor`).
    """
    from nicsim import _core

    digest = hashlib.sha256()
    library = getattr(_core, "__file__", None)
    if library is not None and os.path.isfile(library):
        with open(library, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    else:  # a stand-in core without a file (tests): its version only
        digest.update(_core.version().encode())
    return f"{_core.version()}-{digest.hexdigest()[:12]}"


def job_key(scenario_toml: str) -> str:
    r"""Return the canonical hash of a scenario: 32 hex digits.

    Key order, spacing and comments of the TOML text do not change it; any
    value does. A preset given as a file path contributes the file's bytes,
    so editing the preset file makes new keys.

    Examples
    --------
    >>> a = job_key('seed = 1\n[workload]\nkind = "stream"\nmessages = 5\n')
    >>> b = job_key('seed=1  # same\n[workload]\nmessages = 5\nkind = "stream"\n')
    >>> a == b, a == job_key('seed = 2\n[workload]\nkind = "stream"\nmessages = 5\n')
    (True, False)
    """
    data = tomllib.loads(scenario_toml)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    digest = hashlib.sha256(f"{KEY_VERSION}\0{text}".encode())
    preset = data.get("preset")
    if isinstance(preset, str) and os.path.isfile(preset):
        digest.update(b"\0preset-file\0")
        with open(preset, "rb") as handle:  # bounded: the core refuses a bigger preset
            digest.update(handle.read(MAX_FILE_BYTES + 1))
    return digest.hexdigest()[:32]


class Store:
    r"""Finished jobs under ``root``, one JSON file each.

    Parameters
    ----------
    root
        The store directory (created on the first :meth:`put`).
    fresh
        Ignore entries already there (they are overwritten as jobs finish).

    Examples
    --------
    >>> import tempfile
    >>> store = Store(Path(tempfile.mkdtemp()) / "store", build="0.1.0-test")
    >>> store.get("ab" * 16) is None
    True
    >>> store.put("ab" * 16, "seed = 1\n", {"latency_us": 0.1 + 0.2, "events": 7})
    >>> store.get("ab" * 16)
    {'latency_us': 0.30000000000000004, 'events': 7}
    """

    def __init__(self, root: Path, *, fresh: bool = False, build: str | None = None) -> None:
        self.root = Path(root)
        self.fresh = fresh
        self.dir = self.root / (build or build_id())

    def _path(self, key: str) -> Path:
        return self.dir / f"{key}.json"

    def get(self, key: str) -> Metrics | None:
        """Return the stored metrics of a job, or ``None`` (missing, unreadable or fresh)."""
        if self.fresh:
            return None
        try:
            record = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        metrics = record.get("metrics") if isinstance(record, dict) else None
        if not isinstance(metrics, dict) or record.get("key") != key:
            return None
        reasons = record.get("not_measured", {})
        return Metrics(metrics, reasons if isinstance(reasons, dict) else {})

    def put(self, key: str, scenario_toml: str, metrics: Metrics) -> None:
        """Write one finished job: whole, under a temporary name, then renamed.

        Raises
        ------
        NicsimError
            If the entry cannot be written (a full disk, say), naming it;
            the entries written before stay whole.
        """
        record = {
            "key": key,
            "build": self.dir.name,
            "metrics": metrics,
            "not_measured": getattr(metrics, "not_measured", {}),
            "scenario": scenario_toml,
        }
        final = self._path(key)
        temp = final.with_name(f".{final.name}.{os.getpid()}{TEMP_SUFFIX}")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            # json writes floats as repr(): they read back bit for bit (NaN too).
            temp.write_text(json.dumps(record, indent=1), encoding="utf-8")
            os.replace(temp, final)
        except OSError as err:
            temp.unlink(missing_ok=True)
            raise NicsimError(
                f"cannot write {final}: {err.strerror or err} (the results store {self.root} "
                "keeps the runs finished before it: the same command resumes once it can write)"
            ) from None
        except BaseException:
            temp.unlink(missing_ok=True)
            raise

    def done(self) -> int:
        """Count the complete entries of this build (0 when fresh)."""
        if self.fresh or not self.dir.is_dir():
            return 0
        return sum(1 for path in self.dir.glob("*.json"))

    def remove_temporaries(self) -> None:
        """Delete entries a killed writer left half-written (call under the output lock)."""
        if self.dir.is_dir():
            for path in self.dir.glob(f".*{TEMP_SUFFIX}"):
                path.unlink(missing_ok=True)
