"""Bad input: one line naming the thing, before any work where it can be known
before, and nothing left half-done.

Limits and keys in messages.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import nicsim
from nicsim._core import NicsimError

# -- limits and keys in messages -----------------------------------------------


@pytest.mark.core
@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"workload": {"kind": "stream", "size_bytes": "big"}},
         'invalid value for `workload.size_bytes`: "big" (allowed: an integer 0 ..= 1073741824)'),
        ({"workload": {"kind": "stream", "size_bytes": 2**40}},
         "invalid value for `workload.size_bytes`: 1099511627776 (allowed: an integer "
         "0 ..= 1073741824)"),
        ({"workload": {"kind": "pingpong"}, "platform": {"topology": {"hosts": -2}}},
         "invalid value for `platform.topology.hosts`: -2 (allowed: an integer 2 ..= 1024)"),
        ({"workload": {"kind": "pingpong"}, "platform": {"topology": {"hosts": 1}}},
         "invalid value for `platform.topology.hosts`: 1 (allowed: an integer 2 ..= 1024)"),
        ({"workload": {"kind": "exchange", "procs_per_host": 256},
          "platform": {"topology": {"hosts": 1024, "sockets": 16, "dies_per_socket": 1,
                                    "cores_per_die": 16}}},
         "invalid value for `workload.procs_per_host`: 256 (allowed: at most 63 with "
         "platform.topology.hosts = 1024: a run has at most 65535 ranks)"),
        ({"workload": {"kind": "uniband", "window": -1}},
         "invalid value for `workload.window`: -1 (allowed: an integer 1 ..= 65536)"),
        ({"preset": "lci2000", "workload": {"kind": "stream"}, "platform": {"grid": {"x": "two"}}},
         'invalid value for `platform.grid.x`: "two" (allowed: an integer 1 ..= 64)'),
    ],
)  # fmt: skip
def test_messages_give_the_real_limits_and_keys_as_written(
    overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(NicsimError) as err:
        nicsim.run(overrides)
    assert str(err.value) == message


@pytest.mark.core
def test_a_key_of_a_preset_file_is_named_as_the_file_names_it(tmp_path: Path) -> None:
    preset = tmp_path / "mine.toml"
    preset.write_text(nicsim.preset_toml("omx2009").replace("hosts = 2", "hosts = 1"))
    with pytest.raises(NicsimError) as err:
        nicsim.run({"preset": str(preset), "workload": {"kind": "pingpong"}})
    assert str(err.value) == (
        f'preset file "{preset}": invalid value for `topology.hosts`: 1 '
        "(allowed: an integer 2 ..= 1024)"
    )
