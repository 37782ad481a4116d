"""``scripts/setup.sh``, the README's first command: one line per step, the tools' chatter logged.

The script runs in a copy of the repository layout whose ``.venv`` holds
stand-ins for ``python`` (pip) and ``maturin`` that talk as the real ones
do on a machine already set up (a hundred "Requirement already
satisfied" lines), so the test takes well under a second and touches no
real environment.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHATTER = "\n".join(f"Requirement already satisfied: package{i}" for i in range(100))


def stand_in(path: Path, status: int, last: str = "") -> None:
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{CHATTER}\n{last}\nEOF\nexit {status}\n")
    path.chmod(0o755)


def layout(tmp_path: Path, maturin_status: int) -> Path:
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    stand_in(bin_dir / "python", 0)
    stand_in(bin_dir / "maturin", maturin_status, "error: could not compile `nicsim`")
    return tmp_path / "scripts" / "setup.sh"


@pytest.mark.skipif(shutil.which("cc") is None, reason="setup.sh needs a C compiler")
def test_setup_prints_its_steps_and_logs_what_pip_and_maturin_say(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(layout(tmp_path, 0))], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(line.startswith("setup: ") for line in lines), done.stdout
    assert len(lines) <= 3 and done.stderr == ""
    log = (tmp_path / ".venv" / "setup.log").read_text()
    assert log.count("Requirement already satisfied") == 300  # pip twice, maturin once


@pytest.mark.skipif(shutil.which("cc") is None, reason="setup.sh needs a C compiler")
def test_a_failed_setup_step_shows_its_log(tmp_path: Path) -> None:
    done = subprocess.run(
        ["bash", str(layout(tmp_path, 1))], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "error: could not compile `nicsim`" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("setup: failed: ")
    assert "Requirement already satisfied" not in done.stdout
