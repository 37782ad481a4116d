"""The installable wheel: ``maturin build --release`` once per session, installed
into a fresh virtual environment (dependencies from PyPI), then ``nicsim`` is
run from that environment's PATH, away from the source tree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import nicsim

pytestmark = [pytest.mark.core, pytest.mark.wheel]

ROOT = Path(__file__).resolve().parents[1]
#: A release build from a cold target directory takes a few minutes on 2 cores.
BUILD_TIMEOUT_S = 1200
INSTALL_TIMEOUT_S = 900


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the wheel, reusing ``target/`` as ``maturin develop`` left it.

    Naming the same interpreter as ``maturin develop`` used (this venv's)
    keeps PyO3's build configuration, so nothing is recompiled after
    ``scripts/setup.sh``.
    """
    maturin = shutil.which("maturin") or str(Path(sys.executable).parent / "maturin")
    dist = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [maturin, "build", "--release", "--interpreter", sys.executable, "--out", str(dist)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=BUILD_TIMEOUT_S,
    )
    (built,) = dist.glob("nicsim-*.whl")
    return built


@pytest.fixture(scope="session")
def venv_bin(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed; its ``bin``."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "install", "--quiet", "--no-compile", str(wheel)],
        check=True,
        capture_output=True,
        timeout=INSTALL_TIMEOUT_S,
    )
    return venv / "bin"


def in_venv(bin_dir: Path, *args: str, cwd: Path) -> str:
    """Run a command found on the venv's PATH, with no trace of the source tree."""
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(cwd)}
    proc = subprocess.run(
        list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_wheel_carries_the_presets_and_the_dask_extra(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        meta = archive.read(metadata).decode()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = archive.read(entry_points).decode()
    assert any(n.startswith("nicsim/_core") and n.endswith(".so") for n in names)
    assert "nicsim/py.typed" in names and "nicsim/executor.py" in names
    # The three layers: the library, the command line, the studies.
    assert {"nicsim/cli/__init__.py", "nicsim/cli/main.py", "nicsim/studies/fit.py"} <= set(names)
    # The mechanisms catalogue, the published numbers and the cross-study
    # prediction are data the report reads.
    studies = "nicsim/studies"
    assert {f"{studies}/mechanisms/{c}.toml" for c in ("coal", "mq", "lci", "emo")} <= set(names)
    assert {f"{studies}/numbers.toml", f"{studies}/cross_study.md"} <= set(names)
    assert "nicsim=nicsim.cli:app" in scripts.replace(" ", "")
    assert "Provides-Extra: dask" in meta
    assert any(
        line.startswith("Requires-Dist: dask[distributed]")
        and line.split(";")[1].replace('"', "'").strip() == "extra == 'dask'"
        for line in meta.splitlines()
    )


def test_installed_wheel_runs_nicsim_from_the_path(venv_bin: Path, tmp_path: Path) -> None:
    where = in_venv(venv_bin, "python", "-c", "import nicsim; print(nicsim.__file__)", cwd=tmp_path)
    assert Path(where.strip()).is_relative_to(venv_bin.parent)  # not the source tree
    listed = in_venv(venv_bin, "nicsim", "presets", "list", cwd=tmp_path).splitlines()
    assert [line.split("\t")[0] for line in listed] == nicsim.presets()
    out = in_venv(
        venv_bin,
        "nicsim",
        "run",
        "--workload",
        "pingpong",
        "--set",
        "workload.iterations=50",
        "--json",
        cwd=tmp_path,
    )
    metrics = json.loads(out)
    assert metrics["latency_us"] > 0
    # The studies' data is read from the installed package.
    read = (
        "from nicsim.studies import validation_mechanisms as m, validation_numbers as n; "
        "print(len(n.load()), len(m.load('coal')))"
    )
    counts = in_venv(venv_bin, "python", "-c", read, cwd=tmp_path).split()
    assert all(int(c) > 0 for c in counts), counts
    # The same scenario gives the same metrics as the source tree's core.
    here = nicsim.run({"workload": {"kind": "pingpong", "iterations": 50}})
    assert metrics == json.loads(json.dumps(here))
