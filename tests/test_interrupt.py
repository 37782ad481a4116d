"""Interrupting the ``nicsim`` command.

Wherever Ctrl-C lands after the interpreter has started (importing nicsim,
typer and rich; parsing the arguments; building the scenario; in the core;
writing an output; shutting down), the command ends with one
``error: interrupted`` line and status 130, never a traceback, and leaves no
partial output. An interrupted local campaign (a real ``nicsim sweep``
subprocess, by Ctrl-C or SIGKILL) leaves the previous table whole and keeps
what finished, and the same command then simulates only the rest and writes
the same table.
"""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nicsim
from nicsim.scenario import Scenario

pytestmark = pytest.mark.core

ROOT = Path(__file__).resolve().parents[1]
#: 30 distinct runs of ~0.1-0.2 s each on this VM: several seconds on 2 workers.
DELAYS = list(range(0, 150, 5))
FIXED = ["workload.kind=stream", "workload.messages=20000", "workload.size_bytes=8192"]


def sweep_args(out: Path, *extra: str) -> list[str]:
    args = [sys.executable, "-m", "nicsim", "sweep", "--out", str(out), "--jobs", "2"]
    args += ["--axis", "nic.delay_us=" + ",".join(map(str, DELAYS))]
    for item in FIXED:
        args += ["--set", item]
    return [*args, *extra]


def env() -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin"}


def entries(store: Path) -> dict[str, tuple[int, int]]:
    """Store entries by name: (inode, mtime_ns); a rewrite changes both."""
    return {
        p.name: (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in store.glob("*/*.json")
        if not p.name.startswith(".")
    }


#: A copy of the console script that sends itself SIGINT at one point, named
#: by $SIGINT_AT: ``import:MODULE`` (when MODULE starts to load), ``call:F``
#: (when the function at dotted path F is entered), ``exit`` (in atexit, after
#: the command has ended). The script is named ``nicsim`` like the console
#: script, so nicsim sees the process as the command.
LAUNCHER = """\
import atexit, importlib, os, signal, sys

kind, _, name = os.environ["SIGINT_AT"].partition(":")

def sigint():
    os.kill(os.getpid(), signal.SIGINT)

class Finder:
    def find_spec(self, fullname, path=None, target=None):
        if fullname == name:
            sigint()
        return None

if kind == "import":
    sys.meta_path.insert(0, Finder())
from nicsim.cli import app

if kind == "call":
    owner_path, _, attr = name.rpartition(".")
    module_path, _, cls = owner_path.partition(":")
    owner = importlib.import_module(module_path)
    owner = getattr(owner, cls) if cls else owner
    real = getattr(owner, attr)

    def wrapper(*args, **kwargs):
        sigint()
        return real(*args, **kwargs)

    setattr(owner, attr, wrapper)
if kind == "exit":
    atexit.register(sigint)
sys.exit(app())
"""

#: The click that typer parses with (recent typer carries its own copy).
CLICK = "typer._click" if importlib.util.find_spec("typer._click") else "click"
#: (where SIGINT lands, the command): from the first module nicsim imports to
#: writing the output.
POINTS = [
    ("import:nicsim._core", ["presets", "list"]),
    ("import:nicsim.scenario", ["presets", "list"]),
    ("import:typer", ["presets", "list"]),
    # rich is loaded with the first table (a JSON run prints without it).
    ("import:rich.table", ["run", "--size", "64"]),
    ("import:nicsim.cli", ["presets", "list"]),
    (f"call:{CLICK}.core:Parameter.handle_parse_result", ["run", "--size", "64"]),
    ("call:nicsim.scenario:Scenario.set", ["run", "--size", "64"]),
    ("call:nicsim._core.run", ["run", "--size", "64"]),
    ("import:nicsim.outputs", ["presets", "copy", "omx2009", "copy.toml"]),
    ("call:pathlib:Path.write_text", ["presets", "copy", "omx2009", "copy.toml"]),
    ("call:os.replace", ["presets", "copy", "omx2009", "copy.toml"]),
    ("call:rich.console:Console.print", ["run", "--size", "64"]),
]


@pytest.mark.parametrize(("point", "args"), POINTS, ids=[p for p, _ in POINTS])
def test_ctrl_c_anywhere_in_the_command_is_one_line_and_status_130(
    tmp_path: Path, point: str, args: list[str]
) -> None:
    launcher = tmp_path / "bin" / "nicsim"
    launcher.parent.mkdir()
    launcher.write_text(LAUNCHER)
    proc = subprocess.run(
        [sys.executable, str(launcher), *args], env={**env(), "SIGINT_AT": point},
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines() == ["error: interrupted"]
    # No partial output: the copy is written whole or not at all.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]


def test_ctrl_c_while_python_m_nicsim_loads_is_one_line_and_status_130(tmp_path: Path) -> None:
    """``python -m nicsim`` is the command too (a sitecustomize hook sends the signal)."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        "class Finder:\n"
        "    def find_spec(self, fullname, path=None, target=None):\n"
        "        if fullname == 'typer':\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "sys.meta_path.insert(0, Finder())\n"
    )
    paths = {"PYTHONPATH": f"{tmp_path}:{ROOT / 'python'}"}
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", "presets", "list"], env={**env(), **paths},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stderr) == (130, "error: interrupted\n"), proc.stderr


def test_ctrl_c_after_the_command_keeps_its_whole_output(tmp_path: Path) -> None:
    launcher = tmp_path / "nicsim"
    launcher.write_text(LAUNCHER)
    proc = subprocess.run(
        [sys.executable, str(launcher), "presets", "list"], env={**env(), "SIGINT_AT": "exit"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 130 and proc.stderr == "error: interrupted\n"
    # One line a preset, its name first (then its description), all of them.
    assert [line.split("\t")[0] for line in proc.stdout.splitlines()] == nicsim.presets()


def test_a_program_importing_nicsim_keeps_keyboard_interrupt(tmp_path: Path) -> None:
    """Only the command changes Ctrl-C: a script importing nicsim sees KeyboardInterrupt."""
    script = tmp_path / "study.py"
    script.write_text(
        "import os, signal\n"
        "import nicsim.cli\n"
        "try:\n"
        "    os.kill(os.getpid(), signal.SIGINT)\n"
        "    for _ in range(10**6): pass\n"
        "except KeyboardInterrupt:\n"
        "    print('caught')\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script)], env=env(), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "caught\n"), proc.stderr


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The uninterrupted table, computed in this process, written as the CLI writes it."""
    base = Scenario(workload={"kind": "stream", "messages": 20000, "size_bytes": 8192})
    path = tmp_path_factory.mktemp("reference") / "sweep.csv"
    nicsim.sweep(base, {"nic.delay_us": DELAYS}, jobs=2).to_csv(path, index=False)
    return path.read_bytes()


def wait_for(predicate: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL], ids=["SIGINT", "SIGKILL"])
def test_interrupted_campaign_keeps_finished_runs_and_the_rerun_skips_them(
    tmp_path: Path, reference: bytes, signum: signal.Signals
) -> None:
    out = tmp_path / "sweep.csv"
    out.write_text("previous,table\n1,2\n")
    store = tmp_path / ".sweep.csv.nicsim" / "store"
    proc = subprocess.Popen(
        sweep_args(out), env=env(), cwd=tmp_path, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(lambda: len(entries(store)) >= 3, 120, "3 finished runs")
        proc.send_signal(signum)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=60)
        stopped_after = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    kept = entries(store)
    assert 3 <= len(kept) < len(DELAYS), "the interrupt must land mid-campaign"
    # In-flight runs are abandoned, not awaited; after SIGKILL the orphaned
    # pool workers end themselves (until then they hold the output pipes).
    assert stopped_after < 5.0
    if signum == signal.SIGINT:
        assert proc.returncode == 130, err
        lines = err.strip().splitlines()
        assert lines[-1].startswith("error: interrupted;") and "Traceback" not in err, err
        assert f"{len(kept)} finished run(s) kept" in lines[-1], err
    else:
        assert proc.returncode == -signal.SIGKILL
    # The previous table is untouched and no partial file is left beside it.
    assert out.read_text() == "previous,table\n1,2\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".sweep.csv.nicsim", "sweep.csv"]

    again = subprocess.run(
        sweep_args(out), env=env(), cwd=tmp_path, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    if signum == signal.SIGKILL:  # its lock file still names it: a stale lock
        assert f"took over the lock of pid {proc.pid}, gone" in again.stderr
    rest = len(DELAYS) - len(kept)
    assert f"resuming: {len(kept)} of {len(DELAYS)} runs already done" in again.stderr
    assert f"{rest} run(s) simulated, {len(kept)} reused" in again.stderr
    after = entries(store)
    assert len(after) == len(DELAYS)
    assert {name: after[name] for name in kept} == kept  # not one finished run was redone
    assert not list(store.glob("*/.*"))  # no half-written store entry
    assert out.read_bytes() == reference


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_mid_reproduction_removes_the_lock_in_one_line(
    tmp_path: Path, signum: signal.Signals
) -> None:
    out = tmp_path / "out"
    store = out / ".nicsim" / "store"
    args = [sys.executable, "-m", "nicsim", "reproduce", "coalescing-nas", "--quick"]
    proc = subprocess.Popen(
        [*args, "--jobs", "2", "--quiet", "--out", str(out)], env=env(), cwd=tmp_path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        # About 10 s in all on this VM: the signal lands after the first runs.
        wait_for(lambda: len(entries(store)) >= 1, 120, "a finished run")
        assert (out / ".nicsim" / "lock").exists()
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"error: interrupted by {signum.name}; "), err
    assert "finished run(s) kept" in lines[0]
    assert not (out / ".nicsim" / "lock").exists()
    assert sorted(p.name for p in out.iterdir()) == [".nicsim"]  # no partial reproduction
