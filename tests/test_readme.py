"""The README's example outputs are what the commands print.

Each ``console`` block of README.md whose commands start with ``nicsim run``
or ``nicsim replay`` is run as written (in a scratch directory, the terminal
80 columns wide, as the examples were printed) and its output compared with
the block, trailing spaces aside. A block that shows ``  ...`` in place of a
table is compared on the lines after it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.core

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The capture the replay example reads, made as the README says it was.
STREAM_PCAP = (
    "nicsim run --workload stream --size 4096 --set workload.messages=5000 --pcap stream.pcap"
)


def examples() -> list[tuple[str, list[str]]]:
    """(command, the lines shown after it) of every ``$ nicsim run|replay`` example."""
    found = []
    for block in re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
            command, *lines = chunk.rstrip("\n").split("\n")
            if command.startswith(("nicsim run ", "nicsim replay ")):
                found.append((command, [line.rstrip() for line in lines]))
    return found


def nicsim(command: str, cwd: Path) -> list[str]:
    args = shlex.split(command)
    assert args[0] == "nicsim"
    env = {"PYTHONPATH": str(ROOT / "python"), "PATH": "/usr/bin:/bin", "COLUMNS": "80"}
    proc = subprocess.run(
        [sys.executable, "-m", "nicsim", *args[1:]], cwd=cwd, env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [line.rstrip() for line in proc.stdout.rstrip("\n").split("\n")]


EXAMPLES = examples()


def test_the_readme_has_its_examples() -> None:
    commands = [command for command, _ in EXAMPLES]
    assert "nicsim run --workload pingpong --size 0 --coalescing openmx" in commands
    assert sum("--trace " in c for c in commands) == 2
    assert any(c.startswith("nicsim replay --pcap stream.pcap --compare") for c in commands)


@pytest.mark.parametrize(("command", "shown"), EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_a_readme_example_prints_what_the_readme_shows(
    tmp_path: Path, command: str, shown: list[str]
) -> None:
    if "stream.pcap" in command:
        nicsim(STREAM_PCAP, tmp_path)
    printed = nicsim(command, tmp_path)
    if shown[:1] == ["  ..."]:
        shown = shown[1:]
        printed = printed[-len(shown) :]
    assert printed == shown
